"""The traces check kind: how often a ``tf.function`` traces, and that its graphs are what runs.

- **The assertions** (:func:`tracing_count`, :func:`assert_traces_at_most`), as the notebooks call them.
- **What a test cell asks** (:class:`TracesCheck`, :func:`traces_checks`): each function that a top-level
  ``grading.assert_traces_at_most`` of the cell checks. In the answer's worker the assertion counts the traces of
  the calls the instructor's cell makes, on inputs that cell chose.
- **In the answer's process** (:func:`read`): TensorFlow's own trace count of a checked function
  (``experimental_get_tracing_count``, read only from an object of ``tf.function``'s own class) and its count of
  eager calls.
- **In the grading process** (:func:`counted`, :func:`retraced`): where a speed check of the same cell is timed
  from the grading process (on inputs made from seeds drawn there), the counts are read before the first timed call
  and after the last: a function that the checks already traced and that traces again on those fresh inputs fails
  the test cell, as does one that the timed calls did not call as a graph at least once each (an answer that runs
  its graph only on the checks' own inputs, which the given functions make the same on every run, and its Python
  function on the timed ones).
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from tfperf.grading import guard
from tfperf.grading.calls import GradingFailure, call, reread
from tfperf.measure import op_counts, traces


def _require_tf_function(fn: Any, what: str, section: str | None) -> None:
    from tensorflow.python.eager.polymorphic_function import polymorphic_function

    if not isinstance(fn, polymorphic_function.Function):
        raise GradingFailure(
            f"{what} is not a tf.function (it is a {type(fn).__name__}). Make {what} itself the tf.function: "
            f"decorate it with @tf.function once, where it is defined (not inside another function or a loop)."
            f"{reread(section)}"
        )
    if type(fn) is not polymorphic_function.Function:  # a subclass could report other traces and graphs
        raise GradingFailure(
            f"{what} is of class {type(fn).__name__}, a subclass of tf.function's own: its traces are read only from "
            f"a tf.function that TensorFlow made. Decorate {what} with @tf.function.{reread(section)}"
        )


@guard.checked
def tracing_count(fn: Any, *, what: str = "Your function", section: str | None = None) -> int:
    """How many times the ``tf.function`` ``fn`` has traced; fail if it is not a ``tf.function``."""
    from tfperf.grading.remote import AnswerRaised, Remote

    if isinstance(fn, Remote):  # in the judge: TensorFlow's own count, read in the answer's process
        try:
            return int(fn.probe("traces")["count"])
        except (AnswerRaised, KeyError, TypeError, ValueError):
            raise GradingFailure(
                f"{what} is not a tf.function of TensorFlow's own class: decorate {what} with @tf.function once, "
                f"where it is defined.{reread(section)}"
            ) from None
    _require_tf_function(fn, what, section)
    return int(fn.experimental_get_tracing_count())


def _graph_names(fn: Any) -> set[str]:
    """The names under which the graphs of the ``tf.function`` ``fn`` run (``__inference_...``)."""
    names = set()
    for concrete in fn._list_all_concrete_functions():  # noqa: SLF001 (no public way to list them)
        name = concrete._inference_function.name  # noqa: SLF001
        names.add(name.decode() if isinstance(name, bytes) else name)
    return names


def python_nodes(fn: Any, ops: Any) -> int:
    """Nodes that call back into Python (:data:`tfperf.measure.graph_dtypes.PYTHON_OPS`) in the graphs of the
    ``tf.function`` ``fn`` that ran while ``ops`` (:func:`tfperf.measure.op_counts.counting`) counted, and in every
    function they call."""
    from tfperf.measure import graph_dtypes

    ran = [name for name in ops.raw_runs if name in _graph_names(fn)]
    return sum(graph_dtypes.nodes_of(ran, graph_dtypes.PYTHON_OPS).values())


@guard.checked
def assert_traces_at_most(
    fn: Any,
    n: int,
    calls: Sequence[Sequence[Any]] = (),
    *,
    run: Callable[[], Any] | None = None,
    what: str = "Your function",
    section: str | None = None,
    runs_at_least: int | None = None,
    in_all_at_most: int | None = None,
) -> int:
    """Fail unless the ``tf.function`` ``fn`` traces at most ``n`` times, and its graphs do the work.

    ``fn`` is called with each argument tuple of ``calls``, then ``run()`` (code that
    should call ``fn``) is run. Traces are counted as TensorFlow builds them
    (:mod:`tfperf.measure.traces`), and the executions of ``fn``'s graphs as they run
    (:mod:`tfperf.measure.op_counts`): they must run at least ``runs_at_least`` times (default:
    once per call, and once for ``run``), so code that avoids tracing by not using ``fn``
    fails. With ``in_all_at_most``, ``fn`` may also have traced at most that many times since it was made
    (TensorFlow's own count): tracing it ahead for every argument it may get is not tracing once. Returns the
    number of traces.
    """
    from tfperf.grading.remote import Remote

    if isinstance(fn, Remote):  # in the judge: counted in the answer's process, over the calls made from here
        tracing_count(fn, what=what, section=section)  # a tf.function of TensorFlow's own class
        with fn.counted(("traces",), (fn.__name__,)) as seen:
            for args in calls:
                call(fn, tuple(args), who=what, section=section)
            if run is not None:
                call(run, (), who="Your code", section=section)
        undone = [str(t) for t in seen.get("tampered", [])]
        mine = seen.get("functions", {}).get(fn.__name__, {})
        traced, executed, in_all, python = (int(mine.get(k, 0)) for k in ("traced", "runs", "in_all", "python_nodes"))
    else:
        _require_tf_function(fn, what, section)
        with traces.counting() as counted, op_counts.counting() as ops:
            for args in calls:
                call(fn, tuple(args), who=what, section=section)
            if run is not None:
                call(run, (), who="Your code", section=section)
            undone = traces.tampered() + ([] if op_counts.still_counting(ops) else ["TensorFlow's op callbacks"])
        if not undone:
            traced, executed = counted.of(fn), ops.runs_of(_graph_names(fn))
            in_all = int(fn.experimental_get_tracing_count())
            python = python_nodes(fn, ops)
    if undone:
        guard.verify("The tracing check")
        raise GradingFailure(
            f"The tracing check cannot grade: the grading environment was modified "
            f"({', '.join(undone)}). Remove the code that does it and run the notebook again."
        )
    wanted = len(calls) + (1 if run is not None else 0) if runs_at_least is None else runs_at_least
    if executed < wanted:
        by = "the code under test" if run is not None else f"{len(calls)} calls"
        raise GradingFailure(
            f"{what}'s graphs ran {executed} times during {by}; expected at least {wanted}. The work must be done "
            f"by {what} itself, as a tf.function, not by other code beside it.{reread(section)}"
        )
    if python:
        raise GradingFailure(
            f"{what}'s graph calls back into Python ({python} tf.py_function or tf.numpy_function node(s)): the "
            "Python inside runs eagerly, op by op, on every call, so tracing once does not make that work a graph. "
            f"Write it with TensorFlow operations inside the tf.function.{reread(section)}"
        )
    if traced > n:
        during = f"{len(calls)} calls" if calls else "one run of your code"
        raise GradingFailure(
            f"{what} was traced {traced} times during {during}; expected at most {n}. "
            f"Every trace runs your Python code again and builds a new graph: look for Python numbers "
            f"or changing shapes among its arguments.{reread(section)}"
        )
    if in_all_at_most is not None and in_all > in_all_at_most:
        raise GradingFailure(
            f"{what} has traced {in_all} times since it was made (TensorFlow's own count); expected at most "
            f"{in_all_at_most}. Tracing it ahead for every value an argument may take is not tracing once: each "
            f"of those graphs was built because an argument's value or shape is part of what {what} traces "
            f"for.{reread(section)}"
        )
    return traced


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
    from tfperf.grading.specs import MISSING, arguments, default, literal, top_level_calls

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
    from tfperf.grading.messages import CallFailed

    try:
        return answer.request(do="traces", function=check.function)
    except CallFailed:
        return None


def retraced(check: TracesCheck, before: Any, after: Any, calls: int) -> str | None:
    """The failure message where ``check``'s function traced during the ``calls`` timed calls (counts read
    before and after them); None where it did not."""
    again = reread(check.section)
    counts = [reply.get("count") if isinstance(reply, dict) else None for reply in (before, after)]
    if not all(isinstance(c, int) for c in counts):
        return f"the grading process could not read how often {check.what} traced.{again}"
    if counts[1] > counts[0]:
        return (
            f"{check.what} traced {counts[1] - counts[0]} more times during the {calls} calls timed on fresh inputs, "
            f"after the checks had already traced it: every trace runs your Python code again and builds a new "
            f"graph.{again}"
        )
    ran = [reply.get("calls") if isinstance(reply, dict) else None for reply in (before, after)]
    if not all(isinstance(c, int) for c in ran):
        return f"the grading process could not read how often {check.what} ran.{again}"
    if ran[1] - ran[0] < calls:
        return (
            f"{check.what} ran as a graph {ran[1] - ran[0]} times during the {calls} calls timed on fresh inputs; "
            f"at least once a call is expected: the timed calls must do their work through {check.what}, as the "
            f"checked calls did.{again}"
        )
    return None


class TracesCounted:
    """In the subject (:func:`tfperf.autograding.worker.counting_started`): the traces of every call until the
    judge stops counting, and the runs of each traced graph, by the course's counters (installed by the worker, out of
    the restricted answer's reach). :meth:`seen` reads them for the answer's functions ``names``: each one's traces,
    its graphs' runs, TensorFlow's own trace count and its graphs' Python nodes, where it is a ``tf.function`` of
    TensorFlow's own class."""

    def __init__(self, stack) -> None:
        self.traces = stack.enter_context(traces.counting())
        self.ops = stack.enter_context(op_counts.counting())

    def tampered(self) -> list[str]:
        return traces.tampered() + ([] if op_counts.still_counting(self.ops) else ["TensorFlow's op callbacks"])

    def seen(self, names: tuple[str, ...], namespace: dict) -> dict:
        from tensorflow.python.eager.polymorphic_function import polymorphic_function

        functions = {}
        for name in names:
            function = namespace.get(name)
            if type(function) is not polymorphic_function.Function:
                functions[name] = {"kind": type(function).__name__}
                continue
            functions[name] = {
                "traced": self.traces.of(function),
                "runs": self.ops.runs_of(_graph_names(function)),
                "in_all": int(polymorphic_function.Function.experimental_get_tracing_count(function)),
                "python_nodes": python_nodes(function, self.ops),
            }
        return {"functions": functions}
