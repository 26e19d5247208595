"""Submissions for the nbgrader round trip, built from the reference notebook.

A chapter lists its submissions in ``tests/grading/submissions/<assignment>.py`` as
``SUBMISSIONS = [Submission(...), ...]``.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field

import nbformat


@dataclass(frozen=True)
class Submission:
    """The reference notebook with some solution cells replaced.

    ``edits`` maps a solution cell's grade_id to its new source. ``expected`` maps a test
    cell's grade_id to the points it must get; unlisted test cells must get full points.
    """

    name: str
    edits: dict[str, str]
    expected: dict[str, float] = field(default_factory=dict)

    @property
    def student_id(self) -> str:
        """The name as an nbgrader student id (a folder name): lowercase letters, digits, underscores."""
        return re.sub(r"[^a-z0-9]+", "_", self.name.lower()).strip("_")

    def notebook(self, reference: nbformat.NotebookNode) -> nbformat.NotebookNode:
        nb = copy.deepcopy(reference)
        ids = {c.metadata.get("nbgrader", {}).get("grade_id"): c for c in nb.cells}
        for grade_id, source in self.edits.items():
            cell = ids.get(grade_id)
            assert cell is not None and cell.metadata["nbgrader"].get("solution"), f"{grade_id} is not a solution cell"
            cell.source = source
        return nb


@dataclass
class PackedSubmission:
    """Several submissions with disjoint edits and expectations, graded as one student.

    Exercises are graded independently, so packing saves one autograde run (about 10 s of
    nbgrader start-up plus the notebook's run) per submission packed, and also shows that a
    wrong answer in one exercise does not cost points in another.
    """

    members: list[Submission]

    @property
    def student_id(self) -> str:
        return "__".join(m.student_id for m in self.members)[:120]

    def edits(self) -> dict[str, str]:
        return {k: v for m in self.members for k, v in m.edits.items()}

    def expected(self) -> dict[str, float]:
        return {k: v for m in self.members for k, v in m.expected.items()}

    def notebook(self, reference: nbformat.NotebookNode) -> nbformat.NotebookNode:
        return Submission(self.student_id, self.edits()).notebook(reference)

    def accepts(self, candidate: Submission) -> bool:
        return not (set(candidate.edits) & set(self.edits()) or set(candidate.expected) & set(self.expected()))


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
