"""The process that grades one exercise outside the kernel: ``python -m tfperf.autograding.worker``.

Started by :class:`tfperf.autograding.outside.GradeOutsideKernel`, sandboxed. It reads one message (the
cells to run, which of them is the learner's answer and what restricts it, the test cells, a key), runs the cells
in one namespace as plain Python (no IPython), the answer restricted (:mod:`tfperf.autograding.restricted`), then
each test cell, and reports after every cell (and before the answer cell, where it waits to be told to go on:
the grading process reads what this process holds then, for the memory checks), each report tagged with the key; after the last, it echoes the token
the grading process then sends (``sync``). Then it serves what the grading process asks from outside: the judge's
calls (:mod:`tfperf.autograding.judge`: the answer's function called on the judge's arguments, its result sent back
as data; the functions the check passed, called back in the judge; the library's counters run over those calls), the
readings of the check kinds, and the speed checks that the grading process times (:func:`serve_samples`: the answer's
function called on inputs made from the seeds it is sent, the clock read over there; the unfixed code's worker,
:mod:`tfperf.autograding.recheck`, serves its samples the same way). It imports only
what it needs to talk: nbgrader stays out of it.
"""

from __future__ import annotations

import builtins
import contextlib
import io
import linecache
import os
import random
import sys
import traceback
from collections.abc import Callable
from typing import Any

from tfperf.grading.messages import WorkerStopped, receive, send
from tfperf.grading.remote import NotData, pack, unpack

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
    sent as data (:func:`answer_call`); each other request's expressions are evaluated in the
    exercise's namespace: a name of :data:`tfperf.autograding.check_kinds.PROBES` (``prints``: a function called once,
    its output read by the grading process; ``bytes``, ``traces``) replies with that reading; ``speed`` serves a
    function's samples (:func:`serve_samples`)."""
    from tfperf.autograding.check_kinds import PROBES

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
            from tfperf.grading.speed import work_named

            function = eval(str(request["function"]), namespace)
            make_inputs = eval(str(request["make_inputs"]), namespace)
            work = work_named(request["work"]) if request.get("work") else None  # the course's, not the namespace's
        except BaseException as err:  # noqa: BLE001 (reported: the grading process decides)
            report({"error": _failure(err)})
            continue
        report({"ready": True})
        serve_samples(next_request, report, function, make_inputs, work=work)


# ---------------------------------------------------------------- the judge's calls, answered here


class CallbackFailed(RuntimeError):
    """A function the check passed to the answer raised in the judge (the answer's call of it fails)."""


def callback_stub(
    index: int, ask: Callable[[dict, list], tuple[dict, list]] | None, local: Callable[[tuple], Any] | None = None
) -> Callable:
    """In the subject, the function the check passed as argument ``index``: calling it sends its arguments (as data)
    to the judge, which runs the check's function (:meth:`Channel.ask`), and returns its result (as data). ``ask``
    sends one message and returns the reply. With ``local`` instead (a timed sample's function, made in this process:
    :func:`called_back`), the arguments go to ``local`` as they are: the same function to
    the answer, at the cost of a call. Arguments may be passed by name, as to the check's own function."""

    def called_back(*args: Any, **keywords: Any) -> Any:
        if local is not None:
            return local(args, keywords)
        from tfperf.measure import host_syncs

        # a tensor the answer passes is read here, counted as the answer's read: the check's function gets data
        description, arrays = pack(tuple(args))
        named, arrays = pack(dict(keywords), arrays)
        steps = _COUNTING.get("counters", {}).get("steps")
        if steps is not None:  # the training steps run when the answer called back (counting_started)
            steps.called_back()
        header, arrays = ask({"callback": index, "args": description, "keywords": named}, arrays)
        if "called_back" not in header:
            raise CallbackFailed(str(header.get("callback_error", "the check's function failed")))
        with host_syncs.uncounted():
            return unpack(header["called_back"], arrays)

    return called_back


def answer_call(
    request: dict, arrays: list, namespace: dict, ask=None, probes: dict | None = None
) -> tuple[dict, list]:
    """The subject's reply to ``{"do": "call", "function": name, "args": ..., "probe": ...}``: the answer's function
    ``name`` (a name its cells bound: looked up, never evaluated) called on the arguments sent, its result as data;
    with a ``probe`` among ``probes`` (:data:`tfperf.autograding.check_kinds.PROBES`), that reading instead (``"bytes"``: the bytes it
    moves; ``"traces"``: its trace count). A call with a ``witness`` token runs between that token's
    markers, nothing captured: the grading process reads what it prints. ``ask`` (one message out, its reply back)
    carries the calls of the check's functions passed as arguments (:func:`callback_stub`)."""
    from tfperf.grading.printing import witnessed_call
    from tfperf.measure import host_syncs
    from tfperf.runtime import logs

    probe = request.get("probe")
    if probe == "count_start":
        marks = request.get("marks")
        return counting_started(tuple(request.get("kinds") or ()), None if marks is None else int(marks)), []
    if probe == "count_stop":
        return counting_stopped(tuple(str(n) for n in request.get("names") or ()), namespace), []
    name = str(request.get("function"))
    if name not in namespace:
        raise NameError(f"name {name!r} is not defined")
    function = namespace[name]
    stub = None if ask is None else (lambda index: callback_stub(index, ask))
    with host_syncs.uncounted():  # the judge's values made tensors here: not the answer's uploads
        args = tuple(unpack(request.get("args"), arrays, stub)) if request.get("args") is not None else ()
    host_syncs.give(list(args))  # the call's own arguments: reading their shapes is not a sync
    if probe is not None:
        if probe not in (probes or {}):
            raise ValueError(f"no reading called {probe!r} here")
        return probes[probe]({"function": "f", "args": "a"}, {"f": function, "a": args}), []
    graph_prints = 0
    if request.get("witness"):
        from tfperf.grading.printing import print_nodes
        from tfperf.measure import op_counts

        with op_counts.counting_where_imported() as ops:
            result = witnessed_call(str(request["witness"]), lambda: function(*args))
        graph_prints = print_nodes(ops)
    else:
        with logs.captured_output():
            result = function(*args)
    try:
        with host_syncs.uncounted():  # read to be sent: not the answer's reads
            description, packed = pack(result)
    except NotData as err:
        return {"not_data": str(err)}, []
    return {"result": description, "graph_prints": graph_prints}, packed


def counters() -> dict[str, Callable[[contextlib.ExitStack], Any]]:
    """The counters of the kinds the judge counts over its calls (:data:`tfperf.grading.remote.COUNTED`), each in its
    kind's module: made with the block's ``ExitStack``, then ``tampered()`` (what was undone meanwhile) and
    ``seen(names, namespace)`` (what it counted, as data). Imported when asked for, as the worker needs them."""
    from tfperf.grading import syncs, tracing

    return {"host_syncs": syncs.HostSyncsCounted, "steps": syncs.StepsCounted, "traces": tracing.TracesCounted}


def keep_counters_installed() -> None:
    """Where the cells run so far imported TensorFlow, install the host-read and upload counter's wrappers for good
    (:func:`tfperf.measure.host_syncs.keep_installed`): the answer sees the same library functions in the calls the
    judge counts as in every other. The exercise's worker calls it before the answer cell runs
    (:mod:`tfperf.autograding.worker`), the unfixed code's worker once its cells ran (:mod:`tfperf.autograding.recheck`),
    so both sides pay the wrappers while timed."""
    if "tensorflow" in sys.modules:
        from tfperf.grading import guard
        from tfperf.measure import host_syncs

        guard.accept(host_syncs.keep_installed())  # installed by the library, before the answer: not a change


#: The subject's counters while the judge counts (:func:`counting_started` to :func:`counting_stopped`).
_COUNTING: dict = {}


def counting_started(kinds: tuple, marks: int | None = None) -> dict:
    """Start counting ``kinds`` (of :data:`tfperf.grading.remote.COUNTED`) in this thread, over every call until
    :func:`counting_stopped`: the library's counters, installed by the worker, out of the restricted answer's reach;
    with ``marks``, chapter 5's training steps marked meanwhile by that seed (:func:`tfperf.experiments.gpu_sync.marked`:
    what its runs were given is sent with the steps)."""
    if "stack" in _COUNTING:
        _COUNTING.pop("stack").close()
    _COUNTING.pop("marked", None)
    stack = contextlib.ExitStack()
    made = {kind: counter(stack) for kind, counter in counters().items() if kind in kinds}
    if marks is not None:
        from tfperf.experiments import gpu_sync

        _COUNTING["marked"] = stack.enter_context(gpu_sync.marked(marks))
    _COUNTING.update(stack=stack, counters=made)
    return {"counting": sorted(made)}


def counting_stopped(names: tuple[str, ...], namespace: dict) -> dict:
    """Stop counting: what was counted since :func:`counting_started`, as data (with ``traces``, each of ``names``'s
    traces, the runs of its graphs and TensorFlow's own trace count, where it is a ``tf.function`` of TensorFlow's own
    class), and the counters that were undone meanwhile (``tampered``)."""
    made = _COUNTING.pop("counters", {})
    tampered = [undone for counter in made.values() for undone in counter.tampered()]
    if "stack" in _COUNTING:
        _COUNTING.pop("stack").close()
    seen: dict = {"tampered": tampered}
    for counter in made.values():
        seen.update(counter.seen(names, namespace))
    marked = _COUNTING.pop("marked", None)  # its block closed with the stack: what the marked runs were given
    if marked is not None and "steps" in seen:
        seen["steps"]["given"] = marked.given
    return seen


# ---------------------------------------------------------------- a timed sample, on request (both sides' workers)


@contextlib.contextmanager
def seeded(seed: int, *, tensorflow: bool = True):
    """NumPy's unseeded generators and Python's ``random`` drawing from ``seed`` in the block, and with
    ``tensorflow`` TensorFlow's (hence Keras's) global seed set to it: two workers make the same data
    from the same seed.

    A sample's inputs are made with ``tensorflow=False``: setting TensorFlow's seed makes the next call
    of every ``tf.function`` slower (measured here: 0.25 ms before, 2.5 to 3 ms after ``tf.random.set_seed``),
    a cost that would land inside the clock, on the graph side only. So a check's ``make_inputs`` draws
    from NumPy (``np.random.default_rng()``) or ``random``, as the course's do."""
    import numpy as np

    original = np.random.default_rng
    seeds = iter(np.random.SeedSequence(seed).generate_state(10_000))

    def default_rng(seed=None):
        return original(int(next(seeds)) if seed is None else seed)

    np.random.default_rng = default_rng
    np.random.seed(seed)
    random.seed(seed)
    if tensorflow:
        from tfperf.runtime import logs

        logs.tensorflow().random.set_seed(seed)
    try:
        yield
    finally:
        np.random.default_rng = original


def _held(value: Any) -> Any:
    """An argument of a call as it is now: a tensor read (inside the clock, as the judge's stub reads it), an array
    copied, a number or anything else kept (read as numbers when the calls are asked for)."""
    import numpy as np

    from tfperf.grading.remote import is_tensor

    if type(value) in (int, float, bool) or isinstance(value, np.generic):
        return value
    if type(value) in (list, tuple):
        return [_held(item) for item in value]
    if type(value) is np.ndarray:
        return value.copy()
    return value.numpy() if is_tensor(value) else value


def called_back(args: tuple, calls: list) -> tuple:
    """``args`` with each function among them replaced by the stub a judged call's function gets
    (:func:`tfperf.autograding.worker.callback_stub`), which appends each call's arguments to ``calls``
    (:func:`_held`) and calls the function."""
    from tfperf.grading.remote import CALLED_BACK, positional

    def local(function: Callable[..., Any]) -> Callable[[tuple, dict], Any]:
        def call(values: tuple, keywords: dict) -> Any:
            calls.append([_held(value) for value in positional(function, values, keywords)])
            return function(*values, **keywords)

        return call

    return tuple(callback_stub(0, None, local(a)) if type(a) in CALLED_BACK else a for a in args)


def serve_samples(
    next_request: Callable[[], dict],
    reply: Callable[..., None],
    function: Callable[..., Any],
    make_inputs: Callable[[], Any],
    due: Callable[..., list] | None = None,
    work: Callable[[int], Any] | None = None,
) -> dict:
    """Answer ``prepare``, ``run``, ``result``, ``calls_back`` and ``work`` requests until another one comes (``end``,
    ``exit``, ``reset``); returns that one. The samples are kept as a side in the kernel keeps them
    (:class:`tfperf.grading.speed_trial.Samples`); here each seed's inputs are made :func:`seeded`, what the calls
    print is captured (or, for a ``run`` with a ``witness``, read by the asking process), and an error is sent as its
    traceback. ``due``: the check's ``calls_back`` (in the unfixed code's worker); ``work``: its tally of work
    (:class:`tfperf.grading.speed_trial.Samples`)."""
    from tfperf.grading.printing import witnessed_call
    from tfperf.grading.results import call_numbers
    from tfperf.grading.speed import calls_due
    from tfperf.grading.speed_trial import Samples
    from tfperf.runtime import logs

    def make(seeds: list[int]) -> list[tuple]:
        made = []
        for seed in seeds:
            with seeded(int(seed), tensorflow=False):
                made.append(tuple(make_inputs()))
        return made

    def captured(work: Callable[[], list]) -> list:
        with logs.captured_output():
            return work()

    samples = Samples(function, make, called_back, work)
    while True:
        request = next_request()
        try:
            if request.get("do") == "prepare":
                samples.prepare(list(request["seeds"]), request.get("tallies"))
                reply({"ok": True})
            elif request.get("do") == "run":
                witness = request.get("witness")  # the asking process reads what the calls print (printing.py)
                around = (lambda work: witnessed_call(str(witness), work)) if witness else captured
                samples.run(request.get("count"), around=around)
                reply({"ok": True})
            elif request.get("do") == "result":
                reply({"ok": True}, samples.result(int(request["index"])))
            elif request.get("do") == "count_calls":
                samples.count_calls()
                reply({"ok": True})
            elif request.get("do") == "counted":
                reply({"ok": True, **samples.counts()})
            elif request.get("do") == "work":
                index = int(request["index"])
                owed = None if due is None else calls_due(due, samples.calls[index], samples.made[index])
                runs = samples.runs_at_calls(index, owed)
                reply({"ok": True, "work": samples.worked(index), "runs_at_calls": runs})
            elif request.get("do") == "calls_back":
                index = int(request["index"])
                numbers = [call_numbers(call) for call in samples.calls[index]]
                reply({"ok": True, "calls": numbers if due is None else calls_due(due, numbers, samples.made[index])})
            else:
                return request
        except BaseException:  # noqa: BLE001 (reported: the asking process decides)
            reply({"error": traceback.format_exc(limit=-4)})  # the innermost frames: the answer's, where it failed


def _worker_main() -> None:
    replies = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # whatever the cells print goes to stderr, never into the replies
    requests = sys.stdin.buffer
    serve(requests, replies)


if __name__ == "__main__":
    # Served by the module imported under its own name, not by this ``__main__`` copy: whatever imports it by name
    # (tfperf.autograding.recheck does) then reaches the same counters (``_COUNTING``) and the same functions.
    from tfperf.autograding import worker

    worker._worker_main()
