"""A course holding one real chapter, for grading its reference solution through ``python -m tfperf grade``
(the slow test, and the measurements of docs/measurements-grading.md)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import nbformat

from tests.classgrading.toy import course_env, course_folders
from tests.conftest import REPO


def make_course(root: Path, assignment: str, students: list[str]) -> Path:
    """The chapter released in a course under ``root``, its reference solution submitted by each of ``students``."""
    (root / "solutions").mkdir(parents=True)
    course = course_folders(root)
    release(course, assignment)
    for source in (root / "solutions" / assignment).glob("*.ipynb"):
        reference = nbformat.read(source, as_version=4)
        for student in students:
            target = course / "submitted" / student / assignment / source.name
            target.parent.mkdir(parents=True, exist_ok=True)
            nbformat.write(reference, target)
    return course


def grade(course: Path, assignment: str, *args: str, timeout: float = 1800) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "tfperf", "grade", assignment, "--course", str(course), "--no-progress", *args],
        env=course_env(course.parent),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def release(course: Path, assignment: str) -> None:
    """The chapter's solutions copied into the course and released (``nbgrader generate_assignment``)."""
    root = course.parent
    shutil.copytree(REPO / "solutions" / assignment, root / "solutions" / assignment)
    subprocess.run(
        [sys.executable, "-m", "nbgrader", "generate_assignment", assignment, "--force"],
        cwd=course,
        env=course_env(root),
        check=True,
        capture_output=True,
    )
