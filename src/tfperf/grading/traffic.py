"""The bytes check kind: how many bytes a step moves to and from memory (:mod:`tfperf.measure.bytes_moved`).

- **The assertion** (:func:`assert_moves_fewer_bytes`), as the notebooks call it: the answer's bytes and the
  unfixed step's, each read from what TensorFlow runs, compared with the limit.
- **What a test cell asks** (:class:`BytesCheck`, :func:`bytes_checks`): each top-level
  ``grading.assert_moves_fewer_bytes`` of the cell. A check inside a function of the cell needs that function's
  variables: it is not found here.
- **In the answer's process** (:func:`read`): the answer's bytes read once more, sent as data; where XLA compiled
  the answer, XLA's optimized HLO module itself, so that the bytes are counted in the grading process from its text
  (:func:`tfperf.measure.bytes_moved.hlo_bytes`: no TensorFlow needed), and a worker that says another number than
  its module holds fails.
- **In the grading process** (:func:`decide`, :func:`compare`): the unfixed step's bytes read in a process that
  never ran learner code (the unfixed code's worker of :mod:`tfperf.autograding.recheck`), on the same inputs; the
  limit read from the instructor's test cell; the decision made here. A check kind of
  :mod:`tfperf.autograding.check_kinds` (:func:`specs`, :func:`decide`).
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from tfperf.grading import guard
from tfperf.grading.calls import GradingFailure, reread
from tfperf.measure import bytes_moved


def _megabytes(nbytes: float) -> str:
    return f"{nbytes / 1e6:.1f} MB"


@guard.checked
def assert_moves_fewer_bytes(
    fn: Callable[..., Any],
    reference: Callable[..., Any],
    args: Sequence[Any],
    *,
    at_most: float,
    what: str = "Your function",
    section: str | None = None,
) -> tuple[int, int]:
    """Fail unless ``fn(*args)`` moves at most ``at_most`` times the bytes ``reference(*args)`` moves per call,
    each read from what TensorFlow runs (XLA's compiled module for a ``jit_compile=True`` function, the
    graph op by op otherwise). Returns both byte counts."""
    from tfperf.grading.remote import Remote

    try:
        if isinstance(fn, Remote):  # in the judge: read in the answer's process, counted here from XLA's module
            try:
                mine, how = counted(fn.probe("bytes", tuple(args)), "The answer's process")
            except Unbelievable as err:
                raise GradingFailure(f"{err}{reread(section)}") from None
        else:
            mine, how = bytes_moved.bytes_moved(fn, tuple(args))
    except GradingFailure:
        raise
    except Exception as err:  # the learner's function cannot be traced or compiled
        raise GradingFailure(
            f"The bytes {what} moves could not be read ({type(err).__name__}: {err}).{reread(section)}"
        ) from None
    theirs, their_how = bytes_moved.bytes_moved(reference, tuple(args))
    problem = too_many_bytes(mine, how, theirs, their_how, at_most=at_most, what=what)
    if problem:
        raise GradingFailure(f"{problem}{reread(section)}")
    return mine, theirs


def too_many_bytes(mine: int, how: str, theirs: int, their_how: str, *, at_most: float, what: str) -> str | None:
    """What is wrong where ``mine`` bytes per call are more than ``at_most`` times the unfixed step's ``theirs``;
    None where they are not (the grading process decides the same way: :mod:`tfperf.grading.traffic`)."""
    if mine <= at_most * theirs:
        return None
    return (
        f"{what} moves {_megabytes(mine)} per call ({how}); the unfixed step moves {_megabytes(theirs)} "
        f"({their_how}): at most {at_most:.2g} times that is expected. Each op that runs on its own reads its "
        f"inputs from memory and writes its result back; a fused kernel does that once."
    )


class Unbelievable(ValueError):
    """A worker's reply that does not hold together (a count that its own evidence contradicts)."""


def counted(reply: Any, who: str) -> tuple[int, str]:
    """(bytes, how) from a worker's reply to :func:`read`, counted here from XLA's module where it sent one."""
    from tfperf.measure import bytes_moved

    if (
        not isinstance(reply, dict)
        or not isinstance(reply.get("bytes"), int)
        or reply.get("how")
        not in (
            bytes_moved.XLA,
            bytes_moved.OP_BY_OP,
        )
    ):
        raise Unbelievable(f"{who} sent a reading this process cannot use.")
    module = reply.get("module")
    if reply["how"] == bytes_moved.XLA:
        if not isinstance(module, str):
            raise Unbelievable(f"{who} said XLA compiled the function but sent no module.")
        if bytes_moved.hlo_bytes(module) != reply["bytes"]:
            raise Unbelievable(
                f"{who} said the function moves {reply['bytes']} bytes per call; the XLA module it sent moves "
                f"{bytes_moved.hlo_bytes(module)}."
            )
    return reply["bytes"], reply["how"]


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
    from tfperf.grading.specs import arguments, literal, top_level_calls

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

    again = reread(check.section)
    try:
        mine, how = counted(answer_reply, "The answer's process")
        theirs, their_how = counted(reference_reply, "The unfixed code's process")
    except Unbelievable as err:
        return f"{err}{again}"
    problem = too_many_bytes(mine, how, theirs, their_how, at_most=check.at_most, what=check.what)
    return f"{problem}{again}" if problem else None


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
    from tfperf.grading.messages import OUTSIDE, CallFailed, NotRunnable

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
