"""A tiny nbgrader course for the class-grading tests: no TensorFlow, seconds per student.

It is graded with the course's real ``autograde/nbgrader_config.py`` (sandboxed kernel, static
screen), like the round trip (tests/grading/test_roundtrip.py). Its one notebook has a given
cell, two exercises and two test cells (one with hidden tests); the speed test measures the answer against the given
code with ``time.perf_counter`` and appends its ratios to ``$TFPERF_RECORD`` in the rows'
format of :func:`tfperf.grading.speed._record` (the real checks import TensorFlow, which would
make these tests minutes long; the slow test grades a real chapter through the same path).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from tests.conftest import REPO

ASSIGNMENT = "toy"
NOTEBOOK = "toy.ipynb"


def _meta(grade_id: str, *, solution=False, grade=False, locked=False, points=None) -> dict:
    meta = {"grade_id": grade_id, "solution": solution, "grade": grade, "locked": locked, "schema_version": 3}
    if points is not None:
        meta["points"] = points
    return {"nbgrader": meta}


GIVEN = """\
def slow_total(n):
    total = 0
    for i in range(n):
        total += i
    return total"""

SQUARE = """\
def square(x):
    ### BEGIN SOLUTION
    return x * x
    ### END SOLUTION"""

TOTAL = """\
def fast_total(n):
    ### BEGIN SOLUTION
    return n * (n - 1) // 2
    ### END SOLUTION"""

# With hidden tests, as the chapters' test cells have: the released cell differs from the instructor's.
CHECK_SQUARE = """\
assert square(3) == 9, f"square(3) returned {square(3)}, expected 9"
assert square(-2) == 4, f"square(-2) returned {square(-2)}, expected 4"
### BEGIN HIDDEN TESTS
assert square(5) == 25, f"square(5) returned {square(5)}, expected 25"
### END HIDDEN TESTS"""

CHECK_TOTAL = '''\
import json, os, statistics, time
assert fast_total(1000) == slow_total(1000), f"fast_total(1000) returned {fast_total(1000)}"
ratios = []
for _ in range(5):
    t0 = time.perf_counter(); slow_total(20000); t1 = time.perf_counter(); fast_total(20000); t2 = time.perf_counter()
    ratios.append((t1 - t0) / max(t2 - t1, 1e-9))
if os.environ.get("TFPERF_RECORD"):
    with open(os.environ["TFPERF_RECORD"], "a") as f:
        f.write(json.dumps({"exercise": "toy_total", "device_class": "cpu", "target": 2.0, "ratios": ratios}) + "\\n")
assert statistics.median(ratios) >= 2.0, f"speedup {statistics.median(ratios):.1f}x, expected at least 2x"'''


def reference_notebook() -> nbformat.NotebookNode:
    nb = new_notebook(metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}})
    nb.cells = [
        new_markdown_cell("# Toy assignment"),
        new_code_cell(GIVEN, metadata=_meta("given_total", locked=True)),
        new_code_cell(SQUARE, metadata=_meta("answer_square", solution=True)),
        new_code_cell(CHECK_SQUARE, metadata=_meta("check_square", grade=True, locked=True, points=2)),
        new_code_cell(TOTAL, metadata=_meta("answer_total", solution=True)),
        new_code_cell(CHECK_TOTAL, metadata=_meta("check_total", grade=True, locked=True, points=3)),
    ]
    return nb


def with_answer(nb: nbformat.NotebookNode, grade_id: str, source: str) -> nbformat.NotebookNode:
    """A copy of ``nb`` whose answer cell ``grade_id`` holds ``source``."""
    nb = nbformat.from_dict(nb)
    next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id).source = source
    return nb


def variant(kind: str, released: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """A submission of the kind: reference, wrong, crashing, endless, dead (kills its kernel), untouched."""
    reference = _strip(reference_notebook())
    if kind == "reference":
        return reference
    if kind == "untouched":
        return nbformat.from_dict(released)
    if kind == "wrong":
        return with_answer(reference, "answer_square", "def square(x):\n    return x + x")
    if kind == "crashing":
        return with_answer(reference, "answer_total", "def fast_total(n):\n    raise ValueError('not today')")
    if kind == "endless":
        return with_answer(reference, "answer_total", "def fast_total(n):\n    while True:\n        pass")
    if kind == "screened":  # an answer that reads the environment: the static screen zeroes its exercise
        return with_answer(
            reference, "answer_square", "import os\nHOME = os.environ.get('HOME')\ndef square(x):\n    return x * x"
        )
    if kind == "dead":
        return with_answer(
            reference,
            "answer_square",
            "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\ndef square(x):\n    return x * x",
        )
    raise ValueError(kind)


#: Points each kind scores: (check_square, check_total).
EXPECTED = {
    "reference": (2, 3),
    "wrong": (0, 3),
    "crashing": (2, 0),
    "endless": (2, 0),
    "dead": (0, 3),  # the kernel died in the first exercise: a new kernel graded the second
    "untouched": (0, 0),
    "screened": (0, 3),
}
KINDS = list(EXPECTED)


def other_assignment_notebook() -> nbformat.NotebookNode:
    """The notebook of a second assignment (``OTHER``): none of the toy's cells."""
    nb = new_notebook()
    nb.cells = [
        new_code_cell(
            "def cube(x):\n    ### BEGIN SOLUTION\n    return x ** 3\n    ### END SOLUTION",
            metadata=_meta("answer_cube", solution=True),
        ),
        new_code_cell("assert cube(2) == 8", metadata=_meta("check_cube", grade=True, locked=True, points=1)),
    ]
    return nb


OTHER = "other"


def _strip(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    for cell in nb.cells:
        cell.source = cell.source.replace("    ### BEGIN SOLUTION\n", "").replace("\n    ### END SOLUTION", "")
    return nb


def course_folders(root: Path) -> Path:
    """``notebooks/`` and ``autograde/`` (with the course's nbgrader configuration) under ``root``, and the
    sandboxed grading kernel installed in ``root/jupyter``; returns the nbgrader folder."""
    (root / "notebooks").mkdir()
    course = root / "autograde"
    course.mkdir()
    shutil.copy(REPO / "autograde" / "nbgrader_config.py", course)
    subprocess.run(
        [sys.executable, "-m", "tfperf.autograding.sandbox", "install", "--prefix", str(root / "jupyter")],
        check=True,
        capture_output=True,
    )
    return course


def make_course(root: Path) -> Path:
    """A released toy course under ``root``; returns its nbgrader folder (``root/autograde``)."""
    (root / "solutions" / ASSIGNMENT).mkdir(parents=True)
    nbformat.write(reference_notebook(), root / "solutions" / ASSIGNMENT / NOTEBOOK)
    course = course_folders(root)
    (root / "solutions" / OTHER).mkdir()
    nbformat.write(other_assignment_notebook(), root / "solutions" / OTHER / "other.ipynb")
    for assignment in (ASSIGNMENT, OTHER):
        subprocess.run(
            [sys.executable, "-m", "nbgrader", "generate_assignment", assignment, "--force"],
            cwd=course,
            env=course_env(root),
            check=True,
            capture_output=True,
        )
    return course


def grade(course: Path, *args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    """``python -m tfperf grade toy --course COURSE ARGS`` with a 5 s cell time limit."""
    return subprocess.run(
        grade_argv(course, *args), env=course_env(course.parent), capture_output=True, text=True, timeout=timeout
    )


def grade_argv(course: Path, *args: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "tfperf",
        "grade",
        ASSIGNMENT,
        "--course",
        str(course),
        "--execute-timeout",
        "5",
        *args,
    ]


def scores(course: Path, assignment: str = ASSIGNMENT) -> dict[str, dict[str, float]]:
    """student -> grade_id -> points, from nbgrader's gradebook."""
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        return {
            s.student.id: {g.name: g.score for nb in s.notebooks for g in nb.grades}
            for s in gb.assignment_submissions(assignment)
        }


def gradebook_problems(course: Path, assignment: str = ASSIGNMENT) -> list[str]:
    """What is inconsistent in the gradebook: a submission without every notebook, or a notebook
    without a grade for every graded cell, or a score that is not a number within its maximum."""
    from nbgrader.api import Gradebook

    problems = []
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        wanted = {nb.name: {c.name for c in nb.grade_cells} for nb in gb.find_assignment(assignment).notebooks}
        for sub in gb.assignment_submissions(assignment):
            got = {nb.name: nb for nb in sub.notebooks}
            if set(got) != set(wanted):
                problems.append(f"{sub.student.id}: notebooks {sorted(got)} != {sorted(wanted)}")
                continue
            for name, nb in got.items():
                grades = {g.name: g for g in nb.grades}
                if set(grades) != wanted[name]:
                    problems.append(f"{sub.student.id}/{name}: grades {sorted(grades)} != {sorted(wanted[name])}")
                for g in grades.values():
                    if g.score is None or not 0 <= g.score <= g.max_score:
                        problems.append(f"{sub.student.id}/{name}/{g.name}: score {g.score} of {g.max_score}")
    return problems


def course_env(root: Path) -> dict[str, str]:
    """The environment to grade in: the course's sandbox kernel, this checkout's library."""
    path = os.pathsep.join(filter(None, [str(REPO / "src"), os.environ.get("PYTHONPATH", "")]))
    return dict(os.environ, JUPYTER_PATH=str(root / "jupyter" / "share" / "jupyter"), PYTHONPATH=path)


def released(course: Path) -> nbformat.NotebookNode:
    return nbformat.read(course.parent / "notebooks" / ASSIGNMENT / NOTEBOOK, as_version=4)


def submit(course: Path, student: str, nb: nbformat.NotebookNode | None, *, name: str = NOTEBOOK) -> Path:
    folder = course / "submitted" / student / ASSIGNMENT
    folder.mkdir(parents=True, exist_ok=True)
    if nb is not None:
        nbformat.write(nb, folder / name)
    return folder
