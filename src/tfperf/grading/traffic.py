"""Checks of how many bytes a step moves to and from memory (:mod:`tfperf.measure.bytes_moved`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
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
    None where they are not (the grading process decides the same way: :mod:`tfperf.autograding.bytes_checks`)."""
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
