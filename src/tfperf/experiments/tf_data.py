"""Chapter 4 experiments: ``tf.data`` input pipelines, measured.

The building blocks stand for the parts of a real input pipeline, with costs that are
the same on any machine so that every effect is visible on a 2-core laptop:

- :class:`SimulatedStorage`: records on slow storage. ``store.read(key)`` waits
  ``latency`` seconds per record inside ``tf.py_function`` (the thread sleeps, like a
  thread waiting for a disk or a network, and releases Python's GIL meanwhile);
- :func:`decode`: expensive, deterministic work in TensorFlow ops (a few dense layers
  applied to the record: a stand-in for decoding and resizing an image);
- :func:`augment`: a random augmentation that differs every epoch (a sign flip and a
  rotation of the record, drawn from the record's key and the epoch, so that two
  pipelines can be compared), in TensorFlow ops, for one element or a whole batch;
  :func:`augment_py` is the same augmentation written in Python and run by
  ``tf.py_function``, with :func:`python_work` standing for the CPU time that Python
  code costs (it holds the GIL);
- :func:`device_step`: a training step on an accelerator: the host waits
  ``STEP_SECONDS`` while "the device" computes, as the data performance guide's
  examples do (``time.sleep``), after a small TensorFlow op on the batch;
- :func:`train_epochs`: the training loop that consumes a pipeline epoch by epoch.
"""

from __future__ import annotations

import os
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np

from tfperf import logs, monitor, pipeline_timeline, timing
from tfperf.timing import Progress

tf = logs.tensorflow()
AUTOTUNE = tf.data.AUTOTUNE

RECORD_BYTES = 256          #: bytes per stored record; decoded, a record is as many float32 values
DECODE_LAYERS = 8           #: dense layers in :func:`decode`
AUGMENT_PY_MS = 3.0         #: CPU milliseconds of Python work per element in :func:`augment_py`
STEP_SECONDS = 0.002        #: simulated device time of :func:`device_step`

# ---------------------------------------------------------------------------------------
# CPU-bound Python work, calibrated once per process.

_calibration: dict[str, float] = {}


def _spin(iterations: int) -> int:
    acc = 0
    for i in range(iterations):
        acc = (acc * 31 + i) % 1_000_003
    return acc


def iterations_per_ms() -> float:
    """How many iterations of :func:`python_work`'s loop this machine runs per millisecond
    (the fastest of a few measurements, so that other load does not shrink the work)."""
    if "rate" not in _calibration:
        n = 20_000
        best = min(timing.stopwatch(lambda: _spin(n), sync=lambda: None)[1] for _ in range(5))
        _calibration["rate"] = n / max(best * 1e3, 1e-6)
    return _calibration["rate"]


def python_work(ms: float) -> int:
    """About ``ms`` milliseconds of pure-Python CPU work (a fixed number of loop iterations,
    so that it holds the GIL the whole time and two threads cannot run it at once)."""
    return _spin(int(ms * iterations_per_ms()))


# ---------------------------------------------------------------------------------------
# Storage with latency.


class SimulatedStorage:
    """``records`` random records of :data:`RECORD_BYTES` bytes on storage with ``latency``
    seconds per read (a network disk, a remote bucket).

    ``store.read(key)`` returns the record as a ``uint8`` tensor; inside a ``tf.data``
    function it runs ``tf.py_function``, one record per call. The store counts reads
    (:attr:`reads`) and the largest number of reads in flight at once
    (:attr:`max_in_flight`). With a ``recorder``, every read is also a span of its timeline.
    """

    def __init__(self, records: int, *, latency: float = 0.001, seed: int | None = None,
                 recorder: pipeline_timeline.Recorder | None = None):
        self._records = np.random.default_rng(seed).integers(0, 256, (records, RECORD_BYTES), dtype=np.uint8)
        self.latency = latency
        self._lock = threading.Lock()
        self._in_flight = 0
        self.reads = 0
        self.max_in_flight = 0
        self._python = recorder.timed(self._read, "read") if recorder is not None else self._read

    def __len__(self) -> int:
        return len(self._records)

    @property
    def reader(self):
        """The Python function that :meth:`read` runs inside ``tf.py_function`` (what
        :func:`tfperf.dataset_graph.calls` looks for in a pipeline)."""
        return self._read

    def _read(self, key):
        if np.ndim(key) != 0:
            raise ValueError(f"SimulatedStorage reads one record per call; got keys of shape {np.shape(key)}.")
        with self._lock:
            self._in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._in_flight)
        try:
            time.sleep(self.latency)
            return self._records[int(key)]
        finally:
            with self._lock:
                self._in_flight -= 1
                self.reads += 1

    def read(self, key):
        """The record ``key`` (an int64 scalar tensor) as a ``uint8`` tensor of shape ``[RECORD_BYTES]``."""
        raw = tf.py_function(self._python, [key], tf.uint8)
        raw.set_shape([RECORD_BYTES])
        return raw

    def reset_counts(self) -> None:
        with self._lock:
            self.reads = self.max_in_flight = 0


# ---------------------------------------------------------------------------------------
# Decode, augment, and the epoch that the augmentation depends on.

_state: dict[str, Any] = {}


def epoch_variable():
    """The variable holding the current epoch, which :func:`augment` reads (set by :func:`train_epochs`)."""
    if "epoch" not in _state:
        with tf.init_scope():
            _state["epoch"] = tf.Variable(0, dtype=tf.int64, trainable=False, name="tfperf_epoch")
    return _state["epoch"]


def set_epoch(epoch: int) -> None:
    """Set the epoch that :func:`augment` and :func:`augment_py` draw their randomness from."""
    epoch_variable().assign(epoch)


def _weights():
    if "weights" not in _state:
        rng = np.random.default_rng(1234)
        with tf.init_scope():
            _state["weights"] = tf.constant(
                (rng.standard_normal((RECORD_BYTES, RECORD_BYTES)) / np.sqrt(RECORD_BYTES)).astype(np.float32))
    return _state["weights"]


@tf.function
def decode(key, raw):
    """Decode records: ``uint8`` bytes -> ``float32`` features, through :data:`DECODE_LAYERS` dense layers.

    Works on one record (``key`` a scalar, ``raw`` of shape ``[RECORD_BYTES]``) or a batch.
    Deterministic: the same record always decodes to the same values.
    """
    w = _weights()
    x = tf.reshape(tf.cast(raw, tf.float32) / 255.0, [-1, RECORD_BYTES])
    for _ in range(DECODE_LAYERS):
        x = tf.tanh(tf.matmul(x, w))
    return key, tf.reshape(x, tf.shape(raw))


def _draw(key, epoch):
    """The augmentation's random draw for a record and an epoch: (shift, sign)."""
    h = (key * 1103515245 + (epoch + 1) * 12345) % 2147483648
    return h % RECORD_BYTES, 1 - 2 * ((h // 65536) % 2)


@tf.function
def augment(key, x):
    """Random augmentation, different every epoch: flip the sign of a record and rotate it.

    Works on one element or on a batch (``key`` of shape ``[B]``, ``x`` of ``[B, RECORD_BYTES]``).
    """
    keys = tf.reshape(key, [-1])
    shift, sign = _draw(keys, epoch_variable().read_value())
    rows = tf.reshape(x, [-1, RECORD_BYTES])
    index = (tf.range(RECORD_BYTES, dtype=tf.int64)[None, :] + shift[:, None]) % RECORD_BYTES
    out = tf.cast(sign, tf.float32)[:, None] * tf.gather(rows, index, batch_dims=1)
    return key, tf.reshape(out, tf.shape(x))


def _augment_python(key, x, epoch):
    python_work(AUGMENT_PY_MS)                           # Python's CPU time, under the GIL
    shift, sign = _draw(int(key), int(epoch))
    return (sign * np.roll(x.numpy(), -shift)).astype(np.float32)


def augment_py(key, x):
    """:func:`augment` for one element, written in Python (NumPy) and run by ``tf.py_function``."""
    out = tf.py_function(_augment_python, [key, x, epoch_variable().read_value()], tf.float32)
    out.set_shape([RECORD_BYTES])
    return key, out


# ---------------------------------------------------------------------------------------
# The training loop.


def device_step(keys, features) -> None:
    """A training step on an accelerator: a small op on the batch, then :data:`STEP_SECONDS`
    in which the host waits for "the device" (the host's cores are free meanwhile)."""
    tf.reduce_sum(features)
    time.sleep(STEP_SECONDS)


def train_epochs(dataset, epochs: int, step: Callable[[Any, Any], Any] = device_step) -> list[tuple]:
    """Train ``epochs`` epochs on ``dataset`` (elements ``(keys, features)`` batches).

    Before each epoch it sets the epoch (:func:`set_epoch`), then it calls ``step`` on
    every batch. Returns what each epoch delivered, independent of order: per epoch
    ``(keys sorted, features in that order, batch sizes sorted)``.
    """
    seen = []
    for epoch in range(epochs):
        set_epoch(epoch)
        keys, rows, sizes = [], [], []
        for key_batch, feature_batch in dataset:
            step(key_batch, feature_batch)
            keys.append(key_batch)
            rows.append(feature_batch)
            sizes.append(int(tf.shape(key_batch)[0]))
        if not keys:
            seen.append((tf.zeros([0], tf.int64), tf.zeros([0, RECORD_BYTES]), tf.zeros([0], tf.int32)))
            continue
        keys, rows = tf.concat(keys, 0), tf.concat(rows, 0)
        order = tf.argsort(keys, stable=True)
        seen.append((tf.gather(keys, order), tf.gather(rows, order), tf.constant(sorted(sizes), tf.int32)))
    return seen
