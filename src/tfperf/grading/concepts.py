"""The concepts check kind: questions whose right answer does not depend on the device, answered with one letter.

A chapter's answer cell assigns each answer as a letter in quotes (``tape_records = "b"``). Its visible
check, :func:`check_form`, says only whether an answer has that form; the right letters are in the
hidden tests (:func:`check_answer`), which the released notebook does not contain (with four options, a
hash of the answer could be inverted by trying each one).

**Graded** (:func:`grade`), the answers are read from the answer cell's text by the grading process, with no kernel
and no worker: nothing the notebook runs can change what they are. An exercise is a concept check when its
instructor's test cells call nothing but ``concepts.check_form``, ``concepts.check_answer`` and ``print``. The right
letters are read from the instructor's hidden tests (:func:`questions`); the learner's letters from the submitted
answer cell as written (:func:`written_answers`): top-level assignments of a string literal (``name = "b"``, in any
plain assignment form the visible check accepts, the last one counting). An answer computed any other way is not
read, and the check says so. One rule decides what an answer is, in the kernel and here (:func:`normalized`).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

from tfperf.grading.calls import GradingFailure, NotWritten, reread

#: The heading of the questions in every chapter.
SECTION = "Concept checks"


def normalized(answer: Any, options: str = "abcd") -> str | None:
    """``answer`` as the lowercase letter among ``options`` it names (``" C"`` is ``"c"``), or None: the one rule
    for what an answer is, in the kernel and in the grading process (:func:`grade`)."""
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


ALLOWED_CALLS = {"check_form", "check_answer"}


@dataclass(frozen=True)
class Question:
    name: str  # the variable the answer cell assigns
    right: str
    question: str
    options: str = "abcd"
    section: str | None = None


def _keyword(call: ast.Call, name: str, default=None):
    for keyword in call.keywords:
        if keyword.arg == name:
            return ast.literal_eval(keyword.value)
    return default


def questions(test_source: str) -> list[Question] | None:
    """The questions a test cell checks, or None if it checks anything else (then it is not graded here)."""
    try:
        tree = ast.parse(test_source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):  # not Python that runs
        return None
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Name) and func.id == "print":
            continue
        if not (
            isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Name)
            and func.value.id == "concepts"
            and func.attr in ALLOWED_CALLS
        ):
            return None
        if func.attr == "check_answer":
            try:
                found.append(
                    Question(
                        name=node.args[0].id,
                        right=ast.literal_eval(node.args[1]),
                        question=str(_keyword(node, "question")),
                        options=_keyword(node, "options", "abcd"),
                        section=_keyword(node, "section"),
                    )
                )
            except (IndexError, AttributeError, ValueError):
                return None
    return found or None


def written_answers(answer_source: str) -> dict[str, str | None]:
    """Each name the answer cell assigns at the top level: its string literal, or None if computed. A tuple of
    names assigned a tuple of as many literals (``q1, q2 = "a", "b"``) is each name assigned its own."""
    try:
        tree = ast.parse(answer_source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):  # not Python that runs
        return {}
    answers: dict[str, str | None] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) or (isinstance(node, ast.AnnAssign) and node.value is not None):
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                answers.update(_assigned(target, node.value))
        elif isinstance(node, ast.AugAssign):  # computed from the value before
            answers.update(_assigned(node.target, None))
    return answers


def _assigned(target: ast.expr, value: ast.expr | None):
    """(name, its string literal or None) for each name ``target`` binds to (its part of) ``value``."""
    if isinstance(target, ast.Name):
        literal = value.value if isinstance(value, ast.Constant) else None
        yield target.id, literal if isinstance(literal, str) else None
    elif (
        isinstance(target, ast.Tuple | ast.List)
        and isinstance(value, ast.Tuple | ast.List)
        and len(target.elts) == len(value.elts)
        and not any(isinstance(e, ast.Starred) for e in [*target.elts, *value.elts])
    ):
        for part, part_value in zip(target.elts, value.elts):
            yield from _assigned(part, part_value)
    elif isinstance(target, ast.Tuple | ast.List | ast.Starred):  # unpacked from a computed value: nothing as written
        for part in target.elts if isinstance(target, ast.Tuple | ast.List) else [target.value]:
            yield from _assigned(part, None)
    # an attribute or an item (notes[q1] = ...) binds no name: q1 keeps what it was assigned


def verdict(question: Question, answers: dict[str, str | None]) -> str | None:
    """None if ``answers`` has the right letter for ``question``; else what the learner is told."""
    if question.name not in answers:
        return f'Question {question.question}: no answer: assign it in the answer cell, {question.name} = "a".'
    given = answers[question.name]
    if given is None:
        return (
            f"Question {question.question}: write the answer as one letter in quotes "
            f'({question.name} = "a"): it is read from the answer cell as written.'
        )
    letter = normalized(given, question.options)
    if letter is None:
        return f"Question {question.question}: answer with one letter, one of {', '.join(question.options)}."
    if letter != question.right:
        where = f' Reread the section "{question.section}".' if question.section else ""
        return f"Question {question.question}: not the right answer.{where}"
    return None


def grade(test_sources: dict[str, str], answer_source: str) -> dict[str, tuple[str, str | None]] | None:
    """For each test cell (grade_id: its instructor's source): (what it printed, its error or None); None
    if the exercise is not a concept check."""
    asked = {grade_id: questions(source) for grade_id, source in test_sources.items()}
    if not asked or any(found is None for found in asked.values()):
        return None
    answers = written_answers(answer_source)
    outcomes = {}
    for grade_id, found in asked.items():
        problems = [problem for q in found if (problem := verdict(q, answers))]
        said = "Graded from your answer cell as written, outside the notebook:"
        right = "".join(f" question {q.question} right." for q in found)
        outcomes[grade_id] = ("" if problems else said + right + "\n", " ".join(problems) or None)
    return outcomes
