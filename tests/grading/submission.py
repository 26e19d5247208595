"""Submissions for the nbgrader round trip, built from the reference notebook.

A chapter lists its submissions in ``tests/grading/submissions/<assignment>.py`` as
``SUBMISSIONS = [Submission(...), ...]``.
"""

from __future__ import annotations

import copy
import re
import symtable
from dataclasses import dataclass, field

import nbformat

from tfperf.autograding.cells import imports_only
from tfperf.autograding.screen import defined_names


@dataclass(frozen=True)
class Submission:
    """The reference notebook with some solution cells replaced.

    ``edits`` maps a solution cell's grade_id to its new source. ``expected`` maps a test
    cell's grade_id to the points it must get; unlisted test cells must get full points.

    Tampering with the instructor's cells: ``locked_edits`` maps a locked cell's grade_id
    (a given cell, a test cell) to a new source; ``metadata_edits`` maps a cell's grade_id
    to changes of its nbgrader metadata (``{"grade_id": "mine"}``, ``{"points": 100}``), or
    to None to delete the cell. ``without_notebook`` hands in the assignment's folder with
    no notebook in it. ``hangs``: an answer that never returns, graded as a student of its own with a
    short cell timeout (its other exercises unanswered, so nothing honest in it runs long).

    ``gap``: see the field.

    ``kernel``: an answer aimed at the grading kernel or its sandbox (a hook, a crash, a write, a connection, the
    memory limit), graded with the notebook run in the kernel as for any learner. The other cases are graded
    without a kernel (``GradingExecute.run_kernel = False``): no grade is read from the kernel, so theirs are the
    same either way, and the kernel's start was two thirds of a packed student's time.
    """

    name: str
    edits: dict[str, str] = field(default_factory=dict)
    expected: dict[str, float] = field(default_factory=dict)
    locked_edits: dict[str, str] = field(default_factory=dict)
    metadata_edits: dict[str, dict | None] = field(default_factory=dict)
    without_notebook: bool = False
    hangs: bool = False
    kernel: bool = False
    #: A hole the grader still has, said in words: ``expected`` is what a fair grader gives, which this case does not
    #: get yet (its round-trip test is a strict expected failure, which says when the hole is closed).
    gap: str = ""

    def __post_init__(self) -> None:
        for mapping in ("edits", "expected", "locked_edits", "metadata_edits"):
            if not isinstance(getattr(self, mapping), dict):
                raise TypeError(f"{self.name}: {mapping} is a {type(getattr(self, mapping)).__name__}, not a dict")

    @property
    def touched(self) -> set[str]:
        """grade_ids of every cell this submission changes."""
        return set(self.edits) | set(self.locked_edits) | set(self.metadata_edits)

    @property
    def claims(self) -> set[str]:
        """grade_ids whose score this submission decides: the expected ones and the tampered ones."""
        return set(self.expected) | set(self.locked_edits) | set(self.metadata_edits)

    @property
    def student_id(self) -> str:
        """The name as an nbgrader student id (a folder name): lowercase letters, digits, underscores."""
        return re.sub(r"[^a-z0-9]+", "_", self.name.lower()).strip("_")

    def notebook(self, reference: nbformat.NotebookNode) -> nbformat.NotebookNode | None:
        """The submitted notebook (None: no notebook handed in)."""
        if self.without_notebook:
            return None
        nb = copy.deepcopy(reference)
        ids = {c.metadata.get("nbgrader", {}).get("grade_id"): c for c in nb.cells}
        for grade_id, source in self.edits.items():
            cell = ids.get(grade_id)
            assert cell is not None and cell.metadata["nbgrader"].get("solution"), f"{grade_id} is not a solution cell"
            cell.source = source
        for grade_id, source in self.locked_edits.items():
            cell = ids.get(grade_id)
            assert cell is not None and cell.metadata["nbgrader"].get("locked"), f"{grade_id} is not a locked cell"
            cell.source = source
        for grade_id, changes in self.metadata_edits.items():
            cell = ids.get(grade_id)
            assert cell is not None, f"no cell {grade_id}"
            if changes is None:
                nb.cells.remove(cell)
            else:
                cell.metadata["nbgrader"].update(changes)
        return nb


#: Every packed student's id starts with this: graded without a kernel.
PACKED_PREFIX = "packed__"
#: A packed student of cases aimed at the kernel (``Submission.kernel``): graded with it.
IN_KERNEL_PREFIX = "kernel__"


@dataclass
class PackedSubmission:
    """Several submissions with disjoint edits and expectations, graded as one student.

    Exercises are graded independently, so packing saves one student's grading (a notebook's run where it runs
    in the kernel) per submission packed, and also shows that a wrong answer in one exercise does not cost points in
    another. Cases aimed at the kernel are packed only with each other.
    """

    members: list[Submission]

    @property
    def hangs(self) -> bool:
        return any(m.hangs for m in self.members)

    @property
    def kernel(self) -> bool:
        return any(m.kernel for m in self.members)

    @property
    def student_id(self) -> str:
        """``packed__`` (``kernel__`` where it is graded in the kernel), then its members' ids: one glob
        (``packed__*``) grades every packed student of one kind."""
        return ((IN_KERNEL_PREFIX if self.kernel else PACKED_PREFIX) + "__".join(m.student_id for m in self.members))[
            :120
        ]

    def edits(self) -> dict[str, str]:
        return {k: v for m in self.members for k, v in m.edits.items()}

    def expected(self) -> dict[str, float]:
        return {k: v for m in self.members for k, v in m.expected.items()}

    def unanswered(self, reference: nbformat.NotebookNode) -> set[str]:
        """grade_ids of the solution cells that no member's cells need: the packed student hands them in
        unanswered (the released stub), so their checks fail at once instead of timing the reference again.
        That also shows that no member's answer gains points in another exercise."""
        cells = [c for c in reference.cells if c.cell_type == "code"]
        grade_id = [c.metadata.get("nbgrader", {}).get("grade_id") for c in cells]
        mine = set().union(*(m.touched | m.claims for m in self.members))
        needed = needed_cells(cells, {i for i, g in enumerate(grade_id) if g in mine})
        return {
            g
            for i, (c, g) in enumerate(zip(cells, grade_id))
            if c.metadata.get("nbgrader", {}).get("solution") and i not in needed
        }

    def scoring_zero(self, reference: nbformat.NotebookNode) -> set[str]:
        """grade_ids of the test cells that need an unanswered solution cell (they must score 0)."""
        unanswered = self.unanswered(reference)
        cells = [c for c in reference.cells if c.cell_type == "code"]
        grade_id = [c.metadata.get("nbgrader", {}).get("grade_id") for c in cells]
        return {
            grade_id[i]
            for i, c in enumerate(cells)
            if c.metadata.get("nbgrader", {}).get("grade")
            and {grade_id[j] for j in needed_cells(cells, {i})} & unanswered
        }

    def notebook(
        self, reference: nbformat.NotebookNode, released: nbformat.NotebookNode
    ) -> nbformat.NotebookNode | None:
        stubs = {
            c.metadata["nbgrader"]["grade_id"]: c.source
            for c in released.cells
            if c.metadata.get("nbgrader", {}).get("solution")
        }
        unanswered = {g: stubs[g] for g in self.unanswered(reference)}
        merged = Submission(
            self.student_id,
            self.edits() | unanswered,
            locked_edits={k: v for m in self.members for k, v in m.locked_edits.items()},
            metadata_edits={k: v for m in self.members for k, v in m.metadata_edits.items()},
            without_notebook=any(m.without_notebook for m in self.members),
        )
        nb = merged.notebook(reference)
        return None if nb is None else without_demonstrations(nb)

    def accepts(self, candidate: Submission) -> bool:
        """Whether ``candidate`` changes other cells, and decides other scores, than the members."""
        if any(m.without_notebook or m.hangs for m in [candidate, *self.members]) or candidate.kernel != self.kernel:
            return False
        touched = set().union(*(m.touched for m in self.members))
        claims = set().union(*(m.claims for m in self.members))
        return not (candidate.touched & touched or candidate.claims & claims)


def used_names(source: str) -> set[str]:
    """The module-level names a cell reads (a function's own locals are not: ``symtable`` scopes them)."""
    try:
        top = symtable.symtable(source, "<cell>", "exec")
    except SyntaxError:
        return set()
    names, tables = set(), [top]
    while tables:
        table = tables.pop()
        names |= {s.get_name() for s in table.get_symbols() if s.is_referenced() and (table is top or s.is_global())}
        tables += table.get_children()
    return names


def needed_cells(cells: list[nbformat.NotebookNode], roots: set[int]) -> set[int]:
    """Indices of ``roots`` and of every earlier cell they need, transitively: a cell needs the latest
    earlier cell that defines a name it reads (how a notebook run top to bottom resolves it)."""
    latest: dict[str, int] = {}
    needs: dict[int, set[int]] = {}
    for i, cell in enumerate(cells):
        needs[i] = {latest[name] for name in used_names(cell.source) if name in latest}
        for name in defined_names(cell.source):
            latest[name] = i
    found, todo = set(), list(roots)
    while todo:
        i = todo.pop()
        if i not in found:
            found.add(i)
            todo += needs[i]
    return found


def without_demonstrations(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """``nb`` with its demonstration cells (code cells that nbgrader does not track) cut down to their
    import statements: what the graded cells need from them. A learner may delete or change these
    cells too; the reference and the untouched student version are graded whole, the corpus without
    them, which makes each packed student a third to half cheaper to grade."""
    for cell in nb.cells:
        if cell.cell_type == "code" and not cell.metadata.get("nbgrader"):
            cell.source = imports_only(cell.source)
            cell.outputs = []
    return nb


def pack(submissions: list[Submission]) -> list[PackedSubmission]:
    """Greedily pack submissions that touch different exercises into as few students as possible."""
    packs: list[PackedSubmission] = []
    for submission in submissions:
        home = next((p for p in packs if p.accepts(submission)), None)
        if home is None:
            packs.append(PackedSubmission([submission]))
        else:
            home.members.append(submission)
    return packs


def reference_source(assignment: str, grade_id: str) -> str:
    """The reference answer of a solution cell (the code between its solution markers), for cases that change it
    in one place."""
    from tests.conftest import REPO

    (path,) = (REPO / "solutions" / assignment).glob("*.ipynb")
    cell = next(
        c for c in nbformat.read(path, as_version=4).cells if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id
    )
    match = re.search(r"^### BEGIN SOLUTION\n(.*?)^### END SOLUTION$", cell.source, re.M | re.S)
    assert match is not None, f"{assignment}: {grade_id} has no solution region"
    return match.group(1)
