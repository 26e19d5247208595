"""A worker's side of the judge's calls (:mod:`tfperf.autograding.judge`): the answer's function called on the
judge's arguments, its result sent back as data; the functions the check passed, called back in the judge; the
library's counters run over the judge's calls.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable
from typing import Any

from tfperf.grading.remote import NotData, pack, unpack


class CallbackFailed(RuntimeError):
    """A function the check passed to the answer raised in the judge (the answer's call of it fails)."""


def callback_stub(
    index: int, ask: Callable[[dict, list], tuple[dict, list]] | None, local: Callable[[tuple], Any] | None = None
) -> Callable:
    """In the subject, the function the check passed as argument ``index``: calling it sends its arguments (as data)
    to the judge, which runs the check's function (:meth:`Channel.ask`), and returns its result (as data). ``ask``
    sends one message and returns the reply. With ``local`` instead (a timed sample's function, made in this process:
    :func:`tfperf.autograding.recheck.called_back`), the arguments go to ``local`` as they are: the same function to
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
        return counting_started(tuple(request.get("kinds") or ())), []
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


def counting_started(kinds: tuple) -> dict:
    """Start counting ``kinds`` (of :data:`tfperf.grading.remote.COUNTED`) in this thread, over every call until
    :func:`counting_stopped`: the library's counters, installed by the worker, out of the restricted answer's reach."""
    if "stack" in _COUNTING:
        _COUNTING.pop("stack").close()
    stack = contextlib.ExitStack()
    made = {kind: counter(stack) for kind, counter in counters().items() if kind in kinds}
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
    return seen
