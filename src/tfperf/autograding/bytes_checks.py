"""Bytes checks decided by the grading process: ``grading.assert_moves_fewer_bytes`` at the top level of a test cell.

In the answer's worker, the check reads the bytes of the answer and of the unfixed step in the process that
ran the answer. The grading process then decides again, from evidence read apart (:func:`decide`,
:func:`compare`; a check kind of :mod:`tfperf.autograding.check_kinds`):

- the answer's bytes, read once more in its worker (:func:`read`, sent as data); where XLA compiled the answer,
  the worker sends XLA's optimized HLO module itself, and the bytes are counted here from its text
  (:func:`tfperf.measure.bytes_moved.hlo_bytes`: no TensorFlow needed), so a worker that says another number
  than its module holds fails;
- the unfixed step's bytes, read in a process that never ran learner code (the unfixed code's worker of
  :mod:`tfperf.autograding.recheck`), on the same inputs;
- the limit, read from the instructor's test cell (:func:`bytes_checks`), compared here.

A check inside a function of the cell needs that function's variables: it is not found here.
"""

from __future__ import annotations

import ast
import operator
from dataclasses import dataclass
from typing import Any

#: Arithmetic a limit may be written with (``at_most=1 / 3``).
_OPERATORS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv}


@dataclass(frozen=True)
class BytesCheck:
    """One top-level ``grading.assert_moves_fewer_bytes`` call of a test cell, as source text."""

    grade_id: str
    function: str
    reference: str
    args: str
    at_most: float
    what: str
    section: str | None


def _number(node: ast.AST) -> float:
    """A number written as a literal or arithmetic of literals; ValueError for anything else."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return float(node.value)
    if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
        return _OPERATORS[type(node.op)](_number(node.left), _number(node.right))
    raise ValueError(f"not a number: {ast.dump(node)}")


def bytes_checks(grade_id: str, source: str) -> list[BytesCheck]:
    """The ``assert_moves_fewer_bytes`` calls at the top level of a test cell's ``source`` (as a statement
    or assigned), with a number as their limit."""
    from tfperf.autograding.cells import arguments, literal, top_level_calls
    from tfperf.grading.traffic import assert_moves_fewer_bytes

    found = []
    for node, _ in top_level_calls(source, assert_moves_fewer_bytes.__name__):
        try:
            given = arguments(node, assert_moves_fewer_bytes)
            function, reference, args = (ast.get_source_segment(source, given[n]) for n in ("fn", "reference", "args"))
            at_most = _number(given["at_most"])
            what, section = literal(given["what"]), literal(given["section"])
        except (ValueError, TypeError, ZeroDivisionError):  # not literals, or a required argument missing
            continue
        if not isinstance(what, str):
            continue
        found.append(
            BytesCheck(
                grade_id, function, reference, args, at_most, what, section if isinstance(section, str) else None
            )
        )
    return found


# ---------------------------------------------------------------- in a worker


def read(request: dict, namespace: dict) -> dict:
    """A worker's reply to ``{"do": "bytes", "function": ..., "args": ...}`` (expressions in ``namespace``):
    the bytes the function moves per call, how they were read, and XLA's module where XLA compiled it."""
    from tfperf.measure import bytes_moved
    from tfperf.runtime import logs

    function, args = eval(str(request["function"]), namespace), eval(str(request["args"]), namespace)
    with logs.captured_output():
        count, how, module = bytes_moved.reading(function, tuple(args))
    return {"bytes": int(count), "how": how, "module": module}


# ---------------------------------------------------------------- in the grading process


def compare(check: BytesCheck, answer_reply: Any, reference_reply: Any) -> str | None:
    """The failure message of ``check`` from the answer worker's and the unfixed code's worker's replies to
    :func:`read`; None where the answer moves few enough bytes."""
    from tfperf.grading.traffic import Unbelievable, counted, too_many_bytes

    reread = f'\nReread the section "{check.section}".' if check.section else ""
    try:
        mine, how = counted(answer_reply, "The answer's process")
        theirs, their_how = counted(reference_reply, "The unfixed code's process")
    except Unbelievable as err:
        return f"{err}{reread}"
    problem = too_many_bytes(mine, how, theirs, their_how, at_most=check.at_most, what=check.what)
    return f"{problem}{reread}" if problem else None


#: A cell the judge ran is not decided again here: the judge asked for the bytes itself.
AFTER_THE_JUDGE = False


def specs(grading, grade_id: str, source: str) -> list[BytesCheck]:
    """The bytes checks of a test cell that the grading process decides once the cell passed in the answer's
    worker: none where there is no unfixed code's worker to read the reference's bytes in."""
    return [] if grading.clean_worker is None else bytes_checks(grade_id, source)


def decide(grading, check: BytesCheck, outcome) -> None:
    """Read the bytes of ``check``'s function in the answer's worker and of its reference in the unfixed code's
    worker (``grading.unfixed_worker``), and decide here whether the answer moves few enough (:func:`compare`); a
    failure fails the test cell."""
    from tfperf.autograding.messages import OUTSIDE, CallFailed, NotRunnable

    said = "Decided by the grading process, out of the notebook's reach"
    try:
        mine = grading.answer.request(do="bytes", function=check.function, args=check.args)
    except CallFailed as err:
        outcome.fail(f"{said}: {check.what} raised {err}")
        return
    try:
        theirs = grading.unfixed_worker(check.grade_id, check.reference).request(
            do="bytes", function=check.reference, args=check.args
        )
    except NotRunnable as err:
        outcome.error = {"ename": OUTSIDE, "evalue": f"{said}: the unfixed code's bytes could not be read ({err})."}
        return
    if problem := compare(check, mine, theirs):
        outcome.fail(f"{said}: {problem}")
        return
    outcome.printed += f"{said}: {check.what} moves {mine['bytes'] / 1e6:.1f} MB per call, the unfixed step {theirs['bytes'] / 1e6:.1f} MB.\n"
