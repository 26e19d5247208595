"""``python -m tfperf grade`` on a toy class, with the real nbgrader CLI, gradebook and sandboxed kernel.

One class, graded in steps that build on each other (the tests run in this order):
an interrupted first run (SIGINT mid-batch, as Ctrl-C) and its resumption; bad input at the
door; the report; a changed submission arriving through ``zip_collect`` (regraded, nobody
else); and ``--force --jobs 2`` on the SQLite gradebook (every score as with one job).
"""

from __future__ import annotations

import csv
import os
import re
import shutil
import signal
import subprocess
import time

import nbformat
import pytest

from tests.classgrading import toy
from tfperf.classgrading import cpusets
from tfperf.classgrading.ledger import GRADED, Ledger

GRADED_KINDS = ["reference", "wrong", "endless", "dead", "screened"]
BAD = {
    "nonb": "missing notebook(s) toy.ipynb",
    "broken": "cannot be read as a notebook",
    "mixup": "is not this assignment's notebook",
    "bad id!": "has characters other than",
}


def expected(kind: str) -> dict[str, float]:
    return dict(zip(("check_square", "check_total"), map(float, toy.EXPECTED[kind])))


@pytest.fixture(scope="module")
def course(toy_template, tmp_path_factory):
    root = tmp_path_factory.mktemp("class") / "course"
    shutil.copytree(toy_template.parent, root, symlinks=True)
    course = root / "autograde"
    released = toy.released(course)
    for kind in GRADED_KINDS:
        toy.submit(course, kind, toy.variant(kind, released))
    toy.submit(course, "screened", toy.variant("reference", released), name="scratch.ipynb")  # an extra notebook
    (toy.submit(course, "nonb", None) / "notes.txt").write_text("I forgot the notebook")
    (toy.submit(course, "broken", None) / toy.NOTEBOOK).write_text('{"cells": [{"cell_type": "code", "sou')
    toy.submit(course, "mixup", toy.other_assignment_notebook())
    toy.submit(course, "bad id!", toy.variant("reference", released))
    return course


def graded_entries(course):
    return {e.student: e for e in Ledger(course / "reports", toy.ASSIGNMENT).entries() if e.status == GRADED}


def autograded_mtime(course, student):
    return (course / "autograded" / student / toy.ASSIGNMENT / toy.NOTEBOOK).stat().st_mtime_ns


@pytest.fixture(scope="module")
def interrupted(course):
    """Start grading, press Ctrl-C (SIGINT) once two students are done, then run the same command again."""
    # As from a terminal: SIGINT not ignored (a shell's background job, e.g. this test run with `&`, ignores it)
    process = subprocess.Popen(
        toy.grade_argv(course),
        env=toy.course_env(course.parent),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    deadline = time.monotonic() + 400
    while len(graded_entries(course)) < 2 and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.2)
    process.send_signal(signal.SIGINT)
    first_output = process.communicate(timeout=120)[0]
    first_summary = (course / "reports" / toy.ASSIGNMENT / "summary.md").read_text()
    done = graded_entries(course)
    before = {s: (e.graded_at, autograded_mtime(course, s)) for s, e in done.items()}
    second = toy.grade(course)
    return {
        "first_rc": process.returncode,
        "first_output": first_output,
        "first_summary": first_summary,
        "done_first": before,
        "second": second,
    }


def test_an_interrupted_run_loses_nothing_and_grades_nothing_twice(course, interrupted):
    assert interrupted["first_rc"] == 130, interrupted["first_output"]
    assert "Stopped before grading" in interrupted["first_output"]
    assert "| not finished | the run stopped while grading it" in interrupted["first_summary"]
    done_first = interrupted["done_first"]
    assert 2 <= len(done_first) < len(GRADED_KINDS), done_first
    second = interrupted["second"]
    assert second.returncode == 0, second.stdout + second.stderr
    assert f"{len(GRADED_KINDS) - len(done_first)} graded, {len(done_first)} skipped" in second.stdout
    entries = graded_entries(course)
    assert sorted(entries) == sorted(GRADED_KINDS)
    for student, (graded_at, mtime) in done_first.items():  # not graded again
        assert entries[student].graded_at == graded_at and autograded_mtime(course, student) == mtime


def test_every_student_scores_what_their_answers_deserve(course, interrupted):
    scores = toy.scores(course)
    assert scores == {kind: expected(kind) for kind in GRADED_KINDS}
    ledger = graded_entries(course)
    for kind in GRADED_KINDS:
        assert {k: v[0] for k, v in ledger[kind].cells.items()} == expected(kind)


def test_bad_input_costs_only_that_submission(course, interrupted):
    output = interrupted["second"].stdout
    summary = (course / "reports" / toy.ASSIGNMENT / "summary.md").read_text()
    for student, reason in BAD.items():
        assert f"Look at: {student}" in output
        row = next(line for line in summary.splitlines() if line.startswith(f"| {student} | rejected |"))
        assert reason in row, row
    assert not set(BAD) & set(toy.scores(course))
    assert toy.gradebook_problems(course) == []


def test_grade_exports_to_both_lms_from_a_roster(course, interrupted, tmp_path):
    """``tfperf grade ... --export canvas --export moodle --roster``: every submission graded already (skipped), the
    assignment's scores written as each LMS's import; a graded student missing from the roster is named, and exits 1."""
    roster = tmp_path / "roster.csv"
    kinds = [k for k in GRADED_KINDS if k != "dead"]
    roster.write_text(
        "nbgrader_id,name,canvas_id,sis_user_id,sis_login_id,section,email\n"
        + "".join(f"{k},{k.title()},{100 + i},S{i},{k}@uni.edu,A,{k}@uni.edu\n" for i, k in enumerate(kinds))
        + "absent,Absent,199,S99,absent@uni.edu,A,absent@uni.edu\n"
    )
    done = toy.grade(course, "--export", "canvas", "--export", "moodle", "--roster", str(roster))
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"0 graded, {len(GRADED_KINDS)} skipped" in done.stdout
    assert "not in the roster" in done.stderr and "dead" in done.stderr
    with open(course / "reports" / "canvas-grades.csv", newline="", encoding="utf-8") as f:
        canvas = list(csv.reader(f))
    assert canvas[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", toy.ASSIGNMENT]
    scores = {row[1]: row[5] for row in canvas[2:]}
    assert scores == {
        **{str(100 + i): f"{sum(expected(k).values()):g}" for i, k in enumerate(kinds)},
        "199": "",  # no submission: no grade
    }
    with open(course / "reports" / "moodle-grades.csv", newline="", encoding="utf-8") as f:
        moodle = {row[0]: row[1] for row in list(csv.reader(f))[1:]}
    assert moodle == {f"{k}@uni.edu": f"{sum(expected(k).values()):g}" for k in kinds} | {"absent@uni.edu": "-"}


def test_feedback_grades_csv_and_report(course, interrupted):
    for kind in GRADED_KINDS:
        assert (course / "feedback" / kind / toy.ASSIGNMENT / "toy.html").exists(), kind
    with open(course / "grades.csv", newline="") as f:
        rows = {r["student_id"]: float(r["score"]) for r in csv.DictReader(f) if r["assignment"] == toy.ASSIGNMENT}
    assert rows == {kind: sum(expected(kind).values()) for kind in GRADED_KINDS}
    folder = course / "reports" / toy.ASSIGNMENT
    summary = (folder / "summary.md").read_text()
    assert "| check_square | 2 | 2 | 3 | 0: 3, 2: 2 |" in summary  # reference and endless full marks
    assert "| dead | kernel lost |" in summary
    assert "| screened | screen flag | toy: answer_square: " in summary
    assert "| screened | extra notebook | extra notebook scratch.ipynb" in summary
    # a failure is shown with one student's own numbers, never with them blanked
    assert re.search(r"AssertionError: square\(-?\d+\) returned [\d.-]+, expected \d+", summary), summary
    assert "ran past the time limit" in summary  # the endless loop, stopped at the time limit outside the kernel
    # the toy's speed check recorded its ratios from inside the sandbox, through TFPERF_RECORD: for the
    # students whose check_total ran to the end (reference, wrong, screened, and dead, graded on in a new kernel
    # after its first exercise killed one); no --reference was given, so the student called "reference" is one
    # of them and the comparison is the class median
    assert "| toy_total | 4 |" in summary and "| class median |" in summary
    for png in ("points.png", "speedups.png"):
        assert (folder / png).read_bytes()[:4] == b"\x89PNG"
    assert not list((course / "autograded").glob("*/toy/.tfperf-speedups-*"))


def test_a_changed_submission_from_zip_collect_is_graded_again_and_nobody_else(course, interrupted):
    archive = course / "downloaded" / toy.ASSIGNMENT / "archive"
    archive.mkdir(parents=True)
    nbformat.write(
        toy.variant("reference", toy.released(course)), archive / "toy_wrong_attempt_2026-11-23-01-00-00_toy.ipynb"
    )
    before = graded_entries(course)
    result = toy.grade(course, "--zip-collect")
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"1 graded, {len(GRADED_KINDS) - 1} skipped" in result.stdout
    assert "1 files collected" in result.stdout  # zip_collect's own count, passed on
    assert "Directory not found" not in result.stdout  # nbgrader's note of the folders it made is not
    after = graded_entries(course)
    assert after["wrong"].graded_at > before["wrong"].graded_at and after["wrong"].score == 5
    assert all(after[s].graded_at == before[s].graded_at for s in GRADED_KINDS if s != "wrong")
    assert toy.scores(course)["wrong"] == expected("reference")


def test_force_with_two_jobs_on_sqlite_gives_the_same_scores(course, interrupted):
    before = toy.scores(course)
    entries = graded_entries(course)
    result = toy.grade(course, "--force", "--jobs", "2")
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"{len(GRADED_KINDS)} graded, 0 skipped" in result.stdout
    after = graded_entries(course)
    assert all(after[s].graded_at > entries[s].graded_at for s in GRADED_KINDS)
    assert toy.scores(course) == before
    assert toy.gradebook_problems(course) == []
    assert "database is locked" not in result.stdout + result.stderr
    logs = "".join(p.read_text() for p in (course / "reports" / "logs" / toy.ASSIGNMENT).glob("*.log"))
    assert "database is locked" not in logs
    # each grader pinned to its own CPU set (one physical core each)
    used = set(re.findall(r"taskset --cpu-list (\S+) ", logs))
    if len(cpusets.physical_cores(sorted(os.sched_getaffinity(0)))) >= 2:
        assert len(used) == 2 and set(used.pop().split(",")).isdisjoint(used.pop().split(",")), used
