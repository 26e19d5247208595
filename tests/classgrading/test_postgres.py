"""The PostgreSQL gradebook, against a real server: nbgrader's ``db_url`` for generate_assignment,
autograde and export, and several ``nbgrader autograde`` processes writing to one gradebook at once.

The server is Debian's PostgreSQL started on loopback by the test (tests/classgrading/pg_server.py); the
assignment is a toy one made here (no TensorFlow), so that the test is about the gradebook only.
"""

from __future__ import annotations

import csv
import subprocess
import sys
import time

import nbformat
import pytest

from tests.classgrading.pg_server import PostgresServer, find_binaries

pytestmark = pytest.mark.slow  # runs nbgrader

ASSIGNMENT = "toy"
COURSE = "toy-course"
# The toy's graded tests and their points: a student who passes a subset scores its sum, so each
# subset (0..7) gives a different score and a lost or mixed-up grade cannot go unnoticed.
TESTS = {"test_small": ("add(1, 2) == 3", 1), "test_negative": ("add(-5, 2) == -3", 2),
         "test_strings": ("add('a', 'b') == 'ab'", 4)}
CASES = {"test_small": ((1, 2), 3), "test_negative": ((-5, 2), -3), "test_strings": (("a", "b"), "ab")}
STUDENTS = {f"learner{k}": k for k in range(8)}  # student id -> the subset of tests it passes, as bits


@pytest.fixture(scope="module")
def postgres():
    bindir = find_binaries()
    if bindir is None:
        pytest.skip("PostgreSQL's server binaries (/usr/lib/postgresql/*/bin) are not installed: "
                    "apt-get install postgresql (.ci/run does)")
    server = PostgresServer(bindir)
    try:
        server.start()
        yield server
    finally:
        server.stop()


def toy_source() -> nbformat.NotebookNode:
    def meta(grade_id, *, grade=False, solution=False, locked=False, points=None):
        nbgrader = {"grade_id": grade_id, "grade": grade, "solution": solution, "locked": locked,
                    "schema_version": 3}
        if points is not None:
            nbgrader["points"] = points
        return {"nbgrader": nbgrader}

    cells = [nbformat.v4.new_markdown_cell("# Toy\nWrite `add(a, b)`.", metadata=meta("intro", locked=True)),
             nbformat.v4.new_code_cell("def add(a, b):\n    ### BEGIN SOLUTION\n    return a + b\n    ### END SOLUTION",
                                       metadata=meta("answer", solution=True))]
    cells += [nbformat.v4.new_code_cell(f"assert {check}", metadata=meta(name, grade=True, locked=True, points=points))
              for name, (check, points) in TESTS.items()]
    notebook = nbformat.v4.new_notebook(cells=cells)
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    return notebook


def answer_passing(bits: int) -> str:
    """An answer that passes exactly the tests whose bit is set (and gets the others wrong)."""
    table = {args: (result if bits >> i & 1 else None) for i, (args, result) in enumerate(CASES.values())}
    return f"def add(a, b):\n    return {table!r}[(a, b)]"


def nbgrader(course, *args):
    return subprocess.Popen([sys.executable, "-m", "nbgrader", *args], cwd=course, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)


def finish(process, timeout=300) -> str:
    output, _ = process.communicate(timeout=timeout)
    assert process.returncode == 0, output
    return output


def make_course(course, url):
    """A course whose nbgrader_config.py names the PostgreSQL gradebook (``CourseDirectory.db_url``)."""
    (course / "source" / ASSIGNMENT).mkdir(parents=True)
    nbformat.write(toy_source(), course / "source" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb")
    (course / "nbgrader_config.py").write_text(
        "c = get_config()\n"
        f"c.CourseDirectory.root = {str(course)!r}\n"
        f"c.CourseDirectory.course_id = {COURSE!r}\n"
        f"c.CourseDirectory.db_url = {url!r}\n"
        "c.Execute.kernel_name = 'python3'\n"
        "c.Execute.timeout = 60\n")


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


def test_answers_pass_exactly_their_subset():
    for bits in range(8):
        namespace = {}
        exec(answer_passing(bits), namespace)  # noqa: S102 (our own generated answer)
        passed = {name for name, (args, result) in CASES.items() if namespace["add"](*args) == result}
        assert passed == {name for i, name in enumerate(TESTS) if bits >> i & 1}


def test_parallel_autograde_processes_share_one_postgres_gradebook(postgres, tmp_path):
    from nbgrader.api import Gradebook

    url = postgres.create_database("gradebook_parallel")
    course = tmp_path / "course"
    make_course(course, url)
    finish(nbgrader(course, "generate_assignment", ASSIGNMENT))  # db_url from nbgrader_config.py
    for student, bits in STUDENTS.items():
        submit(course, student, bits)

    # One autograde process per student, all at once, as `tfperf grade --jobs N` and a Slurm array do;
    # they name the gradebook on the command line, as those do.
    started = time.monotonic()
    graders = {student: nbgrader(course, "autograde", ASSIGNMENT, "--student", student,
                                 f"--CourseDirectory.db_url={url}") for student in STUDENTS}
    outputs = {student: finish(process) for student, process in graders.items()}
    wall = time.monotonic() - started
    print(f"{len(STUDENTS)} autograde processes at once: {wall:.1f} s wall")
    for student, output in outputs.items():
        assert "ERROR" not in output, output

    assert not (course / "gradebook.db").exists(), "nbgrader fell back to the SQLite gradebook"
    with Gradebook(url, COURSE) as gradebook:
        assert sorted(s.id for s in gradebook.students) == sorted(STUDENTS)
        assert gradebook.find_assignment(ASSIGNMENT).num_submissions == len(STUDENTS)
        for student, bits in STUDENTS.items():
            submission = gradebook.find_submission(ASSIGNMENT, student)
            notebook = gradebook.find_submission_notebook(ASSIGNMENT, ASSIGNMENT, student)
            assert {grade.name: grade.score for grade in notebook.grades} == expected_scores(bits), student
            assert submission.score == bits, student
            assert submission.max_score == 7

    finish(nbgrader(course, "export", "--to", str(tmp_path / "grades.csv")))  # db_url from nbgrader_config.py
    with open(tmp_path / "grades.csv", newline="") as exported:
        rows = {row["student_id"]: row for row in csv.DictReader(exported)}
    assert {student: float(rows[student]["score"]) for student in STUDENTS} == {s: float(b) for s, b in STUDENTS.items()}


def test_the_gradebook_is_the_server_not_a_file(postgres, tmp_path):
    """A db_url that names a database the server lacks makes nbgrader fail, so the URL is really used."""
    course = tmp_path / "course"
    make_course(course, postgres.url("no_such_database"))
    process = nbgrader(course, "generate_assignment", ASSIGNMENT)
    output, _ = process.communicate(timeout=300)
    assert process.returncode != 0
    assert 'database "no_such_database" does not exist' in output
    assert not (course / "gradebook.db").exists()
