"""Chapter 7 (beyond one device): its data, the layer that shows where a model ran, what replication costs, and
the tf.data service's steady throughput.

:class:`ReplicaWitness` passes its input through unchanged; each time it runs or is traced, it notes which
replica ran it (``tf.distribute.get_replica_context().replica_id_in_sync_group``; ``None`` in the cross-replica
context of a strategy's scope) and the batch size it saw; not while Keras infers shapes to build the model.
``MirroredStrategy.run`` traces the step once per replica, so after a replicated step the notes hold one line per
replica, each with its per-replica batch. The notes are kept where only :func:`witnessed` and
:func:`forget_witnessed` reach them.

Tracing shows where a model *could* run; the witness also counts what ran. It multiplies its input by a trainable
scalar (1 at first), so that training computes a gradient through it, and each such gradient computed on a replica of
a strategy adds one to a counter of that replica (a variable synchronized on read, summed): after ``steps`` steps
trained on the replicas, :func:`replica_backward_passes` reads ``steps`` for every replica. The counter is not one of
the model's weights (``set_weights`` cannot write it) and is kept where only that function reads it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from tfperf.measure import timing
from tfperf.measure.timing import Progress
from tfperf.runtime import logs

tf = logs.tensorflow()
import keras  # noqa: E402  (after TensorFlow, quietly)
from keras.src.backend.common.symbolic_scope import in_symbolic_scope  # noqa: E402

FEATURES, CLASSES = 32, 4


def _notes():
    seen: list[tuple[int | None, int | None]] = []

    def note(replica: int | None, batch: int | None) -> None:
        seen.append((replica, batch))

    def read() -> list[tuple[int | None, int | None]]:
        return list(seen)

    def clear() -> None:
        seen.clear()

    return note, read, clear


_note, witnessed, forget_witnessed = _notes()


def _counters():
    import weakref

    counters: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

    def make(layer: Any) -> None:
        counters[layer] = tf.Variable(
            0,
            dtype=tf.int64,
            trainable=False,
            synchronization=tf.VariableSynchronization.ON_READ,  # each replica its own copy
            aggregation=tf.VariableAggregation.SUM,
            name="backward_passes",
        )

    def count(layer: Any) -> Any:
        return counters[layer].assign_add(1)

    def read(model: Any) -> list[list[int]]:
        """For each witness layer of ``model``: the backward passes each replica's copy counted (one copy when the
        model was made outside a strategy's scope)."""
        found = []
        for layer in getattr(model, "layers", []):
            counter = counters.get(layer) if isinstance(layer, ReplicaWitness) else None
            if counter is not None:
                copies = getattr(counter, "values", None) or (counter,)
                found.append([int(c.read_value()) for c in copies])
        return found

    return make, count, read


_make_counter, _count_backward, replica_backward_passes = _counters()


def make_data(records: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``records`` examples of a 4-class problem: float32 features (records, 32) and int32 labels, from ``seed``."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((records, FEATURES)).astype(np.float32)
    teacher = np.random.default_rng(7).standard_normal((FEATURES, CLASSES)).astype(np.float32)
    return x, np.argmax(x @ teacher, axis=1).astype(np.int32)


class ReplicaWitness(keras.layers.Layer):
    """Multiplies its input by a trainable scalar (1 at first); notes the replica that traced it and the batch it
    saw, and counts the gradients computed through it on a strategy's replicas (see the module)."""

    def build(self, input_shape: Any) -> None:
        self.scale = self.add_weight(shape=(), initializer="ones", name="scale")
        _make_counter(self)

    def call(self, inputs: Any) -> Any:
        if in_symbolic_scope():  # Keras inferring shapes while it builds the model: no step runs
            return inputs * self.scale
        context = tf.distribute.get_replica_context()
        # a constant tensor inside a traced step (MirroredStrategy): its value is known while tracing
        replica = None if context is None else tf.get_static_value(context.replica_id_in_sync_group)
        _note(None if replica is None else int(replica), inputs.shape[0])
        on_a_replica = context is not None and tf.distribute.has_strategy()
        layer = self

        @tf.custom_gradient
        def scaled(x: Any, scale: Any) -> Any:
            def gradient(upstream: Any) -> Any:
                grads = (upstream * scale, tf.reduce_sum(upstream * x))
                if on_a_replica:
                    with tf.control_dependencies([_count_backward(layer)]):
                        grads = tuple(tf.identity(g) for g in grads)
                return grads

            return x * scale, gradient

        return scaled(inputs, tf.convert_to_tensor(self.scale))


# ---------------------------------------------------------------- what replication costs, measured


def make_model(width: int, seed: int) -> Any:
    """The chapter's classifier: the witness, two ``Dense(width, relu)`` layers, then 4 logits."""
    keras.utils.set_random_seed(seed)
    return keras.Sequential(
        [
            keras.Input((FEATURES,)),
            ReplicaWitness(),
            keras.layers.Dense(width, activation="relu"),
            keras.layers.Dense(width, activation="relu"),
            keras.layers.Dense(CLASSES),
        ]
    )


def replicated_step(strategy: Any, *, width: int, per_replica: int, seed: int = 0) -> Callable[[], Any]:
    """One training step of :func:`make_model` under ``strategy`` (a custom loop: ``strategy.run`` in a
    ``tf.function``, each replica's loss averaged over the global batch), on one fixed global batch of
    ``per_replica`` x replicas examples, already split onto the replicas. Returns a function that runs one step."""
    batch = per_replica * strategy.num_replicas_in_sync
    x, y = make_data(batch, seed)
    with strategy.scope():
        model, optimizer = make_model(width, seed), keras.optimizers.SGD(0.01)
    loss_of = keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction=None)
    features, labels = next(iter(strategy.experimental_distribute_dataset(tf.data.Dataset.from_tensors((x, y)))))

    def step(features, labels):
        with tf.GradientTape() as tape:
            per_example = loss_of(labels, model(features, training=True))
            loss = tf.nn.compute_average_loss(per_example, global_batch_size=batch)
        optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
        return loss

    @tf.function
    def run():
        return strategy.reduce(tf.distribute.ReduceOp.SUM, strategy.run(step, args=(features, labels)), axis=None)

    return run


def all_reduce(strategy: Any, floats: int) -> Callable[[], Any]:
    """A function that all-reduces (sums) one float32 tensor of ``floats`` values from every replica: the
    communication of a step whose gradients hold that many values, without the step."""
    values = strategy.experimental_distribute_values_from_function(lambda ctx: tf.ones((floats,), tf.float32))

    def reduce(value):
        return tf.distribute.get_replica_context().all_reduce(tf.distribute.ReduceOp.SUM, value)

    @tf.function
    def run():
        return strategy.run(reduce, args=(values,))

    return run


def scaling(
    devices: Sequence[str],
    *,
    width: int,
    per_replica: int,
    repeats: int = 5,
    min_time: float = 0.1,
    progress: Progress | None = None,
) -> list[dict[str, Any]]:
    """Step time and throughput for 1, 2, ... ``len(devices)`` replicas (the first ones) at a fixed per-replica
    batch, so that the global batch grows with the replicas; and what the all-reduce of the model's gradients adds:
    one ``strategy.run`` of the reduction alone on the same replicas, less the same call on one replica (a call's
    fixed cost, with nothing to reduce). It reduces one tensor of all the gradients' values, as Keras's optimizer does
    in a compiled step (by default every gradient goes into one pack: concatenated, reduced, split again). Medians of ``repeats`` synced samples of at least ``min_time`` seconds. One record per replica
    count: ``replicas``, ``global_batch``, ``ms_per_step``, ``examples_per_second``, ``call_ms`` (the one-replica
    call), ``all_reduce_ms`` (what more replicas add to it), ``all_reduce_share`` (of the step) and ``efficiency``
    (examples per second / (replicas x those of one))."""
    from tfperf.runtime import replicas as replica_devices

    records: list[dict[str, Any]] = []
    floats = sum(int(np.prod(v.shape)) for v in make_model(width, 0).trainable_variables)
    for count in range(1, len(devices) + 1):
        strategy = replica_devices.strategy(list(devices[:count]))
        step = replicated_step(strategy, width=width, per_replica=per_replica)
        seconds = timing.measure(step, repeats=repeats, min_time=min_time).median
        reduce_seconds = timing.measure(all_reduce(strategy, floats), repeats=repeats, min_time=min_time).median
        rate = count * per_replica / seconds
        call = records[0]["call_ms"] / 1e3 if records else reduce_seconds  # one replica: nothing is reduced
        added = max(0.0, reduce_seconds - call)
        records.append(
            {
                "replicas": count,
                "global_batch": count * per_replica,
                "ms_per_step": 1e3 * seconds,
                "examples_per_second": rate,
                "call_ms": 1e3 * call,
                "all_reduce_ms": 1e3 * added,
                "all_reduce_share": added / seconds,
                "efficiency": rate / (count * records[0]["examples_per_second"]) if records else 1.0,
            }
        )
        if progress:
            progress(count, len(devices))
    return records


def plot_scaling(fig: Any, runs: Sequence[Any]) -> None:
    """Draw runs of :func:`scaling`: examples per second against replicas, with the ideal (one replica's rate times
    the replicas) dotted; and the efficiency and the share of a step that the all-reduce adds."""
    from tfperf.lesson import plots

    ax_rate, ax_share = fig.subplots(1, 2)
    for run, prefix, style in plots.each_run(runs):
        counts = [r["replicas"] for r in run.records]
        color = plots.group_color(ax_rate, run.label)

        def line(ax: Any, key: str, marker: str, label: str, alpha: float = 1.0) -> None:
            values = [r[key] for r in run.records]
            ax.plot(counts, values, marker=marker, linestyle=style, color=color, alpha=alpha, label=prefix + label)

        line(ax_rate, "examples_per_second", "o", "measured")
        if run.records:
            one = run.records[0]["examples_per_second"]
            ax_rate.plot(counts, [one * c for c in counts], linestyle=":", color=color, label=f"{prefix}ideal")
        line(ax_share, "efficiency", "o", "efficiency")
        line(ax_share, "all_reduce_share", "s", "what the all-reduce adds, share of a step", alpha=0.6)
    ax_rate.set(xlabel="replicas", ylabel="examples per second", title="Throughput (higher is better)")
    ax_share.set(xlabel="replicas", ylabel="fraction", title="Efficiency, and what the all-reduce adds")
    for ax in (ax_rate, ax_share):
        ax.xaxis.get_major_locator().set_params(integer=True)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize="small")


# ---------------------------------------------------------------- the tf.data service, measured


def one_thread(dataset: Any) -> Any:
    """``dataset`` run on one thread (its own pool of one, its maps left sequential): what a worker of one core does."""
    options = tf.data.Options()
    options.threading.private_threadpool_size = 1
    options.experimental_optimization.map_parallelization = False
    return dataset.with_options(options)


def steady_rate(dataset: Any, elements: int, *, warmup: int | None = None) -> float:
    """Elements per second read from ``dataset`` (batches counted by their rows) once ``warmup`` elements (default: a
    tenth) were read: one long job, so that a service's job start and end (about a second each, its client's task
    refresh) are not timed. Read on the CPU (on a GPU machine a service's elements cannot be iterated on the GPU)."""

    def rows(element: Any) -> int:
        first = tf.nest.flatten(element)[0]
        return int(first.shape[0]) if first.shape.rank else 1

    warmup = elements // 10 if warmup is None else warmup
    with tf.device("/cpu:0"):
        iterator, seen, start = iter(dataset), 0, None
        try:
            while seen < warmup:
                seen += rows(next(iterator))
            start, seen = timing.now(), 0
            while seen < elements:
                seen += rows(next(iterator))
        except StopIteration:
            read = seen if start is None else warmup + seen
            raise ValueError(
                f"The dataset ended after about {read} elements: a steady rate needs {warmup} to warm up and "
                f"{elements} to time (an endless dataset, e.g. Dataset.range(10**9))."
            ) from None
        return seen / (timing.now() - start)


def service_scaling(
    make_pipeline: Callable[[], Any],
    *,
    workers: Sequence[int] = (1, 2),
    elements: int = 2048,
    batch: int = 16,
    pinned: bool = True,
    progress: Progress | None = None,
) -> list[dict[str, Any]]:
    """Elements per second of ``make_pipeline()`` (an endless dataset) read locally and through a tf.data service of
    each number of ``workers`` (``distributed_epoch``, batched by ``batch`` before ``distribute``), each in one long
    job (:func:`steady_rate`). ``pinned``: one core a worker (``DataService(pinned=True)``) and the local pipeline on
    one thread, so that each worker adds one core's worth and nothing else does. The service's processes start and stop
    here. One record each: ``where`` ("local" or "service"), ``workers`` (0 locally), ``rate``, ``speedup`` (over
    the local rate)."""
    from tfperf.runtime import servers

    def batched(dataset: Any) -> Any:
        return dataset.batch(batch) if batch else dataset

    local = batched(make_pipeline())
    records = [{"where": "local", "workers": 0, "rate": steady_rate(one_thread(local) if pinned else local, elements)}]
    if progress:
        progress(1, 1 + len(workers))
    for count in workers:
        # made on the CPU, as it is read (steady_rate): on a GPU machine a served dataset made outside a CPU scope
        # failed to read on an NVIDIA H200 ("No unary variant device copy function found ... CompressedElement")
        with servers.DataService(workers=count, pinned=pinned) as service, tf.device("/cpu:0"):
            served = batched(make_pipeline()).apply(
                tf.data.experimental.service.distribute("distributed_epoch", service.target)
            )
            records.append({"where": "service", "workers": count, "rate": steady_rate(served, elements)})
        if progress:
            progress(len(records), 1 + len(workers))
    for record in records:
        record["speedup"] = record["rate"] / records[0]["rate"]
    return records


def plot_service(fig: Any, runs: Sequence[Any]) -> None:
    """Draw runs of :func:`service_scaling`: elements per second against the service's workers, the local pipeline's
    rate as a dashed line, and the ideal (the local rate times the workers) dotted."""
    from tfperf.lesson import plots

    ax = fig.subplots()
    for run, prefix, style in plots.each_run(runs):
        color = plots.group_color(ax, run.label)
        served = [r for r in run.records if r["where"] == "service"]
        local = [r["rate"] for r in run.records if r["where"] == "local"]
        counts = [r["workers"] for r in served]
        ax.plot(counts, [r["rate"] for r in served], marker="o", linestyle=style, color=color, label=f"{prefix}service")
        if local and counts:
            ax.axhline(local[0], linestyle="--", color=color, alpha=0.6, label=f"{prefix}local, this process")
            ax.plot(counts, [local[0] * c for c in counts], linestyle=":", color=color, label=f"{prefix}ideal")
    ax.set(xlabel="service workers", ylabel="elements per second", title="The tf.data service (higher is better)")
    ax.xaxis.get_major_locator().set_params(integer=True)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small")
