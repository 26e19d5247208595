"""The submissions of one assignment, collected and checked before anything is graded.

Submissions come from nbgrader's ``submitted/<student>/<assignment>/`` (filled by
``nbgrader collect`` or by hand), or from LMS downloads through ``nbgrader zip_collect``.
Each is checked on its own; a problem costs that submission only and is reported with a
reason an instructor can act on:

- a student id with characters other than letters, digits, ``.``, ``_``, ``-``, ``@``
  (nbgrader and the file system would each read it differently);
- a missing notebook, an unreadable one (not valid notebook JSON), or one from another
  assignment (none of this assignment's graded cells, say which assignment's they are);
- an extra notebook: not part of the assignment, so not graded (a warning only).

Anomalies that do not stop grading are noted for the report: a locked cell (a test cell, or
given code) that differs from what was released, or that was deleted: nbgrader restores it
before grading, but a learner who edits tests deserves a look. "What was released" is the
instructor's cell with its hidden tests removed (nbgrader's ``ClearHiddenTests``, as
``generate_assignment`` does): the gradebook's checksum is the instructor version's, taken
before they are removed, so every untouched test cell with hidden tests would differ from it.
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from nbgrader import utils as nbutils
from nbgrader.api import Gradebook, MissingEntry

from tfperf.autograding.preprocessors import released_checksum
from tfperf.classgrading.ledger import submission_checksum

STUDENT_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@-]*$")

#: LMS download names ``<anything>_<student id>_attempt_<timestamp>_<notebook name>.ipynb`` (Blackboard's
#: convention, nbgrader's documentation's example); ``--zip-regexp`` sets another.
DEFAULT_ZIP_REGEXP = r".*_(?P<student_id>[A-Za-z0-9.@-]+)_attempt_(?P<timestamp>[0-9\-]+)_(?P<file_id>.+)"


@dataclass
class Submission:
    """One student's submission folder and what its check found."""

    student: str
    folder: Path
    notebooks: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    anomalies: list[list[str]] = field(default_factory=list)
    checksum: str = ""

    @property
    def gradable(self) -> bool:
        return not self.problems


@dataclass(frozen=True)
class AssignmentCells:
    """What the gradebook knows of an assignment: its notebooks and their instructor cells."""

    notebooks: dict[str, dict[str, tuple[bool, frozenset[str]]]]  # notebook -> grade_id -> (locked, checksums)
    others: dict[str, set[str]]  # another assignment's name -> its grade_ids

    @classmethod
    def load(cls, db_url: str, assignment: str) -> AssignmentCells:
        with Gradebook(db_url) as gb:
            try:
                found = gb.find_assignment(assignment)
            except MissingEntry:
                raise LookupError(
                    f"The gradebook has no assignment {assignment!r}: run "
                    f"`nbgrader generate_assignment {assignment}` first."
                ) from None
            notebooks = {}
            for nb in found.notebooks:
                points = {cell.name: cell.max_score for cell in nb.grade_cells}
                solutions = {cell.name for cell in nb.solution_cells}
                notebooks[nb.name] = {
                    cell.name: (
                        bool(cell.locked),
                        frozenset(
                            {cell.checksum, released_checksum(cell, points.get(cell.name), cell.name in solutions)}
                        ),
                    )
                    for cell in nb.source_cells
                }
            others = {
                a.name: {cell.name for nb in a.notebooks for cell in nb.source_cells}
                for a in gb.assignments
                if a.name != assignment
            }
        return cls(notebooks, others)


def check(student: str, folder: Path, cells: AssignmentCells) -> Submission:
    """Check one submission folder against the assignment's cells."""
    sub = Submission(student, folder, checksum=submission_checksum(folder))
    if not STUDENT_ID.match(student):
        sub.problems.append(
            f"student id {student!r} has characters other than letters, digits, '.', '_', '-', '@': "
            "rename the folder to the student's id in the gradebook"
        )
        return sub
    present = sorted(p.stem for p in folder.glob("*.ipynb"))
    for name in sorted(set(present) - set(cells.notebooks)):
        sub.warnings.append(f"extra notebook {name}.ipynb is not part of the assignment: not graded")
    missing = sorted(set(cells.notebooks) - set(present))
    if missing:
        sub.problems.append(
            f"missing notebook(s) {', '.join(m + '.ipynb' for m in missing)}"
            + (f" (found: {', '.join(p + '.ipynb' for p in present)})" if present else " (no notebook found)")
        )
    for name in sorted(set(present) & set(cells.notebooks)):
        try:
            nb = nbformat.read(folder / f"{name}.ipynb", as_version=4)
        except Exception as error:  # invalid JSON, or JSON that is not a notebook
            reason = str(error).splitlines()[0][:200] if str(error) else type(error).__name__
            sub.problems.append(f"{name}.ipynb cannot be read as a notebook ({type(error).__name__}: {reason})")
            continue
        expected = cells.notebooks[name]
        found = {
            c.metadata.get("nbgrader", {}).get("grade_id"): c
            for c in nb.cells
            if isinstance(c.get("metadata"), dict) and c.metadata.get("nbgrader", {}).get("grade_id")
        }
        if expected and not set(found) & set(expected):
            guess = max(cells.others, key=lambda a: len(cells.others[a] & set(found)), default=None)
            origin = (
                f"its cells are {guess}'s"
                if guess and cells.others[guess] & set(found)
                else "it has none of the course's graded cells"
            )
            sub.problems.append(
                f"{name}.ipynb is not this assignment's notebook: none of its {len(expected)} "
                f"instructor cells are there ({origin})"
            )
            continue
        sub.notebooks.append(name)
        for grade_id, (locked, checksums) in sorted(expected.items()):
            cell = found.get(grade_id)
            if cell is None:
                sub.anomalies.append(
                    ["cell deleted", f"{name}: instructor cell {grade_id} is missing (put back before grading)"]
                )
            elif locked and nbutils.compute_checksum(cell) not in checksums:
                sub.anomalies.append(
                    [
                        "locked cell changed",
                        f"{name}: {grade_id} differs from the released cell (restored from the gradebook before grading)",
                    ]
                )
    return sub


def collect(
    course: Path, assignment: str, cells: AssignmentCells, students: list[str] | None = None
) -> list[Submission]:
    """Every submission of ``assignment`` in ``course/submitted`` (or only ``students``'), checked."""
    submitted = course / "submitted"
    found = {p.parent.name: p for p in submitted.glob(f"*/{assignment}") if p.is_dir()}
    wanted = sorted(found) if students is None else list(dict.fromkeys(students))
    result = []
    for student in wanted:
        folder = found.get(student, submitted / student / assignment)
        if not folder.is_dir():
            sub = Submission(student, folder)
            sub.problems.append(f"no submission: {folder} does not exist")
            result.append(sub)
        else:
            result.append(check(student, folder, cells))
    return result


def zip_collect(course: Path, assignment: str, regexp: str, nbgrader: list[str], env: dict[str, str]) -> list[str]:
    """Extract and collect LMS downloads (``downloaded/<assignment>/archive/``) into ``submitted/``
    with ``nbgrader zip_collect``; returns its count and warnings (files it could not place)."""
    archive = course / "downloaded" / assignment / "archive"
    if not archive.is_dir():
        raise FileNotFoundError(f"--zip-collect: put the LMS downloads (zip files or notebooks) in {archive}")
    result = subprocess.run(
        [*nbgrader, "zip_collect", assignment, "--force", f"--FileNameCollectorPlugin.named_regexp={regexp}"],
        cwd=course,
        env=env,
        capture_output=True,
        text=True,
    )
    log = result.stdout + result.stderr
    if result.returncode != 0:
        raise RuntimeError(f"nbgrader zip_collect failed:\n{log[-3000:]}")
    said = [
        line.split("]", 1)[1].strip() for line in log.splitlines() if "WARNING]" in line or "files collected" in line
    ]
    # nbgrader's notes of what it did (folders it made, files it cleared): not for the instructor's attention
    return [w for w in said if not w.startswith(("Clearing existing files", "Directory not found. Creating"))]
