"""Collecting through nbgrader's exchange (the filesystem exchange a JupyterHub shares): release, students
fetch and submit, the instructor collects, then grades into the PostgreSQL gradebook.

On one machine and one Unix account: each student is told apart by ``--student`` (on a JupyterHub,
nbgrader takes the user's name) and has a Jupyter data folder of their own (nbgrader's submit cache).
"""

from __future__ import annotations

import os
import subprocess
import sys

import nbformat
import pytest

from tests.classgrading.gradebook_toy import (
    ASSIGNMENT,
    COURSE,
    answer_passing,
    expected_scores,
    finish,
    make_course,
    nbgrader,
)
from tests.classgrading.pg_server import postgres  # noqa: F401 (the fixture)

pytestmark = pytest.mark.slow  # runs nbgrader


def as_student(home, *args):
    env = dict(os.environ, JUPYTER_DATA_DIR=str(home / ".jupyter-data"))
    done = subprocess.run(
        [sys.executable, "-m", "nbgrader", *args], cwd=home, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout + done.stderr


def test_release_fetch_submit_collect_then_grade(postgres, tmp_path):  # noqa: F811
    from nbgrader.api import Gradebook

    url = postgres.create_database("gradebook_exchange")
    course, exchange = tmp_path / "course", tmp_path / "exchange"
    exchange.mkdir()
    exchange.chmod(0o777)  # nbgrader's exchange is one folder every student can write (on a hub: a shared volume)
    make_course(course, url)
    with open(course / "nbgrader_config.py", "a") as config:
        config.write(f"c.Exchange.root = {str(exchange)!r}\n")
    finish(nbgrader(course, "generate_assignment", ASSIGNMENT))
    finish(nbgrader(course, "release_assignment", ASSIGNMENT))

    students = {"ada": 7, "bo": 2}
    for student, bits in students.items():
        home = tmp_path / "home" / student
        home.mkdir(parents=True)
        common = [f"--Exchange.root={exchange}", f"--CourseDirectory.course_id={COURSE}"]
        as_student(home, "fetch_assignment", ASSIGNMENT, *common)
        path = home / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
        notebook = nbformat.read(path, as_version=4)
        [answer] = [c for c in notebook.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "answer"]
        answer.source = answer_passing(bits)
        nbformat.write(notebook, path)
        as_student(home, "submit", ASSIGNMENT, *common, f"--student={student}")

    output = finish(nbgrader(course, "collect", ASSIGNMENT))
    assert sorted(p.name for p in (course / "submitted").iterdir()) == sorted(students), output
    for student in students:
        assert (course / "submitted" / student / ASSIGNMENT / "timestamp.txt").is_file()
        finish(nbgrader(course, "autograde", ASSIGNMENT, "--student", student))

    with Gradebook(url, COURSE) as gradebook:
        for student, bits in students.items():
            notebook = gradebook.find_submission_notebook(ASSIGNMENT, ASSIGNMENT, student)
            assert {grade.name: grade.score for grade in notebook.grades} == expected_scores(bits), student
            assert gradebook.find_submission(ASSIGNMENT, student).timestamp is not None  # from the exchange
