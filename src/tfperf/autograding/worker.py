"""The process that grades one exercise outside the kernel: ``python -m tfperf.autograding.worker``.

Started by :class:`tfperf.autograding.outside.GradeOutsideKernel`, sandboxed. It reads one message (the
cells to run, which of them is the learner's answer and what restricts it, the test cells, a key), runs the cells
in one namespace as plain Python (no IPython), the answer restricted (:mod:`tfperf.autograding.restricted`), then
each test cell, and reports after every cell (and before the answer cell, where it waits to be told to go on:
the grading process reads what this process holds then, for the memory checks), each report tagged with the key; after the last, it echoes the token
the grading process then sends (``sync``). Then it serves the speed checks that the grading process times
(:mod:`tfperf.autograding.recheck`): the answer's function called on inputs made from the seeds it is sent, the
clock read over there. It imports only what it needs to talk: nbgrader stays out of it.
"""

from __future__ import annotations

import builtins
import contextlib
import io
import linecache
import os
import sys
import traceback

from tfperf.grading.messages import WorkerStopped, receive, send

#: Characters of a test cell's printed output kept for the feedback.
PRINTED_LIMIT = 4000


def _failure(err: BaseException) -> dict:
    """An exception as nbgrader's error output: its name, message and a short traceback."""
    render = getattr(err, "_render_traceback_", None)
    if callable(render):
        lines = render()
    else:
        tb = err.__traceback__.tb_next if err.__traceback__ is not None else None  # not this module's frame
        lines = "".join(traceback.format_exception(type(err), err, tb, limit=-4)).splitlines()
    return {"ename": type(err).__name__, "evalue": str(err), "traceback": [str(line) for line in lines]}


def _run_cell(source: str, name: str, namespace: dict, *, answer: dict | None = None) -> dict | None:
    """Run one cell's source, an answer's restricted (:func:`tfperf.autograding.restricted.run_answer`, ``answer``
    its keywords); its error as :func:`_failure` describes it, or None."""
    linecache.cache[name] = (len(source), None, source.splitlines(keepends=True), name)  # AutoGraph reads it
    try:
        if answer is not None:
            from tfperf.autograding import sandbox
            from tfperf.autograding.restricted import run_answer

            sandbox.confine_thread()  # this thread, and what it starts from now on: see sandbox's Landlock section
            run_answer(source, name, namespace, **answer)
        else:
            exec(compile(source, name, "exec"), namespace)
    except BaseException as err:  # noqa: BLE001 (SystemExit and KeyboardInterrupt too: the cell failed)
        return _failure(err)
    return None


def serve(requests, replies) -> None:
    """A worker: run the cells it is sent, then each test cell, reporting after every one."""
    header, _ = receive(requests)
    key = header["key"]

    def report(**message) -> None:
        send(replies, {"key": key, **message})

    if header.get("return_large_frees"):  # an exercise that checks memory, read from outside: see its docstring
        from tfperf.runtime.processes import return_large_frees

        return_large_frees()
    namespace: dict = {"__name__": "__main__"}
    restriction = {"imports": header.get("imports", ()), "withheld": header.get("withheld", ())}
    for index, source in enumerate(header["cells"]):
        answer = restriction if index == header.get("answer") else None
        if answer is not None:  # the grading process reads what this process holds before any answer runs
            from tfperf.autograding.judged_calls import keep_counters_installed

            keep_counters_installed()
            report(held=index)
            if receive(requests)[0].get("do") != "go":
                return
        error = _run_cell(source, f"<cell {index + 1}>", namespace, answer=answer)
        report(cell=index, error=error)
    # The instructor's test cells (and the checks served afterwards) see every name of the exercise, with Python's
    # own builtins: the namespace keeps the answer's restricted ones, which the answer's functions (and those AutoGraph
    # makes again from them) use whenever they run.
    checks = {**namespace, "__builtins__": builtins}
    for grade_id, source in zip(header["tests"], header["test_sources"]):
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            error = _run_cell(source, f"<test {grade_id}>", checks)
        report(test=grade_id, printed=printed.getvalue()[-PRINTED_LIMIT:], error=error)
    report(finished=True)
    last: dict = {}

    def next_request() -> dict:
        header, last["arrays"] = receive(requests)
        return header

    serve_outside_checks(next_request, report_with_arrays(replies, key), checks, lambda: last.get("arrays", []))


def report_with_arrays(replies, key: str):
    def report(header: dict, arrays: list | None = None) -> None:
        send(replies, {"key": key, **header}, arrays)

    return report


def serve_outside_checks(next_request, report, namespace: dict, arrays=lambda: []) -> None:
    """Until ``exit`` (or the end of the requests), the checks the grading process makes from outside: ``call``
    calls the answer's function for the judge on the arguments sent (``arrays()``: the request's arrays), its result
    sent as data (:func:`tfperf.autograding.judged_calls.answer_call`); each other request's expressions are evaluated in the
    exercise's namespace: a name of :data:`tfperf.autograding.check_kinds.PROBES` (``prints``: a function called once,
    its output read by the grading process; ``bytes``, ``traces``) replies with that reading; ``speed`` serves a
    function's samples (:mod:`tfperf.autograding.recheck`)."""
    from tfperf.autograding.check_kinds import PROBES
    from tfperf.autograding.judged_calls import answer_call
    from tfperf.autograding.recheck import serve_samples

    while True:
        try:
            request = next_request()
        except WorkerStopped:
            return
        if request.get("do") == "call":  # for the judge: tfperf.autograding.judge

            def ask(message: dict, sent: list) -> tuple[dict, list]:  # a check's function called back
                report(message, sent)
                return next_request(), arrays()

            try:
                report(*answer_call(request, arrays(), namespace, ask, PROBES))
            except BaseException as err:  # noqa: BLE001 (reported: the judge decides)
                report({"error": _failure(err)})
            continue
        if request.get("do") == "sync":  # see outside._Replies.sync
            report({"sync": str(request.get("token"))})
            continue
        if request.get("do") in PROBES:
            try:
                report(PROBES[request["do"]](request, namespace))
            except BaseException as err:  # noqa: BLE001 (reported: the grading process decides)
                report({"error": _failure(err)})
            continue
        if request.get("do") != "speed":
            return
        try:
            function = eval(str(request["function"]), namespace)
            make_inputs = eval(str(request["make_inputs"]), namespace)
        except BaseException as err:  # noqa: BLE001 (reported: the grading process decides)
            report({"error": _failure(err)})
            continue
        report({"ready": True})
        serve_samples(next_request, report, function, make_inputs)


def _worker_main() -> None:
    replies = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # whatever the cells print goes to stderr, never into the replies
    requests = sys.stdin.buffer
    serve(requests, replies)


if __name__ == "__main__":
    _worker_main()
