"""Concept checks: questions whose right answer does not depend on the device, answered with one letter.

A chapter's answer cell assigns each answer as a letter in quotes (``tape_records = "b"``). Its visible
check, :func:`check_form`, says only whether an answer has that form; the right letters are in the
hidden tests (:func:`check_answer`), which the released notebook does not contain (with four options, a
hash of the answer could be inverted by trying each one). Graded, the answers are read from the answer
cell's text by the grading process (:mod:`tfperf.autograding.concepts`): nothing the notebook runs can
change what they are.
"""

from __future__ import annotations

from typing import Any

from tfperf.grading.calls import GradingFailure, NotWritten, reread

#: The heading of the questions in every chapter.
SECTION = "Concept checks"


def normalized(answer: Any, options: str = "abcd") -> str | None:
    """``answer`` as the lowercase letter among ``options`` it names (``" C"`` is ``"c"``), or None: the one rule
    for what an answer is, in the kernel and in the grading process (:mod:`tfperf.autograding.concepts`)."""
    if type(answer) is not str:  # not a subclass either: its comparisons would be its own
        return None
    letter = answer.strip().lower()
    return letter if len(letter) == 1 and letter in options else None


def letter(answer: Any, *, question: str, options: str = "abcd") -> str:
    """``answer`` as a lowercase letter among ``options``; the released placeholder raises "not written yet"."""
    if callable(answer):  # the released placeholder (grading.not_written)
        raise NotWritten(f"The answer to question {question}", SECTION)
    given = normalized(answer, options)
    if given is None:
        raise GradingFailure(
            f'Question {question}: answer with one letter in quotes, one of {", ".join(options)} (for example "{options[0]}").'
        )
    return given


def check_form(answer: Any, *, question: str, options: str = "abcd") -> None:
    """The visible check: the answer is one of the options. Whether it is right is graded by the hidden tests."""
    given = letter(answer, question=question, options=options)
    print(f'Question {question}: your answer "{given}" is recorded; the grading checks whether it is right.')


def check_answer(answer: Any, right: str, *, question: str, options: str = "abcd", section: str | None = None) -> None:
    """The hidden test: the answer is ``right``; if not, the learner is told which section to reread."""
    if letter(answer, question=question, options=options) != right:
        raise GradingFailure(f"Question {question}: not the right answer.{reread(section)}")
    print(f"Question {question}: right.")
