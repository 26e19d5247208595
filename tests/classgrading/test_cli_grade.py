"""``python -m tfperf grade``'s argument handling, and the gradebook entry it needs (no grading)."""

import subprocess
import sys

import pytest
from nbgrader.api import Gradebook, MissingEntry

from tests.classgrading import toy
from tfperf import cli


def _in_gradebook(course, assignment: str) -> bool:
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        try:
            gb.find_assignment(assignment)
        except MissingEntry:
            return False
        return True


def _fresh_clone(course):
    """As a fresh clone has it: the student versions committed, no gradebook."""
    (course / "gradebook.db").unlink()
    released = course.parent / "notebooks" / toy.ASSIGNMENT / toy.NOTEBOOK
    assert released.is_file()
    return released.read_bytes()


def test_an_assignment_without_a_source_is_refused_with_nbgraders_reason(toy_course, capsys):
    assert cli.main(["grade", "nope", "--course", str(toy_course), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "The gradebook has no assignment 'nope'" in err
    assert "could not add it" in err


def test_the_documented_generate_command_records_an_assignment_already_released(toy_course):
    """`nbgrader generate_assignment toy`, as docs/instructors.md gives it, in a fresh clone: nbgrader
    alone prints "Skipping existing assignment" and records nothing; the course's configuration forces it."""
    released = _fresh_clone(toy_course)
    result = subprocess.run(
        [sys.executable, "-m", "nbgrader", "generate_assignment", toy.ASSIGNMENT],
        cwd=toy_course,
        env=toy.course_env(toy_course.parent),
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    assert "Skipping existing assignment" not in result.stderr
    assert _in_gradebook(toy_course, toy.ASSIGNMENT)
    assert (toy_course.parent / "notebooks" / toy.ASSIGNMENT / toy.NOTEBOOK).read_bytes() == released


def test_grade_adds_an_assignment_the_gradebook_lacks(toy_course):
    _fresh_clone(toy_course)
    result = toy.grade(toy_course)
    assert result.returncode == 0, result.stderr
    assert _in_gradebook(toy_course, toy.ASSIGNMENT)
    assert "was not in the gradebook: added it" in result.stdout + result.stderr


def test_submit_goes_with_slurm(toy_course):
    with pytest.raises(SystemExit) as raised:
        cli.main(["grade", "toy", "--course", str(toy_course), "--submit"])
    assert raised.value.code == 2


def test_export_goes_with_a_roster_and_without_slurm(toy_course):
    for argv in (["--export", "canvas"], ["--roster", "r.csv"], ["--slurm", "--export", "canvas", "--roster", "r.csv"]):
        with pytest.raises(SystemExit) as raised:
            cli.main(["grade", "toy", "--course", str(toy_course), *argv])
        assert raised.value.code == 2


@pytest.mark.parametrize("kernel", ["none", "run"])
def test_the_kernel_choice_changes_the_feedback_never_the_grade(toy_course, kernel):
    """``--kernel none``: no kernel runs the notebook, the exercises' workers grade it as ever (every grade comes from
    them); the feedback says its cells were not run instead of showing their outputs."""
    toy.submit(toy_course, "ref", toy.variant("reference", toy.released(toy_course)))
    result = toy.grade(toy_course, "--kernel", kernel)
    assert result.returncode == 0, result.stdout + result.stderr
    assert toy.scores(toy_course) == {"ref": dict(zip(("check_square", "check_total"), (2.0, 3.0)))}
    feedback = " ".join((toy_course / "feedback" / "ref" / toy.ASSIGNMENT / "toy.html").read_text().split())
    assert ("graded without a kernel" in feedback) is (kernel == "none")
