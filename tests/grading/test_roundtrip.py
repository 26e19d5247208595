"""The nbgrader round trip, with the real nbgrader CLI and gradebook, in a temporary course.

For every assignment: generate the student version, then autograde, in one run, the
reference solution, the untouched student version and the chapter's plausible answers
(tests/grading/submissions/<assignment>.py; answers to different exercises are packed
into one student); then generate feedback and export grades.
"""

from __future__ import annotations

import csv
import importlib
import importlib.util
import os
import shutil
import subprocess
from pathlib import Path

import nbformat
import pytest
from nbgrader.api import Gradebook

from tests.conftest import REPO, assignments
from tests.grading.submission import pack

pytestmark = pytest.mark.slow

CELL_TIMEOUT = 60


#: For a quicker run while developing: only cases whose name contains one of these (comma-separated).
ONLY_ENV_VAR = "TFPERF_ROUNDTRIP_ONLY"


def submissions_for(assignment: str):
    """The chapter's plausible answers, then its red team (answers that try to fool the checks)."""
    cases = list(importlib.import_module(f"tests.grading.submissions.{assignment}").SUBMISSIONS)
    if importlib.util.find_spec(f"tests.grading.red_team.{assignment}") is not None:
        cases += importlib.import_module(f"tests.grading.red_team.{assignment}").RED_TEAM
    only = [part for part in os.environ.get(ONLY_ENV_VAR, "").split(",") if part]
    return [c for c in cases if any(part in c.name for part in only)] if only else cases


def nbgrader(course: Path, *args: str) -> subprocess.CompletedProcess:
    result = subprocess.run(["nbgrader", *args], cwd=course, capture_output=True, text=True, timeout=1800)
    assert result.returncode == 0, f"nbgrader {' '.join(args)} failed:\n{result.stdout}\n{result.stderr}"
    return result



@pytest.fixture(scope="module")
def graded_course(tmp_path_factory) -> Path:
    """A copy of the course where every assignment was released, submitted, graded and exported."""
    root = tmp_path_factory.mktemp("course")
    shutil.copytree(REPO / "solutions", root / "solutions")
    (root / "notebooks").mkdir()
    (root / "autograde").mkdir()
    shutil.copy(REPO / "autograde" / "nbgrader_config.py", root / "autograde")
    course = root / "autograde"
    for assignment in assignments():
        nbgrader(course, "generate_assignment", assignment, "--force")
        for source in (root / "solutions" / assignment).glob("*.ipynb"):
            reference = nbformat.read(source, as_version=4)
            student_version = nbformat.read(root / "notebooks" / assignment / source.name, as_version=4)
            candidates = {"reference": reference, "untouched": student_version}
            candidates |= {p.student_id: p.notebook(reference) for p in pack(submissions_for(assignment))}
            for student, nb in candidates.items():
                target = course / "submitted" / student / assignment / source.name
                target.parent.mkdir(parents=True, exist_ok=True)
                nbformat.write(nb, target)
        # A shorter cell timeout than the course's 180 s keeps the endless-loop case cheap;
        # the slowest honest graded cell takes about 10 s here.
        nbgrader(course, "autograde", assignment, "--force", f"--Execute.timeout={CELL_TIMEOUT}")
        nbgrader(course, "generate_feedback", assignment, "--force")
    nbgrader(course, "export")
    return root


def grades(course_root: Path, assignment: str, student: str) -> dict[str, tuple[float, float]]:
    """grade_id -> (points scored, max points) for every graded cell of a student's submission."""
    with Gradebook(f"sqlite:///{course_root / 'autograde' / 'gradebook.db'}") as gb:
        submission = gb.find_submission(assignment, student)
        return {g.name: (g.score, g.max_score) for nb in submission.notebooks for g in nb.grades}


def test_submission_names_are_distinct_student_ids():
    for assignment in assignments():
        ids = [s.student_id for s in submissions_for(assignment)]
        assert len(set(ids)) == len(ids) and not {"reference", "untouched"} & set(ids), assignment


@pytest.mark.parametrize("assignment", assignments())
def test_reference_scores_full_marks(graded_course, assignment):
    scores = grades(graded_course, assignment, "reference")
    assert scores and all(got == full for got, full in scores.values()), scores


@pytest.mark.parametrize("assignment", assignments())
def test_untouched_student_version_scores_zero_everywhere(graded_course, assignment):
    scores = grades(graded_course, assignment, "untouched")
    assert scores and all(got == 0 for got, _ in scores.values()), scores


CASES = [(a, s) for a in assignments() for s in submissions_for(a)]


@pytest.mark.parametrize("assignment, submission", CASES, ids=[f"{a}-{s.name}" for a, s in CASES])
def test_plausible_answers_score_what_they_deserve(graded_course, assignment, submission):
    packed = next(p for p in pack(submissions_for(assignment)) if submission in p.members)
    scores = grades(graded_course, assignment, packed.student_id)
    others = packed.expected()  # cells that another packed submission expects to lose
    for grade_id, (got, full) in scores.items():
        if grade_id in submission.expected:
            expected = submission.expected[grade_id]
        elif grade_id in others:
            continue
        else:
            expected = full
        assert got == expected, f"{submission.name}: {grade_id} scored {got}, expected {expected} (all: {scores})"


@pytest.mark.parametrize("assignment", assignments())
def test_feedback_and_export(graded_course, assignment):
    course = graded_course / "autograde"
    students = ["reference", "untouched", *(p.student_id for p in pack(submissions_for(assignment)))]
    for student in students:
        assert list((course / "feedback" / student / assignment).glob("*.html")), student
    with open(course / "grades.csv", newline="") as f:
        rows = {(r["assignment"], r["student_id"]): r for r in csv.DictReader(f)}
    assert float(rows[(assignment, "reference")]["score"]) == float(rows[(assignment, "reference")]["max_score"]) > 0
    assert float(rows[(assignment, "untouched")]["score"]) == 0
