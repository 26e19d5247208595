"""The judge: the process that runs an exercise's test cells where no learner code ever ran.

An exercise is graded by two processes. The *subject* (:mod:`tfperf.autograding.worker`, sandboxed) runs the given
cells and the learner's answer, restricted. The *judge* (``python -m tfperf.autograding.judge``, started by the
grading process) runs the instructor's cells before the answer (no answer at all, neither the learner's nor the
reference), then the instructor's test cells, with every name the answer defines bound to a :class:`tfperf.grading.remote.Remote`: a call of it goes, through the grading process, to the subject,
which calls the answer's function on the arguments the judge chose and sends back what it returned as data
(:func:`tfperf.grading.remote.pack`: JSON and ``.npy`` arrays, never pickles; the worker's side:
:mod:`tfperf.autograding.worker`). Everything the check then decides (the expected values, the
comparison, the verdict) is computed in the judge; the subject only answers.

What the judge learns besides a call's result comes from outside the subject: the lines a call printed are read by
the grading process from the subject's own output stream (:mod:`tfperf.grading.printing`), between markers carrying
a token drawn for that call; a function's bytes are counted in the judge from the XLA module the subject sends
(:mod:`tfperf.grading.traffic`); the memory its processes hold is read by the grading process in ``/proc`` (and
NVML on a GPU), now and before the answer cell ran (:func:`tfperf.runtime.processes.held_bytes`); a ``tf.function``'s trace count is read in the subject from an object of
TensorFlow's own class (the third kind of evidence of docs/instructors.md: installed before any learner code, out of
the restricted answer's reach).

A test cell runs in the judge where every check it makes has a judge-side form (:data:`JUDGED_CHECKS`), the
answer's names appear only where a judged check or a call takes them (:func:`judged`), and no given cell runs after
the answer (:meth:`tfperf.autograding.outside.Exercise.in_judge`); the other test cells still run in the subject,
after the answer.
"""

from __future__ import annotations

import ast
import contextlib
import io
import linecache
import os
import sys
from typing import Any

from tfperf.autograding import check_kinds
from tfperf.grading.calls import is_marked_wrong
from tfperf.grading.messages import WorkerStopped, receive, send
from tfperf.grading.remote import NotData, Remote, ReturnedNotData, pack, raised, unpack

#: The checks of ``tfperf.grading`` whose judge-side form takes a :class:`Remote` where the learner's function goes.
JUDGED_CHECKS = frozenset(
    {
        "check_function",
        "check_same_as",
        "check_same_result",
        "assert_speedup",
        "assert_memory_flat",
        "assert_moves_fewer_bytes",
        "assert_prints_at_most",
        "tracing_count",
        "assert_traces_at_most",
        "assert_host_syncs_at_most",
        "assert_uploads_at_most",
        "assert_prints_each_call",
        "check_reports",
        "GradingFailure",
    }
)
#: What the judge may ask about the subject besides a call: the readings of the check kinds (a function's bytes and
#: trace count), and counting over calls (read in the subject); the memory its processes hold (read by the grading
#: process, never asked of it).
PROBES = (*check_kinds.PROBES, "count_start", "count_stop", "memory")
#: Names a judged cell may not use: a clock read in the judge would time the pipes between the processes (the
#: course's ``timing``, Python's ``time`` and ``timeit``).
UNJUDGED_NAMES = frozenset({"timing", "time", "timeit"})
#: Characters of a test cell's printed output kept for the feedback (as the subject keeps them).
PRINTED_LIMIT = 4000


# ---------------------------------------------------------------- which test cells the judge runs


def answer_names(answer_source: str) -> tuple[str, ...]:
    """The names the instructor's answer cell defines at its top level (functions, classes, assigned names), in
    order; its imports are not among them (the judge has its own modules)."""
    try:
        tree = ast.parse(answer_source)
    except SyntaxError:
        return ()
    names: list[str] = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.append(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                names += [n.id for n in ast.walk(target) if isinstance(n, ast.Name)]
    return tuple(dict.fromkeys(names))


def judged(test_source: str, names: tuple[str, ...], *, timed_outside: bool = True) -> bool:
    """Whether the test cell ``test_source`` runs in the judge: it uses only :data:`JUDGED_CHECKS` of ``grading``,
    and each of the answer's ``names`` only as a function it calls or as the first argument of a judged check. A speed
    check is never timed in the judge (each call of the answer crosses two pipes): a cell with one is judged only
    where the grading process times it (``timed_outside``)."""
    if not names:
        return False
    try:
        tree = ast.parse(test_source)
    except SyntaxError:
        return False
    allowed: set[int] = set()  # the Name nodes that may be answer names
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "grading":
            if node.attr not in JUDGED_CHECKS or (node.attr == "assert_speedup" and not timed_outside):
                return False
        if isinstance(node, ast.Call):
            if isinstance(node.func, ast.Name):
                allowed.add(id(node.func))
            if isinstance(node.func, ast.Attribute) and node.func.attr in JUDGED_CHECKS and node.args:
                allowed.add(id(node.args[0]))
            allowed |= {id(k.value) for k in node.keywords if k.arg in ("fn", "candidate")}
    used = [n for n in ast.walk(tree) if isinstance(n, ast.Name)]
    return all(id(n) in allowed for n in used if n.id in names) and not any(n.id in UNJUDGED_NAMES for n in used)


# ---------------------------------------------------------------- in the judge


class SubjectFailed(Exception):
    """The subject's process stopped, or its reply was not data: the test cell is not graded."""


class Channel:
    """The judge's line to the grading process: each call of a :class:`Remote` is a request and waits for its reply."""

    def __init__(self, requests, replies):
        self.requests, self.replies = requests, replies

    def ask(self, name: str, args: tuple, probe: str | None = None, **detail: Any) -> tuple[dict, list]:
        callbacks: list = []
        try:
            description, arrays = pack(tuple(args), callbacks=callbacks)
        except NotData as err:
            raise TypeError(f"the judge cannot send {name}'s arguments to the answer's process ({err})") from None
        send(self.replies, {"call": name, "args": description, "probe": probe, **detail}, arrays)
        header, arrays = receive(self.requests)
        while "callback" in header:  # the answer called a function the check passed: it runs here, on data
            try:
                function = callbacks[int(header["callback"])]
                keywords = unpack(header["keywords"], arrays) if header.get("keywords") is not None else {}
                description, out = pack(function(*unpack(header.get("args"), arrays), **dict(keywords)))
                send(self.replies, {"called_back": description}, out)
            except Exception as err:  # noqa: BLE001 (the answer's call of it fails)
                send(self.replies, {"callback_error": f"{type(err).__name__}: {err}"})
            header, arrays = receive(self.requests)
        if "stopped" in header:
            raise SubjectFailed(str(header["stopped"]))
        error = header.get("error")
        if isinstance(error, dict):
            raise raised(str(error.get("ename", "Error")), str(error.get("evalue", "")))
        if probe is None and "not_data" in header:
            raise ReturnedNotData(str(header["not_data"]))
        if probe is None and "result" not in header:
            raise SubjectFailed("the answer's process sent no result")
        return header, arrays


def serve(requests, replies) -> None:
    """The judge: for each exercise it is sent (until ``exit`` or the end of its requests), :func:`judge_exercise`.
    It runs no learner code, so one judge serves one exercise after another, each in a new namespace."""
    while True:
        try:
            header, _ = receive(requests)
        except WorkerStopped:
            return
        if header.get("do") == "exit":
            return
        judge_exercise(header, requests, replies)


def judge_exercise(header: dict, requests, replies) -> None:
    """Run the instructor's cells, bind the answer's names to :class:`Remote`, run each test cell it is sent, and
    report each (what it printed, the error it raised); then ``finished``."""
    from tfperf.autograding.worker import _failure, _run_cell

    namespace: dict = {"__name__": "__main__"}
    channel = Channel(requests, replies)
    for index, source in enumerate(header["cells"]):
        error = _run_cell(source, f"<cell {index + 1}>", namespace)
        if error is not None:
            send(replies, {"failed": f"the instructor's cell {index + 1} raised {error['ename']}: {error['evalue']}"})
            return
    for name in header["answer_names"]:
        namespace[name] = Remote(name, channel)
    for grade_id, source in zip(header["tests"], header["test_sources"]):
        name = f"<test {grade_id}>"
        linecache.cache[name] = (len(source), None, source.splitlines(keepends=True), name)
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            try:
                exec(compile(source, name, "exec"), namespace)
                error = None
            except SubjectFailed as err:
                error = {"ename": "GradedOutsideKernel", "evalue": f"the answer's process stopped: {err}"}
            except BaseException as err:  # noqa: BLE001 (the test cell failed)
                error = _failure(err)
                if is_marked_wrong(err):  # calls.wrong_result, raised here: no learner code ran
                    error["wrong_result"] = True
        send(replies, {"test": grade_id, "printed": printed.getvalue()[-PRINTED_LIMIT:], "error": error})
    send(replies, {"finished": True})


def _judge_main() -> None:
    replies = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # what the instructor's cells print goes to stderr, never into the replies
    serve(sys.stdin.buffer, replies)


if __name__ == "__main__":
    _judge_main()
