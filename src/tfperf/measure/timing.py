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
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from tfperf.runtime import device, logs

# Bound once at import: code under test that patches ``time.perf_counter`` cannot
# change what we read.
_clock = time.perf_counter
_cpu_clock = time.process_time


def _epoch_offset(readings: int = 9) -> float:
    """Seconds to subtract from a Unix-epoch time (``tf.timestamp``) to put it on the course's clock.

    Each reading of the wall clock is bracketed by two of the course's clock; the tightest
    bracket wins, so a thread switch between the two reads (common on a loaded machine)
    cannot shift every in-graph stamp by the time the thread was away.
    """
    best = None
    for _ in range(readings):
        before = _clock()
        wall = time.time()
        after = _clock()
        if best is None or after - before < best[0]:
            best = (after - before, wall - (before + after) / 2)
    return best[1]


# TensorFlow's in-graph clock (``tf.timestamp``) counts seconds since the Unix epoch;
# this offset puts its readings on the course's clock.
_EPOCH_OFFSET = _epoch_offset()

Progress = Callable[[int, int], None]  # (done, total)


def now() -> float:
    """Seconds on the course's monotonic clock (for timestamps, e.g. :mod:`tfperf.measure.monitor`)."""
    return _clock()


def cpu_now() -> float:
    """The process's CPU time in seconds, every thread's (``time.process_time``): what a span of work cost the
    cores, whatever else ran on them meanwhile."""
    return _cpu_clock()


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


def calls_for(
    fn: Callable[[], Any], min_time: float, *, sync: Callable[[], None] = _sync_default, max_calls: int = 1_000_000
) -> int:
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


def measure(
    fn: Callable[[], Any],
    *,
    repeats: int = 5,
    warmup: int = 1,
    min_time: float = 0.05,
    sync: Callable[[], None] = _sync_default,
) -> Timing:
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

    def describe(self, *, per_call: bool = True) -> str:
        """The median ratio in words, with the pairs' range and (``per_call``) each side's median time per call."""
        m = self.median
        speed = f"{m:.2f}x faster" if m >= 1 else f"{m:.2f}x as fast, i.e. {1 / m:.2f}x slower"
        times = (
            f"; {self.candidate.median * 1e3:.3g} ms vs {self.baseline.median * 1e3:.3g} ms per call"
            if per_call
            else ""
        )
        return f"{speed} (median of {len(self.ratios)} interleaved pairs; range {self.low:.2f}x to {self.high:.2f}x{times})"


def compare(
    candidate: Callable[[], Any],
    baseline: Callable[[], Any],
    *,
    pairs: int = 7,
    warmup: int = 1,
    min_time: float = 0.05,
    sync: Callable[[], None] = _sync_default,
    progress: Progress | None = None,
) -> Comparison:
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


def copy_arrays(value: Any) -> Any:
    """``value`` with its NumPy arrays copied (the call under test could change them in place);
    tensors are immutable, and other objects (models, callables) are kept as they are."""
    if isinstance(value, tuple):
        return tuple(copy_arrays(v) for v in value)
    if isinstance(value, list):
        return [copy_arrays(v) for v in value]
    if isinstance(value, dict):
        return {k: copy_arrays(v) for k, v in value.items()}
    return value.copy() if type(value).__module__ == "numpy" and hasattr(value, "copy") else value


_PLAIN = (int, float, bool, complex, str, bytes, type(None))
#: NumPy's own array and scalar classes, bound at import (before any code under test runs): a class that only says
#: it is NumPy's (``__module__ = "numpy"``) is not one of them.
_NUMPY: frozenset[type] = frozenset()
#: TensorFlow's own classes of computed values, exactly (a subclass may define its own conversion, which would run
#: when the result is read, after the clock): bound at import where TensorFlow is imported first (the grading's
#: workers import it before this module), else on first use.
_TENSORFLOW: frozenset[type] | None = None


def _numpy_types() -> frozenset[type]:
    global _NUMPY
    if not _NUMPY:
        import numpy as np

        _NUMPY = frozenset({np.ndarray, *(t for t in np.sctypeDict.values() if isinstance(t, type))})
    return _NUMPY


def _tensorflow_types() -> frozenset[type]:
    """Eager tensors, resource variables, ragged and sparse tensors, shapes and dtypes (empty where TensorFlow is not
    imported yet: no value of its can exist then)."""
    global _TENSORFLOW
    if _TENSORFLOW is None:
        import sys

        if "tensorflow" not in sys.modules:
            return frozenset()
        from tensorflow.python.framework import dtypes, ops, sparse_tensor, tensor_shape
        from tensorflow.python.ops import resource_variable_ops
        from tensorflow.python.ops.ragged import ragged_tensor

        _TENSORFLOW = frozenset(
            {
                ops.EagerTensor,
                resource_variable_ops.ResourceVariable,
                resource_variable_ops.UninitializedVariable,
                ragged_tensor.RaggedTensor,
                sparse_tensor.SparseTensor,
                tensor_shape.TensorShape,
                dtypes.DType,
            }
        )
    return _TENSORFLOW


def is_computed(value: Any) -> bool:
    """Whether ``value`` is of a class whose conversion to NumPy runs no code but NumPy's or TensorFlow's own: a
    plain Python value, one of NumPy's own array and scalar classes, or one of TensorFlow's (exactly, not a subclass)."""
    kind = type(value)
    return kind in _PLAIN or kind in _numpy_types() or kind in _tensorflow_types()


class Unsettled:
    """A result that could not be made concrete inside the clock (neither NumPy nor its own ``numpy()`` could
    convert it): reading it afterwards would run its code after the clock, so it is never read (:func:`leaves`)."""

    def __init__(self, value: Any, error: Exception) -> None:
        self.kind = type(value).__name__
        self.error = f"{type(error).__name__}: {error}"

    def __repr__(self) -> str:
        return f"<a {self.kind} that could not be converted to an array inside the timed call ({self.error})>"


def settle(value: Any) -> Any:
    """``value`` made concrete, inside the clock: what NumPy or TensorFlow computed (:func:`is_computed`), and
    tuples, lists and dicts of such, as they are (a device's work is waited for by ``sync``; a variable's value is
    read now); a tuple or list of
    another class as a plain one of its items settled; any other object converted with ``numpy.asarray`` now (or its
    own ``numpy()``), so that a lazy result cannot defer its work past the clock (nor change its value after it).
    What neither converts becomes an :class:`Unsettled`, which no check reads."""
    if isinstance(value, (tuple, list)):
        plain = tuple if isinstance(value, tuple) else list
        return plain(settle(v) for v in value)
    if type(value) is dict:
        return {k: settle(v) for k, v in value.items()}
    if is_computed(value):
        # a variable's value now, as the call returned it: one the answer keeps, and trains again in its next call,
        # would read as that call's by the time the checks read the results (after the sample's calls)
        return value.read_value() if type(value).__name__ == "ResourceVariable" else value
    return _as_array(value)


def _as_array(value: Any) -> Any:
    import numpy as np

    try:
        return np.asarray(value)
    except Exception as error:  # noqa: BLE001 (its own numpy(), else nothing that can be read after the clock)
        try:
            return np.asarray(value.numpy())
        except Exception:  # noqa: BLE001
            return Unsettled(value, error)


_numpy_types()  # bound now, at import
_tensorflow_types()  # bound now where TensorFlow is imported already


def median_side(values: Sequence[float], planned: int, threshold: float) -> bool | None:
    """Which side of ``threshold`` the median of ``planned`` values falls on, known from the first ones
    (``values``): True (at or above), False (below), or None while the values still to come could put it on
    either side. Settled once more than half of ``planned`` lie on one side: the middle value (or both middle
    values, for an even count) is then among them, whatever the others are."""
    needed = planned // 2 + 1
    if sum(v >= threshold for v in values) >= needed:
        return True
    if sum(v < threshold for v in values) >= needed:
        return False
    return None


def needs_a_closer_look(median: float, target: float) -> bool:
    """Whether a speed check's median earns twice as many pairs more before the verdict: below the target, but not
    below its square root (never where the target is at most 1)."""
    return _closer_look_floor(target) <= median < target


def _closer_look_floor(target: float) -> float:
    return min(target, target**0.5)


def settled_at(target: float, planned: int, earlier: Sequence[float] = (), *, closer_look: bool = True):
    """A ``settled`` rule (:func:`tfperf.grading.speed_trial.trial`) for the verdict "the median of ``planned`` ratios, ``earlier``
    ones included, is at least ``target``": true once the ratios to come can no longer change it. With
    ``closer_look``, a median below the target but not below its square root (which earns more pairs) is not a
    verdict: it is settled below the smaller of the two only."""
    low = _closer_look_floor(target) if closer_look else target

    def settled(ratios: Sequence[float]) -> bool:
        every = [*earlier, *ratios]
        return median_side(every, planned, target) is True or median_side(every, planned, low) is False

    return settled


def settled_early(taken: int, planned: int) -> str:
    """What a message adds when the pairs stopped once the verdict was settled: empty when all were taken."""
    if taken >= planned:
        return ""
    return f"settled after {taken} of {planned} pairs: the other {planned - taken} could not change the verdict"
