"""A worker's side of a speed check timed by another process: inputs made from seeds, samples run, results
returned, each on request; the calls of the functions among a sample's inputs, as data.

The process that asks holds the clock: it reads it around each ``run`` request. A worker makes the
inputs of a sample (``prepare``) before it is timed, runs the function on each, or on the first
``count`` (``run``: every result
made concrete and the device waited for, inside the request), and sends a result back as ``.npy``
arrays when asked (``result``). A ``run`` with a ``witness`` token is not captured: the asking process reads
what it prints (:mod:`tfperf.autograding.prints_checks`). A function among the inputs (a report function) reaches the
function timed as the one a judged call passes does (:func:`tfperf.autograding.judged_calls.callback_stub`), and its
calls are recorded in this process (a tensor argument read inside the clock, as the judge's stub reads it):
``calls_back`` sends those of a sample's call as numbers (with ``due``, the unfixed code's worker sends the calls due
from the answer instead). Used by :mod:`tfperf.autograding.recheck`'s workers and by the
exercise workers of :mod:`tfperf.autograding.worker`.
"""

from __future__ import annotations

import contextlib
import random
import traceback
from collections.abc import Callable
from typing import Any

from tfperf.grading.speed_trial import Samples


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
    (:func:`tfperf.autograding.judged_calls.callback_stub`), which appends each call's arguments to ``calls``
    (:func:`_held`) and calls the function."""
    from tfperf.autograding.judged_calls import callback_stub
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
) -> dict:
    """Answer ``prepare``, ``run``, ``result`` and ``calls_back`` requests until another one comes (``end``,
    ``exit``, ``reset``); returns that one. The samples are kept as a side in the kernel keeps them
    (:class:`tfperf.grading.speed_trial.Samples`); here each seed's inputs are made :func:`seeded`, what the calls
    print is captured (or, for a ``run`` with a ``witness``, read by the asking process), and an error is sent as its
    traceback. ``due``: the check's ``calls_back`` (in the unfixed code's worker)."""
    from tfperf.autograding.prints_checks import witnessed_call
    from tfperf.grading.results import call_numbers
    from tfperf.grading.speed import calls_due
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

    samples = Samples(function, make, called_back)
    while True:
        request = next_request()
        try:
            if request.get("do") == "prepare":
                samples.prepare(list(request["seeds"]))
                reply({"ok": True})
            elif request.get("do") == "run":
                witness = request.get("witness")  # the asking process reads what the calls print (prints_checks.py)
                around = (lambda work: witnessed_call(str(witness), work)) if witness else captured
                samples.run(request.get("count"), around=around)
                reply({"ok": True})
            elif request.get("do") == "result":
                reply({"ok": True}, samples.result(int(request["index"])))
            elif request.get("do") == "calls_back":
                index = int(request["index"])
                numbers = [call_numbers(call) for call in samples.calls[index]]
                reply({"ok": True, "calls": numbers if due is None else calls_due(due, numbers, samples.made[index])})
            else:
                return request
        except BaseException:  # noqa: BLE001 (reported: the asking process decides)
            reply({"error": traceback.format_exc(limit=-4)})  # the innermost frames: the answer's, where it failed
