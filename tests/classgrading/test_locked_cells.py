""" "Locked cell changed" names real tampering only: an untouched release is not flagged, an edited test is,
in the summary and in nbgrader's log.

The gradebook's checksum of a test cell is the instructor version's, hidden tests included; the
released cell has them removed. Graded with ``python -m tfperf grade`` and the real nbgrader CLI
on the toy course (whose ``check_square`` has hidden tests), and checked on every real chapter.
"""

from __future__ import annotations

import nbformat
import pytest

from tests.classgrading import chapter, toy
from tests.conftest import assignments
from tfperf.classgrading.ledger import Ledger
from tfperf.classgrading.submissions import AssignmentCells, collect


def test_the_untouched_release_is_no_anomaly_and_an_edited_test_cell_is(toy_course):
    released = toy.released(toy_course)
    toy.submit(toy_course, "untouched", toy.variant("untouched", released))
    edited = toy.variant("reference", released)
    cell = next(c for c in edited.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "check_square")
    cell.source = "assert True"
    toy.submit(toy_course, "edited", edited)
    result = toy.grade(toy_course)
    assert result.returncode == 0, result.stdout + result.stderr
    ledger = Ledger(toy_course / "reports", toy.ASSIGNMENT)
    assert ledger.read("untouched").anomalies == []
    assert ledger.read("edited").anomalies == [
        [
            "locked cell changed",
            "toy: check_square differs from the released cell (restored from the gradebook before grading)",
        ]
    ]
    assert toy.scores(toy_course)["edited"]["check_square"] == 2  # graded with the instructor's cell
    summary = (toy_course / "reports" / toy.ASSIGNMENT / "summary.md").read_text()
    assert "| edited | locked cell changed |" in summary and "| untouched |" not in summary
    # The logs: nbgrader's checksum warning for the edited cell only (not for hidden tests put back),
    # and none of the SQLAlchemy warnings nbgrader's gradebook raises on every new submission.
    logs = toy_course / "reports" / "logs" / toy.ASSIGNMENT
    untouched, edited_log = (logs / "untouched.log").read_text(), (logs / "edited.log").read_text()
    assert "Attribute 'checksum'" not in untouched
    assert "Attribute 'checksum' for cell check_square has changed!" in edited_log
    assert "SAWarning" not in untouched + edited_log


@pytest.mark.slow
def test_no_chapter_flags_its_own_untouched_release(tmp_path):
    """Every chapter's released notebook, submitted as it is, passes the check with no anomaly."""
    first, *others = assignments()
    course = chapter.make_course(tmp_path / "course", first, [])
    for assignment in others:
        chapter.release(course, assignment)
    for assignment in assignments():
        for notebook in (course.parent / "notebooks" / assignment).glob("*.ipynb"):
            folder = course / "submitted" / "untouched" / assignment
            folder.mkdir(parents=True, exist_ok=True)
            nbformat.write(nbformat.read(notebook, as_version=4), folder / notebook.name)
        cells = AssignmentCells.load(f"sqlite:///{course / 'gradebook.db'}", assignment)
        (sub,) = collect(course, assignment, cells)
        assert sub.gradable and sub.anomalies == [], (assignment, sub)
