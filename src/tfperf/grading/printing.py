"""The prints check kind: what learner code prints (``print`` and ``tf.print`` alike), asserted in a notebook and
decided by the grading process from what the answer's process really wrote.

- **The assertions** (:func:`assert_prints_at_most`, :func:`assert_prints_each_call`), as the notebooks call them:
  in the learner's kernel they capture ``sys.stdout`` and the file descriptors for the call; in the judge
  (:class:`tfperf.grading.remote.Remote`) they read the lines the judged call printed.
- **In the answer's process** (:func:`witnessed_call`, :func:`read`): a call run between a start marker and an end
  marker carrying a token drawn by the grading process, nothing captured. A check inside that process captures
  what a call prints by replacing ``sys.stdout`` and the file descriptors: an answer could notice that and stay
  quiet only while it is watched, so the grading process watches from outside.
- **In the grading process** (:class:`WorkerOutput`): the worker's stdout goes to its stderr (see
  :mod:`tfperf.autograding.worker`), a pipe read here on a thread; the lines between the two markers are what the
  call printed (``print``, ``sys.stdout``/``sys.stderr``, and ``tf.print`` from C++ alike), TensorFlow's own log
  noise left out.
- **What a test cell asks** (:class:`PrintsCheck`, :func:`prints_checks`): each top-level
  ``grading.assert_prints_at_most(function, args, limit, ...)``, called again uncaptured and its lines counted
  (:func:`decide`); where a speed check of the same cell times the same function, its timed calls are watched the
  same way (:func:`while_timed`). A check kind of :mod:`tfperf.autograding.check_kinds` (:func:`specs`,
  :func:`decide`).
"""

from __future__ import annotations

import ast
import re
import secrets
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, BinaryIO

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


#: Lines of a watched call kept for the message (the rest are only counted).
KEPT_LINES = 5
#: Seconds the grading process waits for a watched call's end marker once the worker replied (the worker
#: wrote it before its reply: only the reading thread's delay is waited for).
MARKER_SECONDS = 2.0


# ---------------------------------------------------------------- in the worker


def witnessed_call(token: str, call: Callable[[], object]) -> object:
    """Run ``call`` between the two markers of ``token`` on file descriptor 2, nothing captured: Python's
    logging muted and warnings ignored, as :func:`tfperf.grading.assert_prints_at_most` leaves them out."""
    import logging
    import os
    import sys
    import warnings

    from tfperf.runtime import device

    def mark(text: str) -> None:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError, AttributeError):
                pass
        os.write(2, f"\n{token} {text}\n".encode())

    previous = logging.root.manager.disable
    logging.disable(logging.CRITICAL)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            mark("start")
            try:
                result = call()
                if "tensorflow" in sys.modules:  # work it queued may still be running; none where it never came
                    device.sync()
            finally:
                mark("end")
    finally:
        logging.disable(previous)
    return result


def read(request: dict, namespace: dict) -> dict:
    """A worker's reply to ``{"do": "prints", "function": ..., "args": ..., "witness": token}`` (expressions in
    ``namespace``): the function called once between the token's markers (:func:`witnessed_call`), nothing captured
    there; the grading process reads what it printed."""
    from tfperf.measure import timing

    function, args = eval(str(request["function"]), namespace), eval(str(request["args"]), namespace)
    witnessed_call(str(request["witness"]), lambda: timing.settle(function(*args)))
    return {"ok": True}


# ---------------------------------------------------------------- in the grading process


@dataclass
class Printed:
    """The lines a watched call printed (noise left out): how many, and the first few."""

    count: int = 0
    lines: list[str] = field(default_factory=list)

    def add(self, line: str) -> None:
        from tfperf.runtime import logs

        if line.strip() and not logs.is_noise(line):
            self.count += 1
            if len(self.lines) < KEPT_LINES:
                self.lines.append(line)


class WorkerOutput:
    """A worker's output stream, read to its end on a thread: only the lines between the markers of a
    token drawn by :meth:`token` are kept (:meth:`printed`); everything else is read and dropped."""

    def __init__(self, stream: BinaryIO):
        self._watched: dict[str, Printed] = {}
        self._ended: set[str] = set()
        self._open: str | None = None
        self._changed = threading.Condition()
        threading.Thread(target=self._read, args=(stream,), daemon=True).start()

    def token(self) -> str:
        token = secrets.token_hex(16)
        with self._changed:
            self._watched[token] = Printed()
        return token

    def _read(self, stream: BinaryIO) -> None:
        for raw in iter(stream.readline, b""):
            line = raw.decode(errors="replace").rstrip("\r\n")
            with self._changed:
                self._line(line)
                self._changed.notify_all()
        with self._changed:
            self._open = None
            self._changed.notify_all()

    def _line(self, line: str) -> None:
        words = line.split(" ")
        if len(words) == 2 and words[0] in self._watched and words[1] in ("start", "end"):
            token, what = words
            if what == "start" and token not in self._ended:
                self._open = token
            elif what == "end" and token == self._open:
                self._ended.add(token)
                self._open = None
        elif self._open is not None:
            self._watched[self._open].add(line)

    def printed(self, token: str, *, wait: float = MARKER_SECONDS) -> Printed | None:
        """What the call watched with ``token`` printed; None if its end marker was not read in ``wait``
        seconds (the stream was closed, redirected or never marked)."""
        with self._changed:
            self._changed.wait_for(lambda: token in self._ended, timeout=wait)
            return self._watched[token] if token in self._ended else None


# ---------------------------------------------------------------- what the test cells ask


@dataclass(frozen=True)
class PrintsCheck:
    """One top-level ``grading.assert_prints_at_most`` call of a test cell, as source text."""

    grade_id: str
    function: str
    args: str
    limit: int
    what: str
    section: str | None


def prints_checks(grade_id: str, source: str) -> list[PrintsCheck]:
    """The ``assert_prints_at_most`` calls at the top level of a test cell's ``source`` whose limit is a
    number (the ones inside a function of the cell need that function's variables: not found here)."""
    from tfperf.grading.specs import arguments, literal, top_level_calls

    found = []
    for node, _ in top_level_calls(source, assert_prints_at_most.__name__):
        try:
            given = arguments(node, assert_prints_at_most)
            function, args = (ast.get_source_segment(source, given[name]) for name in ("fn", "args"))
            limit, what, section = (literal(given[name]) for name in ("limit", "what", "section"))
        except (ValueError, TypeError):  # not written as literals, or a required argument missing
            continue
        if not isinstance(limit, int) or not isinstance(what, str):
            continue
        found.append(PrintsCheck(grade_id, function, args, limit, what, section if isinstance(section, str) else None))
    return found


def too_many(printed: Printed | None, limit: int, calls: int, what: str, section: str | None) -> str | None:
    """The failure message where ``calls`` watched calls printed more than ``limit`` lines each, or could
    not be watched; None where they printed no more."""
    again = reread(section)
    if printed is None:
        return (
            f"the grading process could not read what {what} printed (its output stream was closed or "
            f"redirected): answers must leave the output streams as they are.{again}"
        )
    if printed.count <= limit * calls:
        return None
    first = printed.lines[0] if len(printed.lines[0]) <= 60 else printed.lines[0][:57] + "..."
    allowed = f"at most {limit} expected" + (f" for each of {calls} calls" if calls > 1 else "")
    return (
        f"{what} printed {printed.count} lines while the grading process watched it (the first: {first!r}); "
        f"{allowed}. Printing from a loop (print or tf.print) costs time on every step.{again}"
    )


# ---------------------------------------------------------------- a check kind (tfperf.autograding.check_kinds)


#: A cell the judge ran is not watched again here: the judge read what its calls printed (:mod:`tfperf.autograding.judge`).
AFTER_THE_JUDGE = False


def specs(grading, grade_id: str, source: str) -> list[PrintsCheck]:
    """The prints checks of a test cell that the grading process watches once the cell passed in the answer's
    worker."""
    return prints_checks(grade_id, source)


def decide(grading, check: PrintsCheck, outcome) -> None:
    """Call the function of ``check`` once more in the answer's worker, nothing captured there, and count
    here the lines it really printed: more than the check's limit fails its test cell."""
    from tfperf.grading.messages import CallFailed

    said = "Watched by the grading process, out of the notebook's reach"
    try:
        token = grading.answer.call_watched(check.function, check.args)
    except CallFailed as err:
        outcome.fail(f"{said}: {check.what} raised {err}")
        return
    if problem := too_many(grading.answer.output.printed(token), check.limit, 1, check.what, check.section):
        outcome.fail(f"{said}: {problem}")


def while_timed(output: WorkerOutput, watched: list[tuple[str, int]], check: PrintsCheck) -> str | None:
    """The failure message where the timed calls (``watched``: the token and the number of calls of each run)
    printed more than ``check`` allows; None where they did not."""
    total = Printed()
    for token, _ in watched:
        seen = output.printed(token)
        if seen is None:
            return too_many(None, check.limit, 1, check.what, check.section)
        total.count += seen.count
        total.lines += seen.lines[: KEPT_LINES - len(total.lines)]
    calls = sum(calls for _, calls in watched)
    return too_many(total, check.limit, calls, check.what, check.section)
