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
- :func:`train_epochs`: the training loop that consumes a pipeline epoch by epoch;
- :func:`build_pipeline`: the chapter's pipeline with each optimization on or off (the
  experiment panel's settings), :func:`pipeline_runs` to time it epoch by epoch with its
  timeline, :func:`parallel_map_gain` for the three kinds of work, :func:`vectorized_map_gain` for
  a map before and after ``batch`` with no reads, :func:`threads_in_flight`
  for the threads ``tf.data`` gives a parallel map, :func:`bound_by` for "is my training
  input-bound?".
"""

from __future__ import annotations

import statistics
import threading
import time
import weakref
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from tfperf.measure import monitor, pipeline_timeline, timing
from tfperf.measure.timing import Progress
from tfperf.runtime import logs

tf = logs.tensorflow()
AUTOTUNE = tf.data.AUTOTUNE

RECORD_BYTES = 256  #: bytes per stored record; decoded, a record is as many float32 values
DECODE_LAYERS = 8  #: dense layers in :func:`decode`
AUGMENT_PY_MS = 3.0  #: CPU milliseconds of Python work per element in :func:`augment_py`
STEP_SECONDS = 0.002  #: simulated device time of :func:`device_step`

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


class _ReadCounts:
    """What a store's reads did: kept outside the store (:data:`_READ_COUNTS`), so that code
    holding the store cannot reset or inflate them by assigning its attributes."""

    __slots__ = ("lock", "in_flight", "reads", "max_in_flight", "seconds_waited")

    def __init__(self):
        self.lock = threading.Lock()
        self.in_flight = self.reads = self.max_in_flight = 0
        self.seconds_waited = 0.0


_READ_COUNTS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


class SimulatedStorage:
    """``records`` random records of :data:`RECORD_BYTES` bytes on storage with ``latency``
    seconds per read (a network disk, a remote bucket).

    ``store.read(key)`` returns the record as a ``uint8`` tensor; inside a ``tf.data``
    function it runs ``tf.py_function``, one record per call. The store counts reads
    (:attr:`reads`), the seconds they took (:attr:`seconds_waited`, measured) and the
    largest number of reads in flight at once (:attr:`max_in_flight`): read-only, kept
    where assigning the store's attributes does not reach them. With a ``recorder``,
    every read is also a span of its timeline.
    """

    def __init__(
        self,
        records: int,
        *,
        latency: float = 0.001,
        seed: int | None = None,
        recorder: pipeline_timeline.Recorder | None = None,
    ):
        self._records = np.random.default_rng(seed).integers(0, 256, (records, RECORD_BYTES), dtype=np.uint8)
        self._latency = float(latency)
        _READ_COUNTS[self] = _ReadCounts()
        self._python = recorder.timed(self._read, "read") if recorder is not None else self._read

    @property
    def latency(self) -> float:
        """Seconds every read waits (fixed when the store is made)."""
        return self._latency

    @property
    def reads(self) -> int:
        """Records read so far (since :meth:`reset_counts`)."""
        return _READ_COUNTS[self].reads

    @property
    def seconds_waited(self) -> float:
        """Seconds the reads took in all, measured by the reading threads."""
        return _READ_COUNTS[self].seconds_waited

    @property
    def max_in_flight(self) -> int:
        """The largest number of reads that were waiting at the same moment."""
        return _READ_COUNTS[self].max_in_flight

    def __len__(self) -> int:
        return len(self._records)

    @property
    def reader(self):
        """The Python function that :meth:`read` runs inside ``tf.py_function`` (what
        :func:`tfperf.measure.dataset_graph.calls` looks for in a pipeline)."""
        return self._read

    def _read(self, key):
        if np.ndim(key) != 0:
            raise ValueError(f"SimulatedStorage reads one record per call; got keys of shape {np.shape(key)}.")
        counts = _READ_COUNTS[self]
        with counts.lock:
            counts.in_flight += 1
            counts.max_in_flight = max(counts.max_in_flight, counts.in_flight)
        start = timing.now()
        try:
            time.sleep(self._latency)
            return self._records[int(key)]
        finally:
            waited = timing.now() - start
            with counts.lock:
                counts.in_flight -= 1
                counts.reads += 1
                counts.seconds_waited += waited

    def read_now(self, key):
        """The record ``key`` as a NumPy array, read by Python right now (what a generator does;
        recorded as a span when the store has a recorder)."""
        return self._python(key)

    def read(self, key):
        """The record ``key`` (an int64 scalar tensor) as a ``uint8`` tensor of shape ``[RECORD_BYTES]``."""
        raw = tf.py_function(self._python, [key], tf.uint8)
        raw.set_shape([RECORD_BYTES])
        return raw

    def reset_counts(self) -> None:
        """Start counting reads again from zero."""
        counts = _READ_COUNTS[self]
        with counts.lock:
            counts.reads = counts.max_in_flight = 0
            counts.seconds_waited = 0.0


# ---------------------------------------------------------------------------------------
# Decode, augment, and the epoch that the augmentation depends on.

_state: dict[str, Any] = {}


def epoch_variable():
    """The variable holding the current epoch, which :func:`augment` reads (set by :func:`train_epochs`)."""
    if "epoch" not in _state:
        # On the CPU: tf.data runs there, and on a GPU machine a variable created without a device goes to
        # the GPU, where tf.data can no longer serialize a pipeline that reads it (seen on an H100:
        # "Trying to access resource tfperf_epoch located in device GPU:0 from device CPU:0").
        with tf.init_scope(), tf.device("/CPU:0"):
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
                (rng.standard_normal((RECORD_BYTES, RECORD_BYTES)) / np.sqrt(RECORD_BYTES)).astype(np.float32)
            )
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
    python_work(AUGMENT_PY_MS)  # Python's CPU time, under the GIL
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


# ---------------------------------------------------------------------------------------
# The chapter's pipeline, each optimization a switch.

CACHE_PLACES = ("none", "before augment", "after augment")


def mapped(ds, fn, parallel: bool):
    """``ds.map(fn)``, parallel (``num_parallel_calls=AUTOTUNE``) or one element at a time.

    A plain ``map`` is not sequential: ``tf.data``'s ``map_parallelization`` optimization (on by
    default) rewrites a map whose function is stateless into a parallel one. ``synchronous=True``
    keeps it sequential (the ``Dataset.map`` docstring: "the map will not be parallelized at all").
    """
    if parallel:
        return ds.map(fn, num_parallel_calls=AUTOTUNE)
    return ds.map(fn, synchronous=True)


def records_from_generator(store: SimulatedStorage):
    """``(key, raw)`` elements read one by one by a Python generator (``Dataset.from_generator``)."""

    def records():
        for key in range(len(store)):
            yield key, store.read_now(key)

    return tf.data.Dataset.from_generator(
        records, output_signature=(tf.TensorSpec([], tf.int64), tf.TensorSpec([RECORD_BYTES], tf.uint8))
    )


def build_pipeline(
    store: SimulatedStorage,
    batch: int,
    *,
    parallel: bool = False,
    vectorized: bool = False,
    cache: str = "none",
    prefetch: bool = False,
):
    """The chapter's pipeline: read every record of ``store``, :func:`decode`, :func:`augment`, batch.

    - ``parallel``: read with a parallel map over the keys (``num_parallel_calls=AUTOTUNE``)
      and decode/augment with parallel maps; otherwise a Python generator reads the records
      one by one (:func:`records_from_generator`) and the maps are sequential (:func:`mapped`);
    - ``vectorized``: batch right after reading, then decode and augment whole batches;
    - ``cache``: ``"none"``, ``"before augment"`` (after decode: the right place) or
      ``"after augment"`` (the wrong place: every epoch repeats the first epoch's augmentation);
    - ``prefetch``: end with ``prefetch(AUTOTUNE)``.
    """
    if cache not in CACHE_PLACES:
        raise ValueError(f"cache must be one of {CACHE_PLACES}; got {cache!r}")
    if parallel:
        ds = tf.data.Dataset.range(len(store)).map(lambda key: (key, store.read(key)), num_parallel_calls=AUTOTUNE)
    else:
        ds = records_from_generator(store)
    if vectorized:
        ds = ds.batch(batch)
    ds = mapped(ds, decode, parallel)
    if cache == "before augment":
        ds = ds.cache()
    ds = mapped(ds, augment, parallel)
    if cache == "after augment":
        ds = ds.cache()
    if not vectorized:
        ds = ds.batch(batch)
    return ds.prefetch(AUTOTUNE) if prefetch else ds


def same_epochs(a: Sequence[tuple], b: Sequence[tuple], *, rtol: float = 1e-5, atol: float = 1e-6) -> bool:
    """Whether two results of :func:`train_epochs` delivered the same elements in every epoch."""
    if len(a) != len(b):
        return False
    for ea, eb in zip(a, b):
        for ta, tb in zip(ea, eb):
            if tuple(ta.shape) != tuple(tb.shape) or not np.allclose(ta.numpy(), tb.numpy(), rtol=rtol, atol=atol):
                return False
    return True


def pipeline_runs(
    records: int,
    batch: int,
    epochs: int,
    *,
    parallel: bool = False,
    vectorized: bool = False,
    cache: str = "none",
    prefetch: bool = False,
    latency: float = 0.001,
    label: str = "",
    progress: Progress | None = None,
) -> list[dict]:
    """Train ``epochs`` epochs on :func:`build_pipeline` with these settings, recording its timeline.

    One record per epoch: ``epoch``, ``seconds``, ``elements_per_s``, ``waiting`` (seconds the
    loop waited for input), ``pipeline`` (``label`` or the settings in words); the first
    record also holds the whole run's ``timeline`` (a :class:`tfperf.measure.pipeline_timeline.Timeline`)
    and ``same_as_naive`` (whether every epoch delivered what the naive pipeline delivers).
    """
    recorder = pipeline_timeline.Recorder()
    seed = int(np.random.default_rng().integers(2**31))
    store = SimulatedStorage(records, latency=latency, seed=seed, recorder=recorder)
    instant = SimulatedStorage(records, latency=0.0, seed=seed)  # the same records, to check what was delivered
    settings = dict(parallel=parallel, vectorized=vectorized, cache=cache, prefetch=prefetch)
    name = label or describe_settings(**settings)
    timeline = recorder.run(
        build_pipeline(store, batch, **settings),
        lambda element: device_step(*element),
        epochs=epochs,
        before_epoch=set_epoch,
    )
    reference = train_epochs(build_pipeline(instant, batch), epochs, step=lambda keys, features: None)
    delivered = train_epochs(build_pipeline(instant, batch, **settings), epochs, step=lambda keys, features: None)
    rows = []
    for epoch, (start, end) in enumerate(timeline.epochs):
        waited = sum(e["delivered"] - e["requested"] for e in timeline.elements if e["epoch"] == epoch)
        rows.append(
            {
                "pipeline": name,
                "epoch": epoch + 1,
                "seconds": end - start,
                "elements_per_s": records / max(end - start, 1e-9),
                "waiting": waited,
                **settings,
            }
        )
        if progress:
            progress(epoch + 1, epochs)
    rows[0]["timeline"] = timeline
    rows[0]["same_as_naive"] = same_epochs(delivered, reference)
    return rows


def describe_settings(
    parallel: bool = False, vectorized: bool = False, cache: str = "none", prefetch: bool = False
) -> str:
    """``"parallel + cache before augment + prefetch"``, or ``"naive"``."""
    parts = [
        ("parallel" if parallel else ""),
        ("vectorized" if vectorized else ""),
        (f"cache {cache}" if cache != "none" else ""),
        ("prefetch" if prefetch else ""),
    ]
    return " + ".join(p for p in parts if p) or "naive"


def plot_pipeline_runs(fig, runs) -> None:
    """Draw runs of :func:`pipeline_runs`: elements per second in the first and in later epochs
    for every pipeline of every run (one row each, labels written once, horizontal so that they
    stay readable however many runs there are), and the timeline of the last pipeline of the last run."""
    import textwrap

    from tfperf.lesson import plots

    ax_bars, ax_time = fig.subplots(1, 2, width_ratios=[1, 1.3])
    groups, first, later = [], [], []
    for run, prefix, _ in plots.each_run(runs):
        for name in dict.fromkeys(r["pipeline"] for r in run.records):
            rows = [r for r in run.records if r["pipeline"] == name]
            groups.append(textwrap.fill(f"{prefix}{name}", 30))
            first.append(rows[0]["elements_per_s"])
            later.append(statistics.median(r["elements_per_s"] for r in rows[1:]) if len(rows) > 1 else None)
    series = [("epoch 1", first, [f"{v:.0f}" for v in first])]
    if any(v is not None for v in later):
        series.append(("later epochs", later, [f"{v:.0f}" if v is not None else "" for v in later]))
    plots.plot_grouped_barh(ax_bars, groups, series, xlabel="elements per second (higher is better)")
    ax_bars.tick_params(axis="y", labelsize=8)
    ax_bars.set_title("Throughput of the pipeline in training")
    last = [r for r in runs[-1].records if "timeline" in r] if runs else []
    if last:
        pipeline_timeline.plot(
            ax_time, last[-1]["timeline"], title=f"Timeline: {last[-1]['pipeline']}\n" + last[-1]["timeline"].summary()
        )


def plot_timelines(fig, runs) -> None:
    """The timelines of the pipelines of the last run of :func:`pipeline_runs`, one above the other."""
    records = [r for r in runs[-1].records if "timeline" in r] if runs else []
    axes = fig.subplots(len(records), 1, sharex=True, squeeze=False)[:, 0]
    for ax, r in zip(axes, records):
        pipeline_timeline.plot(
            ax, r["timeline"], title=f"{r['pipeline']}: {r['timeline'].summary()}", span_colors={"read": "#9467bd"}
        )


# ---------------------------------------------------------------------------------------
# Three kinds of work in a map, and the threads tf.data gives it.

WORK_KINDS = ("sleep in tf.py_function (I/O-like)", "Python CPU work in tf.py_function", "TensorFlow ops")


def _work_map(kind: str, ms: float):
    if kind == WORK_KINDS[0]:

        def work(x):
            time.sleep(ms / 1e3)
            return x
    elif kind == WORK_KINDS[1]:

        def work(x):
            python_work(ms)
            return x
    elif kind == WORK_KINDS[2]:
        size = 64
        w = tf.constant((np.random.default_rng(0).standard_normal((size, size)) / np.sqrt(size)).astype(np.float32))
        reps = max(1, int(round(ms * matmuls_per_ms(size))))

        @tf.function
        def ops(x):
            y = tf.fill([size, size], tf.cast(x, tf.float32) * 1e-3)
            for _ in range(reps):
                y = tf.tanh(tf.matmul(y, w))
            return x + tf.cast(tf.reduce_sum(y) * 0.0, tf.int64)

        return ops
    else:
        raise ValueError(f"kind must be one of {WORK_KINDS}; got {kind!r}")
    return lambda x: tf.py_function(work, [x], tf.int64)


def matmuls_per_ms(size: int = 64) -> float:
    """How many ``size``-square matrix products (with tanh) one thread runs per millisecond here."""
    key = f"matmul{size}"
    if key not in _calibration:
        a = tf.random.normal([size, size])

        @tf.function
        def ten(y):
            for _ in range(10):
                y = tf.tanh(tf.matmul(y, a))
            return y

        ten(a)
        best = min(timing.stopwatch(lambda: ten(a).numpy())[1] for _ in range(5))
        _calibration[key] = 10 / max(best * 1e3, 1e-6)
    return _calibration[key]


def parallel_map_gain(
    kind: str, elements: int = 64, ms: float = 2.0, *, parallel_calls: int = AUTOTUNE, repeats: int = 3
) -> dict:
    """Seconds to iterate ``range(elements).map(work)`` with a sequential and a parallel map
    (:func:`mapped`: the sequential one is kept sequential on purpose).

    ``work`` costs about ``ms`` milliseconds per element, of the given :data:`WORK_KINDS`.
    Returns ``kind``, ``sequential_s``, ``parallel_s`` (medians of ``repeats``) and ``speedup``.
    """
    work = _work_map(kind, ms)

    def consume(ds):
        return lambda: [None for _ in ds]

    sequential = consume(mapped(tf.data.Dataset.range(elements), work, parallel=False))
    parallel = consume(tf.data.Dataset.range(elements).map(work, num_parallel_calls=parallel_calls))
    sequential()
    parallel()
    seq_s, par_s = [], []
    for _ in range(repeats):
        seq_s.append(timing.stopwatch(sequential)[1])
        par_s.append(timing.stopwatch(parallel)[1])
    seq, par = statistics.median(seq_s), statistics.median(par_s)
    return {"kind": kind, "sequential_s": seq, "parallel_s": par, "speedup": seq / max(par, 1e-9)}


def vectorized_map_gain(
    fn: Callable, elements: int, batch: int = 32, *, parallel: bool = False, repeats: int = 5
) -> dict:
    """Seconds to iterate ``elements`` in-memory records (random ``float32`` features) mapped by
    ``fn`` then batched, and batched then mapped by ``fn`` (one call per batch), with no storage
    reads: the map's own work is all there is. ``fn(keys, features)`` must work on one element and on a batch (:func:`decode`,
    :func:`augment`). Returns ``per_element_s``, ``vectorized_s`` (medians of ``repeats``, the
    two pipelines timed alternately), ``speedup`` and whether both delivered the same values.
    """
    features = np.random.default_rng().random((elements, RECORD_BYTES), dtype=np.float32)
    records = tf.data.Dataset.from_tensor_slices((tf.range(elements, dtype=tf.int64), features))
    per_element = mapped(records, fn, parallel).batch(batch)
    vectorized = mapped(records.batch(batch), fn, parallel)

    def values(ds):
        return np.concatenate([features.numpy() for _, features in ds])

    same = bool(np.allclose(values(per_element), values(vectorized), rtol=1e-5, atol=1e-5))  # also warms up
    per_s, vec_s = [], []
    for _ in range(repeats):
        per_s.append(timing.stopwatch(lambda: [None for _ in per_element])[1])
        vec_s.append(timing.stopwatch(lambda: [None for _ in vectorized])[1])
    per, vec = statistics.median(per_s), statistics.median(vec_s)
    return {
        "function": getattr(fn, "__name__", repr(fn)),
        "parallel": parallel,
        "per_element_s": per,
        "vectorized_s": vec,
        "speedup": per / max(vec, 1e-9),
        "same_values": same,
    }


def threads_in_flight(
    private_threadpool_size: int | None = None, *, calls: int = 32, elements: int = 64, latency: float = 0.005
) -> int:
    """The most reads in flight at once when a map with ``num_parallel_calls=calls`` reads sleeping
    storage: how many threads ``tf.data`` gives that map (with that ``private_threadpool_size``)."""
    store = SimulatedStorage(elements, latency=latency)
    ds = tf.data.Dataset.range(elements).map(store.read, num_parallel_calls=calls)
    if private_threadpool_size is not None:
        options = tf.data.Options()
        options.threading.private_threadpool_size = private_threadpool_size
        ds = ds.with_options(options)
    for _ in ds:
        pass
    return store.max_in_flight


# ---------------------------------------------------------------------------------------
# Is my training input-bound?


def sleeping_pipeline(batches: int, ms: float, batch: int = 8):
    """``batches`` batches of ``(keys, features)``, each costing ``ms`` ms of input work (a read that waits)."""

    def produce(index):
        time.sleep(ms / 1e3)
        return index

    ds = tf.data.Dataset.range(batches).map(lambda i: tf.py_function(produce, [i], tf.int64))
    return ds.map(lambda i: (tf.fill([batch], i), tf.fill([batch, 4], tf.cast(i, tf.float32))))


def sleeping_step(ms: float) -> Callable[[Any], None]:
    """A training step that takes ``ms`` ms of "device" time on a batch ``(keys, features)``."""

    def step(element) -> None:
        tf.reduce_sum(element[1])
        time.sleep(ms / 1e3)

    return step


def fit_runs(
    records: int,
    batch: int,
    epochs: int,
    variants: Sequence[dict],
    *,
    latency: float = 0.002,
    progress: Progress | None = None,
) -> list[dict]:
    """Keras ``fit`` on :func:`build_pipeline` with each of ``variants`` (settings dicts).

    The model (two dense layers) learns each record's mean from its augmented features; a
    callback sets the epoch for :func:`augment`. One record per variant: ``pipeline``,
    ``epoch_seconds`` (each epoch, the first including Keras' tracing), ``busy`` (the mean of
    :mod:`tfperf.measure.monitor`'s samples) and ``timeline`` (the samples).
    """
    import keras

    rows = []
    for i, settings in enumerate(variants):
        settings = dict(settings)
        prefetch = settings.pop("prefetch", False)
        store = SimulatedStorage(records, latency=latency)
        ds = build_pipeline(store, batch, **settings).map(
            lambda keys, x: (x, tf.reduce_mean(x, axis=-1, keepdims=True))
        )
        if prefetch:
            ds = ds.prefetch(AUTOTUNE)
        model = keras.Sequential(
            [keras.Input((RECORD_BYTES,)), keras.layers.Dense(64, activation="relu"), keras.layers.Dense(1)]
        )
        model.compile(optimizer="sgd", loss="mse")
        marks: list[float] = []
        callback = keras.callbacks.LambdaCallback(
            on_epoch_begin=lambda epoch, logs=None: (set_epoch(epoch), marks.append(timing.now())),
            on_epoch_end=lambda epoch, logs=None: marks.append(timing.now()),
        )
        with (
            logs.captured_stderr()
        ):  # Keras warns that a dataset of unknown length "ran out of data" at each epoch's end
            _, samples = monitor.busy_while(
                lambda: model.fit(ds, epochs=epochs, verbose=0, shuffle=False, callbacks=[callback]), interval=0.02
            )
        rows.append(
            {
                "pipeline": describe_settings(prefetch=prefetch, **settings),
                "epoch_seconds": [marks[j + 1] - marks[j] for j in range(0, len(marks) - 1, 2)],
                "busy": monitor.mean_busy(samples),
                "timeline": samples,
                "source": samples[0]["source"] if samples else "cpu",
            }
        )
        if progress:
            progress(i + 1, len(variants))
    return rows


def plot_fit_runs(fig, runs) -> None:
    """Draw the last run of :func:`fit_runs`: how busy the device was while ``fit`` consumed each pipeline."""
    from tfperf.lesson import plots

    plots.plot_busy_timeline(
        fig.subplots(1, 1),
        runs[-1].records if runs else [],
        label="pipeline",
        xlabel="time since fit started (s)",
        title="How busy the device is while fit consumes the pipeline",
    )


PREFETCH_VARIANTS = ("no prefetch (autotune and inject_prefetch off)", "default options", "explicit prefetch")


def prefetch_overlap(
    batches: int = 12, pipeline_ms: float = 5.0, step_ms: float = 5.0, *, repeats: int = 5
) -> list[dict]:
    """The pipeline alone, the steps alone and both, for :func:`sleeping_pipeline` and
    :func:`sleeping_step`, in the three :data:`PREFETCH_VARIANTS` (medians of ``repeats``, seconds).

    ``tf.data`` injects a prefetch by itself when autotuning is on and the pipeline ends with a
    synchronous transformation (``inject_prefetch``); the first variant turns both off.
    """
    off = tf.data.Options()
    off.autotune.enabled = False
    off.experimental_optimization.inject_prefetch = False
    step = sleeping_step(step_ms)
    variants = {
        PREFETCH_VARIANTS[0]: lambda ds: ds.with_options(off),
        PREFETCH_VARIANTS[1]: lambda ds: ds,
        PREFETCH_VARIANTS[2]: lambda ds: ds.prefetch(AUTOTUNE),
    }
    in_memory = list(sleeping_pipeline(batches, 0.0))

    def median(fn):
        return statistics.median(timing.stopwatch(fn)[1] for _ in range(repeats))

    step_s = median(lambda: [step(b) for b in in_memory])
    rows = []
    for name, make in variants.items():
        ds = make(sleeping_pipeline(batches, pipeline_ms))
        rows.append(
            {
                "variant": name,
                "pipeline_s": median(lambda: [None for _ in ds]),
                "step_s": step_s,
                "both_s": median(lambda: [step(b) for b in ds]),
            }
        )
    return rows


def bound_by(pipeline_s: float, step_s: float) -> str:
    """``"input-bound"`` when the pipeline alone takes longer than the steps alone, else ``"compute-bound"``."""
    return "input-bound" if pipeline_s > step_s else "compute-bound"
