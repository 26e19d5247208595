"""An outsider's answers to a toy exercise, graded as submissions are (a real worker, its answer restricted).

A reviewer in a fresh context, told how submissions are graded, wrote attacks on the restriction and the worker
(``outsider_answers/attack_*.answer``: each got a wrong answer passing, or read the report key, before the fixes
they led to) and honest answers a learner might write (``honest_*.answer``). Each file's first lines say what it
tries. Every attack must now fail its check; every honest answer must pass.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tfperf.autograding import outside, screen

ANSWERS = Path(__file__).parent / "outsider_answers"
GIVEN = "import os, sys, math\nfrom tfperf import grading\ndef slow_square(x):\n    return x * x"
#: As the course's test cells do: the checks imported in the cell, a result compared by grading.check_same_result.
TESTS = (
    "from tfperf import grading\ngrading.check_same_result(square(3), slow_square(3))\nprint('checked 3')",
    "from tfperf import grading\ngrading.check_same_result(square(2), 4)\nprint('checked 2')",
)
#: Caught by the static screen before any worker runs (it redefines the given slow_square).
SCREENED = {"attack_a01"}


def graded(source: str) -> dict[str, outside.Outcome]:
    exercise = outside.Exercise("answer", ("t1", "t2"), (GIVEN, "PLACEHOLDER"), 1, TESTS)
    return outside.grade_exercise(exercise, source, timeout=20, sandboxed=False)


def answers(kind: str) -> list[Path]:
    return sorted(ANSWERS.glob(f"{kind}_*.answer"))


@pytest.mark.parametrize("path", answers("attack"), ids=lambda p: p.stem)
def test_an_outsiders_attack_fails_its_check(path):
    source = path.read_text()
    if path.stem in SCREENED:
        assert screen.screen(source, given_names=screen.defined_names(GIVEN)), "the screen should flag it"
        return
    outcomes = graded(source)
    assert not outcomes["t1"].passed, outcomes["t1"].printed


@pytest.mark.parametrize("path", answers("honest"), ids=lambda p: p.stem)
def test_an_outsiders_honest_answer_passes(path):
    outcomes = graded(path.read_text())
    assert all(o.passed for o in outcomes.values()), {g: (o.error, o.printed) for g, o in outcomes.items()}


def test_the_corpus_is_there():
    assert len(answers("attack")) >= 17 and len(answers("honest")) >= 25
