"""Trace counts read while the grading process times: ``grading.assert_traces_at_most`` at the top level of a test cell.

In the answer's worker, the check counts the traces of the calls the instructor's cell makes, on inputs that cell
chose. Where a speed check of the same cell is timed from the grading process (on inputs made from seeds drawn
there), the grading process also asks for TensorFlow's own trace count of each checked function
(``experimental_get_tracing_count``, read only from an object of ``tf.function``'s own class) before the first
timed call and after the last (:func:`count`), and decides here (:func:`retraced`): a function that the worker's
checks already traced and that traces again on those fresh inputs fails the test cell.
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
    what: str = "Your function"
    section: str | None = None


def traces_checks(grade_id: str, source: str) -> list[TracesCheck]:
    """The functions that ``assert_traces_at_most`` calls at the top level of a test cell's ``source`` check
    (as a statement or assigned), each once."""
    from tfperf.autograding.cells import top_level_calls

    found: dict[str, TracesCheck] = {}
    for node, kw in top_level_calls(source, "assert_traces_at_most"):
        function = node.args[0] if node.args else kw.get("fn")
        if function is None:
            continue
        try:
            what = ast.literal_eval(kw["what"]) if "what" in kw else "Your function"
            section = ast.literal_eval(kw["section"]) if "section" in kw else None
        except ValueError:
            what, section = "Your function", None
        text = ast.get_source_segment(source, function)
        found.setdefault(
            text,
            TracesCheck(
                grade_id,
                text,
                what.split(" (")[0] if isinstance(what, str) else "Your function",
                section if isinstance(section, str) else None,
            ),
        )
    return list(found.values())


# ---------------------------------------------------------------- in the worker


def count(request: dict, namespace: dict) -> dict:
    """A worker's reply to ``{"do": "traces", "function": ...}``: TensorFlow's own count of the traces of that
    ``tf.function`` (an object of its own class: a subclass could report another count)."""
    from tensorflow.python.eager.polymorphic_function import polymorphic_function

    function = eval(str(request["function"]), namespace)
    if type(function) is not polymorphic_function.Function:
        raise TypeError(f"{request['function']} is not a tf.function of TensorFlow's own class")
    return {"count": int(polymorphic_function.Function.experimental_get_tracing_count(function))}


# ---------------------------------------------------------------- in the grading process


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
    return None
