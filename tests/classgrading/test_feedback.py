"""What a student's feedback holds, graded with ``python -m tfperf grade`` and the real nbgrader CLI:
the graded notebook's HTML only, the course's own error messages wrapped to fit the page, and the
hidden tests' code (the course shows it: docs/instructors.md, "Feedback")."""

from __future__ import annotations

import html
import re

import nbformat

from tests.classgrading import toy
from tfperf.autograding.preprocessors import KERNEL_DIED

#: Characters of preformatted text that fit the feedback page's output area (about 900 px of monospace).
PAGE_WIDTH = 100
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def test_feedback_is_the_html_only_with_wrapped_messages_and_the_hidden_tests(toy_course):
    released = toy.released(toy_course)
    for kind in ("dead", "screened"):
        toy.submit(toy_course, kind, toy.variant(kind, released))
    result = toy.grade(toy_course)
    assert result.returncode == 0, result.stdout + result.stderr
    messages = {}
    for kind in ("dead", "screened"):
        feedback = toy_course / "feedback" / kind / toy.ASSIGNMENT
        assert sorted(p.name for p in feedback.iterdir()) == ["toy.html"]  # no speedup record, nothing else
        graded = nbformat.read(toy_course / "autograded" / kind / toy.ASSIGNMENT / toy.NOTEBOOK, as_version=4)
        for cell in graded.cells:
            for output in cell.get("outputs", []):
                if output.get("ename") in (KERNEL_DIED, "ScreenFailure"):
                    lines = [ANSI.sub("", line) for line in output.traceback]
                    messages.setdefault(output.ename, []).append(lines)
                    assert max(map(len, lines)) <= PAGE_WIDTH, lines
                    assert " ".join(lines) == f"{output.ename}: {output.evalue}"
        text = html.unescape(re.sub(r"<[^>]+>", "", (feedback / "toy.html").read_text()))
        assert "assert square(5) == 25" in text  # the hidden test, shown to the student
    assert set(messages) == {KERNEL_DIED, "ScreenFailure"}
    assert all(len(lines) > 1 for found in messages.values() for lines in found)  # long enough to wrap
