"""A toy nbgrader assignment (no TensorFlow) for tests of the class-grading machinery: its course folder,
submissions that pass chosen subsets of its tests, the scores they must get, and nbgrader run on it."""

from __future__ import annotations

import subprocess
import sys

import nbformat

ASSIGNMENT = "toy"
COURSE = "toy-course"
# The toy's graded tests and their points: a student who passes a subset scores its sum, so each
# subset (0..7) gives a different score and a lost or mixed-up grade cannot go unnoticed.
TESTS = {
    "test_small": ("add(1, 2) == 3", 1),
    "test_negative": ("add(-5, 2) == -3", 2),
    "test_strings": ("add('a', 'b') == 'ab'", 4),
}
CASES = {"test_small": ((1, 2), 3), "test_negative": ((-5, 2), -3), "test_strings": (("a", "b"), "ab")}
STUDENTS = {f"learner{k}": k for k in range(8)}  # student id -> the subset of tests it passes, as bits


def toy_source() -> nbformat.NotebookNode:
    def meta(grade_id, *, grade=False, solution=False, locked=False, points=None):
        nbgrader = {"grade_id": grade_id, "grade": grade, "solution": solution, "locked": locked, "schema_version": 3}
        if points is not None:
            nbgrader["points"] = points
        return {"nbgrader": nbgrader}

    cells = [
        nbformat.v4.new_markdown_cell("# Toy\nWrite `add(a, b)`.", metadata=meta("intro", locked=True)),
        nbformat.v4.new_code_cell(
            "def add(a, b):\n    ### BEGIN SOLUTION\n    return a + b\n    ### END SOLUTION",
            metadata=meta("answer", solution=True),
        ),
    ]
    cells += [
        nbformat.v4.new_code_cell(f"assert {check}", metadata=meta(name, grade=True, locked=True, points=points))
        for name, (check, points) in TESTS.items()
    ]
    notebook = nbformat.v4.new_notebook(cells=cells)
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    return notebook


def answer_passing(bits: int) -> str:
    """An answer that passes exactly the tests whose bit is set (and gets the others wrong)."""
    table = {args: (result if bits >> i & 1 else None) for i, (args, result) in enumerate(CASES.values())}
    return f"def add(a, b):\n    return {table!r}[(a, b)]"


def nbgrader(course, *args):
    return subprocess.Popen(
        [sys.executable, "-m", "nbgrader", *args],
        cwd=course,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def finish(process, timeout=300) -> str:
    output, _ = process.communicate(timeout=timeout)
    assert process.returncode == 0, output
    return output


def make_course(course, url):
    """A course whose nbgrader_config.py names the PostgreSQL gradebook (``CourseDirectory.db_url``)."""
    (course / "source" / ASSIGNMENT).mkdir(parents=True)
    nbformat.write(toy_source(), course / "source" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb")
    # Kernels talk over ipc sockets in a folder of each process's own, as in autograde/nbgrader_config.py:
    # with TCP, autograde processes started at once can pick the same free port, and a kernel dies
    # with "Address already in use" (seen in CI).
    (course / "nbgrader_config.py").write_text(
        "import atexit, shutil, tempfile\n"
        "c = get_config()\n"
        "_sockets = tempfile.mkdtemp(prefix='toy-grading-')\n"
        "atexit.register(shutil.rmtree, _sockets, ignore_errors=True)\n"
        "c.KernelManager.transport = 'ipc'\n"
        "c.KernelManager.ip = _sockets + '/kernel'\n"
        f"c.CourseDirectory.root = {str(course)!r}\n"
        f"c.CourseDirectory.course_id = {COURSE!r}\n"
        f"c.CourseDirectory.db_url = {url!r}\n"
        "c.Execute.kernel_name = 'python3'\n"
        "c.Execute.timeout = 60\n"
    )


def submit(course, student, bits):
    released = nbformat.read(course / "release" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", as_version=4)
    for cell in released.cells:
        if cell.metadata.get("nbgrader", {}).get("grade_id") == "answer":
            cell.source = answer_passing(bits)
    folder = course / "submitted" / student / ASSIGNMENT
    folder.mkdir(parents=True)
    nbformat.write(released, folder / f"{ASSIGNMENT}.ipynb")


def expected_scores(bits: int) -> dict[str, float]:
    return {name: float(points if bits >> i & 1 else 0) for i, (name, (_, points)) in enumerate(TESTS.items())}
