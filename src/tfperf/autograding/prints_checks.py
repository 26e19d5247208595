"""What a worker really printed, read by the grading process from the worker's own output stream.

A check inside the worker captures what a call prints by replacing ``sys.stdout`` and the file
descriptors for the call: an answer can notice that and stay quiet only while it is watched. So the
grading process also watches from outside. A worker's stdout goes to its stderr (see
:mod:`tfperf.autograding.worker`), a pipe that this process reads on a thread (:class:`WorkerOutput`).
For a call it wants to see (:func:`witnessed_call`, in the worker), the worker writes a start marker
and an end marker carrying a token drawn here, and sends its reply only after the end marker: the lines
between the two markers are what the call printed (``print``, ``sys.stdout``/``sys.stderr``, and
``tf.print`` from C++ alike), read here, with TensorFlow's own log noise left out.

What a test cell says about printing is :class:`PrintsCheck`: each top-level
``grading.assert_prints_at_most(function, args, limit, ...)`` of the instructor's test cells. The grading
process calls it again uncaptured and counts the lines (:func:`check_outside`); where a speed check of the
same cell times the same function, its timed calls are watched the same way (:func:`while_timed`). A check kind of
:mod:`tfperf.autograding.check_kinds` (:func:`specs`, :func:`decide`).
"""

from __future__ import annotations

import ast
import secrets
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import BinaryIO

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
    from tfperf.autograding.cells import arguments, literal, top_level_calls
    from tfperf.grading.printing import assert_prints_at_most

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
    reread = f'\nReread the section "{section}".' if section else ""
    if printed is None:
        return (
            f"the grading process could not read what {what} printed (its output stream was closed or "
            f"redirected): answers must leave the output streams as they are.{reread}"
        )
    if printed.count <= limit * calls:
        return None
    first = printed.lines[0] if len(printed.lines[0]) <= 60 else printed.lines[0][:57] + "..."
    allowed = f"at most {limit} expected" + (f" for each of {calls} calls" if calls > 1 else "")
    return (
        f"{what} printed {printed.count} lines while the grading process watched it (the first: {first!r}); "
        f"{allowed}. Printing from a loop (print or tf.print) costs time on every step.{reread}"
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
    from tfperf.autograding.messages import CallFailed

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


__all__ = [
    "PrintsCheck",
    "Printed",
    "WorkerOutput",
    "decide",
    "prints_checks",
    "read",
    "specs",
    "too_many",
    "while_timed",
    "witnessed_call",
]
