"""Checks of speed: a speedup over the unfixed code, and epochs that do not slow down."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from typing import Any

from tfperf import device, logs, targets, timing, traces
from tfperf.grading.calls import GradingFailure, call, reread
from tfperf.grading.results import check_same_result

#: When set, every :func:`assert_speedup` appends what it measured to this JSON-lines
#: file (``python -m tfperf calibrate`` uses it).
RECORD_ENV_VAR = "TFPERF_RECORD"


def assert_steady_epochs(fn: Callable[..., Any], args: Sequence[Any], *, what: str, section: str | None = None,
                         growth: float = 2.0, slack: float = 0.005) -> Any:
    """Call ``fn(*args, on_epoch_end)`` and fail if its epochs trace or slow down as they go.

    ``fn`` must call ``on_epoch_end(epoch)`` after every epoch. After the first epoch no
    ``tf.function`` may trace again, and the median time of the last third of the epochs
    may exceed that of the second to the third-plus-one epoch by at most ``growth`` times
    (plus ``slack`` seconds). Returns what ``fn`` returned.
    """
    marks = []

    def on_epoch_end(epoch: int = -1) -> None:
        marks.append((timing.now(), counted.count))

    with traces.counting() as counted:
        start = (timing.now(), 0)
        result = call(fn, (*args, on_epoch_end), who=what, section=section)
    if len(marks) < 4:
        raise GradingFailure(f"{what} called on_epoch_end {len(marks)} times; expected once per epoch "
                             f"(at least 4 here).{reread(section)}")
    points = [start, *marks]
    seconds = [b[0] - a[0] for a, b in zip(points, points[1:])]
    new_traces = [b[1] - a[1] for a, b in zip(points, points[1:])]
    if sum(new_traces[1:]):
        shown = ", ".join(str(n) for n in new_traces)
        raise GradingFailure(
            f"{what} kept tracing after the first epoch: traces per epoch {shown}; expected none after the first. "
            f"Each trace builds and keeps a new graph: look for arguments of a tf.function that change on every "
            f"call (Python numbers, lists that grow) and for tf.functions created inside the loop.{reread(section)}")
    third = max(1, len(seconds) // 3)
    early, late = sorted(seconds[1:1 + third])[third // 2], sorted(seconds[-third:])[third // 2]
    if late > growth * early + slack:
        raise GradingFailure(
            f"{what} slows down from epoch to epoch: {early * 1e3:.1f} ms per epoch early on, {late * 1e3:.1f} ms "
            f"at the end (at most {growth:g}x allowed). Look for work that grows with the number of steps "
            f"done so far.{reread(section)}")
    return result


def _record(exercise: str, device_class: str, target: float, comparison: timing.Comparison) -> None:
    path = os.environ.get(RECORD_ENV_VAR)
    if not path:
        return
    row = {"exercise": exercise, "device_class": device_class, "target": target,
           "ratios": list(comparison.ratios), "candidate_s": comparison.candidate.median,
           "baseline_s": comparison.baseline.median}
    with open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps(row) + "\n")


def assert_speedup(candidate: Callable[..., Any], baseline: Callable[..., Any], *, exercise: str,
                   make_inputs: Callable[[], Sequence[Any]], section: str | None = None,
                   rtol: float = 1e-5, atol: float = 1e-6, pairs: int = 7, min_time: float = 0.05,
                   target: float | None = None, vary_inputs: bool = False) -> None:
    """Fail unless ``candidate`` computes what ``baseline`` computes and is fast enough.

    ``make_inputs()`` returns the positional arguments of both functions. The results
    are compared on those inputs, then the two are timed in interleaved pairs, then
    compared again on fresh inputs (an answer that remembers its last result fails).
    The speedup must reach ``target`` (default: :func:`tfperf.targets.target_for`).
    With ``vary_inputs=True`` every timed call gets new inputs from ``make_inputs()``
    (for costs paid once per new value, such as tracing); keep ``make_inputs`` cheap.
    """
    device_class = device.device_class()
    target = targets.target_for(exercise, device_class) if target is None else target

    inputs = tuple(make_inputs())
    expected = call(baseline, inputs, who="The unfixed code", section=section)
    got = call(candidate, inputs, who="Your function", section=section)
    check_same_result(got, expected, what="Your function's result", rtol=rtol, atol=atol, section=section)

    try:
        with logs.captured_stderr():
            if vary_inputs:
                comparison = timing.compare(lambda: candidate(*make_inputs()), lambda: baseline(*make_inputs()),
                                            pairs=pairs, min_time=min_time)
            else:
                comparison = timing.compare(lambda: candidate(*inputs), lambda: baseline(*inputs),
                                            pairs=pairs, min_time=min_time)
    except Exception as err:
        raise GradingFailure(f"Your function raised {type(err).__name__} while being timed: {err}{reread(section)}") from err

    fresh = tuple(make_inputs())
    check_same_result(call(candidate, fresh, who="Your function", section=section),
                      call(baseline, fresh, who="The unfixed code", section=section),
                      what="Your function's result on new inputs", rtol=rtol, atol=atol, section=section)

    _record(exercise, device_class, target, comparison)
    if comparison.median < target:
        raise GradingFailure(
            f"Same results as the unfixed code, but not fast enough: measured {comparison.describe()}; "
            f"the target on a {device_class.upper()} is at least {target:.2f}x.{reread(section)}")
    print(f"Passed: same results, {comparison.describe()}; target {target:.2f}x on {device_class.upper()}.")
