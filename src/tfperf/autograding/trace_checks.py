"""Trace counts read while the grading process times: ``grading.assert_traces_at_most`` at the top level of a test cell.

In the answer's worker, the check counts the traces of the calls the instructor's cell makes, on inputs that cell
chose. Where a speed check of the same cell is timed from the grading process (on inputs made from seeds drawn
there), the grading process also asks for TensorFlow's own trace count of each checked function
(``experimental_get_tracing_count``, read only from an object of ``tf.function``'s own class) before the first
timed call and after the last (:func:`read`, :func:`counted`), and decides here (:func:`retraced`): a function that the worker's
checks already traced and that traces again on those fresh inputs fails the test cell, as does one that the timed
calls did not call as a graph at least once each (an answer that runs its graph only on the checks' own inputs,
which the given functions make the same on every run, and its Python function on the timed ones).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class TracesCheck:
    """One top-level ``grading.assert_traces_at_most`` call of a test cell: the function it checks, as source text."""

    grade_id: str
    function: str
    what: str
    section: str | None


def traces_checks(grade_id: str, source: str) -> list[TracesCheck]:
    """The functions that ``assert_traces_at_most`` calls at the top level of a test cell's ``source`` check
    (as a statement or assigned), each once."""
    from tfperf.autograding.cells import MISSING, arguments, default, literal, top_level_calls
    from tfperf.grading.tracing import assert_traces_at_most

    found: dict[str, TracesCheck] = {}
    for node, _ in top_level_calls(source, assert_traces_at_most.__name__):
        try:
            given = arguments(node, assert_traces_at_most)
        except ValueError:
            continue
        if given["fn"] is MISSING:
            continue
        unnamed = default(assert_traces_at_most, "what")
        try:
            what, section = literal(given["what"]), literal(given["section"])
        except ValueError:  # a message made at run time: the assertion's own default stands for it
            what, section = unnamed, None
        text = ast.get_source_segment(source, given["fn"])
        found.setdefault(
            text,
            TracesCheck(
                grade_id,
                text,
                what.split(" (")[0] if isinstance(what, str) else unnamed,
                section if isinstance(section, str) else None,
            ),
        )
    return list(found.values())


# ---------------------------------------------------------------- in the worker


def read(request: dict, namespace: dict) -> dict:
    """A worker's reply to ``{"do": "traces", "function": ...}``: TensorFlow's own count of the traces of that
    ``tf.function`` (an object of its own class: a subclass could report another count), and of its calls from eager
    code (``calls``: the count TensorFlow keeps to warn of frequent retracing, one more per call made outside a graph
    that did not trace; it only grows while the function does not trace)."""
    from tensorflow.python.eager.polymorphic_function import polymorphic_function

    function = eval(str(request["function"]), namespace)
    if type(function) is not polymorphic_function.Function:
        raise TypeError(f"{request['function']} is not a tf.function of TensorFlow's own class")
    manager = polymorphic_function._frequent_tracing_detector_manager  # noqa: SLF001 (no public count of calls)
    with manager._lock:  # noqa: SLF001
        detector = manager._detectors.get(function._key_for_call_stats)  # noqa: SLF001
        calls = int(detector._call_count) if detector is not None else 0  # noqa: SLF001
    return {"count": int(polymorphic_function.Function.experimental_get_tracing_count(function)), "calls": calls}


# ---------------------------------------------------------------- in the grading process


def counted(answer, check: TracesCheck) -> dict | None:
    """The answer worker's reply to ``traces`` for ``check``'s function (:func:`read`); None where it raised."""
    from tfperf.autograding.messages import CallFailed

    try:
        return answer.request(do="traces", function=check.function)
    except CallFailed:
        return None


def retraced(check: TracesCheck, before: Any, after: Any, calls: int) -> str | None:
    """The failure message where ``check``'s function traced during the ``calls`` timed calls (counts read
    before and after them); None where it did not."""
    reread = f'\nReread the section "{check.section}".' if check.section else ""
    counts = [reply.get("count") if isinstance(reply, dict) else None for reply in (before, after)]
    if not all(isinstance(c, int) for c in counts):
        return f"the grading process could not read how often {check.what} traced.{reread}"
    if counts[1] > counts[0]:
        return (
            f"{check.what} traced {counts[1] - counts[0]} more times during the {calls} calls timed on fresh inputs, "
            f"after the checks had already traced it: every trace runs your Python code again and builds a new "
            f"graph.{reread}"
        )
    ran = [reply.get("calls") if isinstance(reply, dict) else None for reply in (before, after)]
    if not all(isinstance(c, int) for c in ran):
        return f"the grading process could not read how often {check.what} ran.{reread}"
    if ran[1] - ran[0] < calls:
        return (
            f"{check.what} ran as a graph {ran[1] - ran[0]} times during the {calls} calls timed on fresh inputs; "
            f"at least once a call is expected: the timed calls must do their work through {check.what}, as the "
            f"checked calls did.{reread}"
        )
    return None
