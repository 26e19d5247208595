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

from tfperf.grading.speed_trial import leaves


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
    ``exit``, ``reset``); returns that one. ``due``: the check's ``calls_back`` (in the unfixed code's worker)."""
    from tfperf.autograding.prints_checks import witnessed_call
    from tfperf.grading.results import call_numbers
    from tfperf.grading.speed import calls_due
    from tfperf.measure import timing
    from tfperf.runtime import device, logs

    inputs: list = []
    made: list = []  # each sample's inputs as make_inputs made them (its functions unwrapped)
    calls: list = []  # each sample's calls of its functions
    results: list = []
    while True:
        request = next_request()
        try:
            if request.get("do") == "prepare":
                inputs, made, calls, results = [], [], [], []  # the last sample's memory freed first
                for seed in request["seeds"]:
                    with seeded(int(seed), tensorflow=False):
                        made.append(tuple(make_inputs()))
                    calls.append([])
                    inputs.append(called_back(made[-1], calls[-1]))
                reply({"ok": True})
            elif request.get("do") == "run":
                device.sync()
                chosen = inputs if request.get("count") is None else inputs[: int(request["count"])]
                for recorded in calls[: len(chosen)]:
                    recorded.clear()  # a sample run again records its calls again
                if request.get("witness"):  # the asking process reads what the calls print (prints_checks.py)
                    results = witnessed_call(
                        str(request["witness"]), lambda: [timing.settle(function(*args)) for args in chosen]
                    )
                else:
                    with logs.captured_output():
                        results = [timing.settle(function(*args)) for args in chosen]
                device.sync()
                reply({"ok": True})
            elif request.get("do") == "result":
                reply({"ok": True}, leaves(results[int(request["index"])]))
            elif request.get("do") == "calls_back":
                index = int(request["index"])
                numbers = [call_numbers(call) for call in calls[index]]
                reply({"ok": True, "calls": numbers if due is None else calls_due(due, numbers, made[index])})
            else:
                return request
        except BaseException:  # noqa: BLE001 (reported: the asking process decides)
            reply({"error": traceback.format_exc(limit=3)})
