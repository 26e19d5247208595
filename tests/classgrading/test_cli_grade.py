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
