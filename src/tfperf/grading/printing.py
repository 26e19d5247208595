"""Checks of what learner code prints (print and tf.print alike)."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from tfperf.grading import guard
from tfperf.grading.calls import GradingFailure, call, call_capturing, reread
from tfperf.measure import graph_dtypes, op_counts
from tfperf.runtime import logs


def print_nodes(ops: op_counts.OpCounts) -> int:
    """The ``tf.print`` nodes of the ``tf.function`` graphs that ran while ``ops`` counted, and of every function
    they call: each runs on every call of its graph, whatever becomes of what it writes."""
    ran = [name for name in ops.raw_runs if name.startswith("__inference_")]
    return sum(graph_dtypes.nodes_of(ran, graph_dtypes.PRINT_OPS).values())


@guard.checked
def assert_prints_at_most(
    fn: Callable[..., Any], args: Sequence[Any], limit: int, *, what: str, section: str | None = None
) -> Any:
    """Call ``fn(*args)`` capturing stdout and stderr; fail if it printed more than ``limit`` lines.

    ``print`` and ``tf.print`` both count; Python warnings and TensorFlow's own log noise
    do not. Returns what ``fn`` returned.
    """
    from tfperf.grading.remote import Remote

    if isinstance(fn, Remote):  # in the judge: the lines read from the answer's process's own output stream
        result = call(fn, args, who=what, section=section)
        if fn.printed.get("unread"):
            raise GradingFailure(f"What {what} printed could not be read.{reread(section)}")
        count, lines = int(fn.printed.get("count", 0)), [str(line) for line in fn.printed.get("lines", [])]
        graph_prints = int(fn.printed.get("graph_prints", 0))
    else:
        with op_counts.counting_where_imported() as ops:
            result, captured = call_capturing(fn, args, who=what, section=section, stdout=True)
        printed = "\n".join((captured.stdout, captured.python, captured.native))
        lines = [line for line in printed.splitlines() if line.strip() and not logs.is_noise(line)]
        count = len(lines)
        graph_prints = print_nodes(ops)
    if limit == 0 and graph_prints and count == 0:
        raise GradingFailure(
            f"{what} ran graphs that hold {graph_prints} tf.print node(s): nothing reached the output read here, but "
            "a tf.print runs on every call of its graph whatever becomes of what it writes (a file, a log level "
            f"that is not shown). Remove it from the step.{reread(section)}"
        )
    if count > limit:
        first = lines[0] if lines and len(lines[0]) <= 60 else (lines[0][:57] + "..." if lines else "")
        raise GradingFailure(
            f"{what} printed {count} lines (the first: {first!r}); at most {limit} expected. "
            f"Printing from a loop (print or tf.print) costs time on every step.{reread(section)}"
        )
    return result


@guard.checked
def assert_prints_each_call(
    fn: Callable[..., Any],
    calls: Sequence[Sequence[Any]],
    patterns: Sequence[str],
    *,
    what: str = "Your function",
    section: str | None = None,
) -> list[str]:
    """Fail unless call ``i`` of ``fn`` (with ``calls[i]``) prints output matching regex ``patterns[i]``.

    Output is captured at the Python and file-descriptor levels on stdout and stderr, so
    ``print`` and ``tf.print`` both count. Returns what each call printed.
    """
    if len(calls) != len(patterns):
        raise ValueError("calls and patterns must have the same length")
    from tfperf.grading.remote import Remote

    printed = []
    for i, (args, pattern) in enumerate(zip(calls, patterns)):
        if isinstance(fn, Remote):  # in the judge: read from the answer's process's own output stream
            call(fn, tuple(args), who=what, section=section)
            text = "\n".join(str(line) for line in fn.printed.get("lines", []))
        else:
            _, out = call_capturing(fn, tuple(args), who=what, section=section, stdout=True)
            text = out.text
        printed.append(text)
        if not re.search(pattern, text):
            shown = repr(text[:200]) if text.strip() else "nothing"
            raise GradingFailure(
                f"Call {i + 1} of {len(calls)} to {what} printed {shown}; expected output matching {pattern!r}."
                f"{reread(section)}"
            )
    return printed
