"""Measure callables the right way. The only module of the course that reads a clock.

- Warm up first, so tracing, compilation and first-run allocation stay out of the numbers.
- Synchronize the device before reading the clock (GPU work is asynchronous).
- Repeat a call until one sample lasts at least ``min_time``, so timer resolution is noise.
- Compare two callables as *interleaved* pairs and report the median ratio and its spread:
  drift in machine load hits both sides of a pair alike.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tfperf import device, logs

# Bound once at import: code under test that patches ``time.perf_counter`` cannot
# change what we read.
_clock = time.perf_counter
# TensorFlow's in-graph clock (``tf.timestamp``) counts seconds since the Unix epoch;
# this offset puts its readings on the course's clock.
_EPOCH_OFFSET = time.time() - _clock()

Progress = Callable[[int, int], None]  # (done, total)


def now() -> float:
    """Seconds on the course's monotonic clock (for timestamps, e.g. :mod:`tfperf.monitor`)."""
    return _clock()


def graph_now():
    """In a ``tf.function`` or a ``tf.data`` function: a float64 tensor with the time at which
    the op runs, on the same clock as :func:`now` (``tf.timestamp`` shifted once)."""
    return logs.tensorflow().timestamp() - _EPOCH_OFFSET


def _sync_default() -> None:
    device.sync()


def stopwatch(fn: Callable[[], Any], *, sync: Callable[[], None] = _sync_default) -> tuple[Any, float]:
    """Run ``fn`` once; return its result and the seconds it took, device work included."""
    sync()
    start = _clock()
    result = fn()
    sync()
    return result, _clock() - start


def _sample(fn: Callable[[], Any], calls: int, sync: Callable[[], None]) -> float:
    """Seconds per call, over ``calls`` back-to-back calls."""
    sync()
    start = _clock()
    for _ in range(calls):
        fn()
    sync()
    return (_clock() - start) / calls


def calls_for(fn: Callable[[], Any], min_time: float, *, sync: Callable[[], None] = _sync_default,
              max_calls: int = 1_000_000) -> int:
    """How many back-to-back calls of ``fn`` last at least ``min_time`` seconds."""
    calls = 1
    while True:
        per_call = _sample(fn, calls, sync)
        if per_call * calls >= min_time or calls >= max_calls:
            return calls
        # Aim a little past min_time, at most 10x more calls per round.
        wanted = int(min_time * 1.2 / max(per_call, 1e-9)) + 1
        calls = min(max(wanted, calls + 1), calls * 10, max_calls)


@dataclass(frozen=True)
class Timing:
    """Seconds per call of one callable: one value per sample."""

    samples: tuple[float, ...]
    calls_per_sample: int

    @property
    def median(self) -> float:
        return statistics.median(self.samples)

    @property
    def calls_per_second(self) -> float:
        return 1.0 / self.median


def measure(fn: Callable[[], Any], *, repeats: int = 5, warmup: int = 1, min_time: float = 0.05,
            sync: Callable[[], None] = _sync_default) -> Timing:
    """Time ``fn`` (no arguments): ``repeats`` samples of at least ``min_time`` seconds each."""
    if repeats < 1:
        raise ValueError("repeats must be at least 1")
    for _ in range(warmup):
        fn()
    sync()
    calls = calls_for(fn, min_time, sync=sync)
    return Timing(tuple(_sample(fn, calls, sync) for _ in range(repeats)), calls)


@dataclass(frozen=True)
class Comparison:
    """How much faster ``candidate`` is than ``baseline``, from interleaved pairs.

    ``ratios[i]`` is baseline time / candidate time in pair ``i``: above 1 means the
    candidate is faster.
    """

    ratios: tuple[float, ...]
    candidate: Timing
    baseline: Timing

    @property
    def median(self) -> float:
        return statistics.median(self.ratios)

    @property
    def low(self) -> float:
        return min(self.ratios)

    @property
    def high(self) -> float:
        return max(self.ratios)

    def describe(self) -> str:
        m = self.median
        speed = f"{m:.2f}x faster" if m >= 1 else f"{m:.2f}x as fast, i.e. {1 / m:.2f}x slower"
        return (
            f"{speed} (median of {len(self.ratios)} interleaved pairs; "
            f"range {self.low:.2f}x to {self.high:.2f}x; "
            f"{self.candidate.median * 1e3:.3g} ms vs {self.baseline.median * 1e3:.3g} ms per call)"
        )


def compare(candidate: Callable[[], Any], baseline: Callable[[], Any], *, pairs: int = 7,
            warmup: int = 1, min_time: float = 0.05, sync: Callable[[], None] = _sync_default,
            progress: Progress | None = None) -> Comparison:
    """Time ``candidate`` against ``baseline`` in interleaved pairs (order alternates)."""
    if pairs < 1:
        raise ValueError("pairs must be at least 1")
    for _ in range(warmup):
        candidate()
        baseline()
    sync()
    calls_c = calls_for(candidate, min_time, sync=sync)
    calls_b = calls_for(baseline, min_time, sync=sync)
    cand, base, ratios = [], [], []
    for i in range(pairs):
        if i % 2 == 0:
            c = _sample(candidate, calls_c, sync)
            b = _sample(baseline, calls_b, sync)
        else:
            b = _sample(baseline, calls_b, sync)
            c = _sample(candidate, calls_c, sync)
        cand.append(c)
        base.append(b)
        ratios.append(b / max(c, 1e-12))
        if progress:
            progress(i + 1, pairs)
    return Comparison(tuple(ratios), Timing(tuple(cand), calls_c), Timing(tuple(base), calls_b))
