"""Chapter 8 (capstone): one training script with several pitfalls at once, each a switch, and the fixes measured.

The script is what a learner might write: a classifier (a multilayer perceptron) trained by a custom loop on
generated records through a ``tf.data`` pipeline. Each pitfall of :data:`PITFALLS` is one switch of
:func:`make_training`, named by the code ``tfperf diagnose`` gives it:

- ``eager-steps``: the step runs op by op; fixed: ``tf.function``;
- ``retracing``: the learning rate of a decaying schedule passed as a Python float, a new trace for every value
  once the step is a ``tf.function``; fixed: passed as a tensor;
- ``input-bound``: each record is preprocessed on its own, one at a time (``map`` with ``synchronous=True``, then
  ``batch``) every epoch again, and nothing is prepared ahead of the step; fixed: the preprocessing, the same every
  epoch, done once for all the records in one vectorized call, the batches prefetched;
- ``host-read-every-step``: the loss read with ``float()`` after every step, to log it; fixed: read once a call;
- ``print-in-step``: a progress line printed every step; fixed: none.

:func:`make_fit_training` writes the same script with Keras's ``fit``, which leaves two of those causes possible:
the pipeline, and one step per call of its train function (``steps_per_execution``).

:func:`fix_ladder` measures the script with every pitfall, then with the fixes applied one at a time, each
configuration timed in interleaved rounds (medians); :func:`plot_waterfall` draws each fix's gain.
:func:`variant` draws a script with one pitfall (or none) and sizes of its own: what the chapter's diagnosis
exercise is graded on.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tfperf.measure import flops as flop_counts
from tfperf.measure import timing
from tfperf.measure.timing import Progress
from tfperf.runtime import logs

tf = logs.tensorflow()

#: The pitfalls the script can have, by the code ``tfperf diagnose`` names them, in the order the chapter fixes
#: them: the step first, then what that uncovers (the retracing), then the pipeline, then the host work.
PITFALLS = ("eager-steps", "retracing", "input-bound", "host-read-every-step", "print-in-step")
FEATURES, CLASSES = 32, 8
PREPROCESS_OPS = 72  #: elementwise operations of :func:`preprocess` per value
LEARNING_RATE, DECAY = 0.05, 0.999


def make_data(records: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """``records`` float32 feature vectors and int32 labels of a fixed linear teacher (with noise)."""
    teacher = np.random.default_rng(8).standard_normal((FEATURES, CLASSES)).astype(np.float32)
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((records, FEATURES)).astype(np.float32)
    y = np.argmax(x @ teacher + 0.5 * rng.standard_normal((records, CLASSES)), axis=1).astype(np.int32)
    return x, y


def preprocess(x, y):
    """A record's (or a batch's) preprocessing: :data:`PREPROCESS_OPS` elementwise operations that squash the
    features, the same values for one record or a whole batch."""
    for _ in range(PREPROCESS_OPS // 3):
        x = tf.tanh(x * 1.1) * 0.9 + 0.01
    return x, y


def pipeline(x: np.ndarray, y: np.ndarray, batch: int, *, per_record: bool):
    """The script's input pipeline, repeated forever: records preprocessed one at a time as they are taken
    (``per_record``), or all of them once, up front, in one vectorized call, then batched and prefetched."""
    if not per_record:
        # the preprocessing is the same every epoch: done once, on all the records at a time (what a cache after
        # the map would keep); then cut into batches before tf.data takes them, one element a batch (sliced into
        # records and batched again, each batch cost about a tenth of a step on a 2-core AMD EPYC with AVX-512,
        # measured by the Profiler's input wait: 0.07 to 0.14 against 0.01 to 0.02 batched first), and prefetched
        x, y = preprocess(tf.constant(x), tf.constant(y))
        whole = len(x) // batch * batch  # the last, partial batch dropped
        x = tf.reshape(x[:whole], (-1, batch, *x.shape[1:]))
        y = tf.reshape(y[:whole], (-1, batch, *y.shape[1:]))
        return tf.data.Dataset.from_tensor_slices((x, y)).prefetch(tf.data.AUTOTUNE).repeat()
    ds = tf.data.Dataset.from_tensor_slices((x, y))
    ds = ds.map(preprocess, synchronous=True).batch(batch, drop_remainder=True)
    # and nothing ahead of the step: tf.data's own prefetch (inject_prefetch, with autotuning) turned off, as
    # chapter 4, section 7 does, and map and batch left as two stages (fused, they work ahead in a thread of
    # their own), so that the records are preprocessed while the step waits for them
    ahead = tf.data.Options()
    ahead.autotune.enabled = False
    ahead.experimental_optimization.inject_prefetch = False
    ahead.experimental_optimization.map_and_batch_fusion = False
    return ds.with_options(ahead).repeat()


def make_model(width: int, seed: int):
    import keras

    keras.utils.set_random_seed(seed)
    return keras.Sequential(
        [
            keras.Input((FEATURES,)),
            keras.layers.Dense(width, activation="relu"),
            keras.layers.Dense(width, activation="relu"),
            keras.layers.Dense(CLASSES),
        ]
    )


@dataclass
class Training:
    """A script made by :func:`make_training`: ``train(steps)`` runs that many steps and returns the last loss."""

    train: Callable[[int], float]
    pitfalls: frozenset[str]
    batch: int
    width: int
    seed: int
    data: tuple[np.ndarray, np.ndarray] = field(repr=False)
    model: Any = field(repr=False)
    steps_done: Callable[[], int] = field(repr=False, default=lambda: 0)  #: the steps ``train`` ran so far

    def flops_per_step(self) -> int:
        """The matmul FLOPs of one train step (:func:`tfperf.measure.flops.dense_train_step`)."""
        return flop_counts.dense_train_step(self.batch, [FEATURES, self.width, self.width, CLASSES])


def _known(pitfalls: Sequence[str], known: Sequence[str], script: str) -> frozenset[str]:
    """``pitfalls`` as a set, or a ValueError naming those that ``script`` cannot have."""
    unknown = set(pitfalls) - set(known)
    if unknown:
        raise ValueError(f"unknown pitfalls {sorted(unknown)}; {script} has {', '.join(known)}")
    return frozenset(pitfalls)


def make_training(
    pitfalls: Sequence[str] = PITFALLS,
    *,
    batch: int = 64,
    width: int = 256,
    records: int = 2048,
    seed: int = 0,
    data: tuple[np.ndarray, np.ndarray] | None = None,
) -> Training:
    """The capstone's script with ``pitfalls`` (a subset of :data:`PITFALLS`); the same data, model and results
    whatever the pitfalls (only the time changes). Its records are ``data`` (features, labels) where given, else
    :func:`make_data` of ``records`` and ``seed``."""
    pitfalls = _known(pitfalls, PITFALLS, "the script")
    import keras

    x, y = make_data(records, seed) if data is None else data
    model = make_model(width, seed)
    optimizer = keras.optimizers.SGD(LEARNING_RATE)
    optimizer.build(model.trainable_variables)
    loss_of = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    def step(features, labels, learning_rate):
        with tf.GradientTape() as tape:
            loss = loss_of(labels, model(features, training=True))
        gradients = tape.gradient(loss, model.trainable_variables)
        optimizer.learning_rate.assign(learning_rate)
        optimizer.apply_gradients(zip(gradients, model.trainable_variables))
        return loss

    if "eager-steps" not in pitfalls:
        step = tf.function(step)
    batches = iter(pipeline(x, y, batch, per_record="input-bound" in pitfalls))
    done = [0]
    history: list[float] = []

    def train(steps: int) -> float:
        loss = None
        for _ in range(steps):
            done[0] += 1
            rate = LEARNING_RATE * DECAY ** done[0]  # a decaying learning rate
            features, labels = next(batches)
            loss = step(features, labels, rate if "retracing" in pitfalls else tf.constant(rate, tf.float32))
            if "host-read-every-step" in pitfalls:
                history.append(float(loss))  # to log it
            if "print-in-step" in pitfalls:
                print(f"step {done[0]} done")
        return float(loss) if loss is not None else float("nan")  # one read a call

    return Training(train, pitfalls, batch, width, seed, (x, y), model, lambda: done[0])


#: The pitfalls of the script's ``fit`` variant (:func:`make_fit_training`): Keras's ``fit`` has none of the loop's
#: others (it runs its step as a graph, passes the learning rate's schedule in the graph, prints nothing a step).
FIT_PITFALLS = ("input-bound", "one-step-per-call")
#: The steps of one call of the fixed ``fit`` variant's train function (``steps_per_execution``).
FIT_STEPS_PER_CALL = 16


def make_fit_training(
    pitfalls: Sequence[str] = FIT_PITFALLS,
    *,
    batch: int = 64,
    width: int = 256,
    records: int = 2048,
    seed: int = 0,
    data: tuple[np.ndarray, np.ndarray] | None = None,
) -> Training:
    """The capstone's script written with Keras's ``fit``: the same data, model, loss, optimizer and decaying learning
    rate (a Keras schedule), with ``pitfalls`` (a subset of :data:`FIT_PITFALLS`): ``input-bound``, the same pipeline as
    :func:`make_training`'s; ``one-step-per-call``, ``steps_per_execution=1`` (fixed: :data:`FIT_STEPS_PER_CALL`).
    ``train(steps)`` runs one ``fit`` call of ``steps`` steps (a multiple of the steps a call where fixed) and returns
    the last loss Keras logged."""
    pitfalls = _known(pitfalls, FIT_PITFALLS, "the fit variant")
    import keras

    x, y = make_data(records, seed) if data is None else data
    model = make_model(width, seed)
    per_call = 1 if "one-step-per-call" in pitfalls else FIT_STEPS_PER_CALL
    # the loop's rate at its step k (from 1) is LEARNING_RATE * DECAY**k; Keras's schedule counts steps from 0
    schedule = keras.optimizers.schedules.ExponentialDecay(LEARNING_RATE * DECAY, decay_steps=1, decay_rate=DECAY)
    model.compile(
        optimizer=keras.optimizers.SGD(schedule),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        steps_per_execution=per_call,
    )
    dataset = pipeline(x, y, batch, per_record="input-bound" in pitfalls)
    done = [0]

    def train(steps: int) -> float:
        if steps % per_call:
            raise ValueError(f"run a multiple of {per_call} steps: each call of the train function runs {per_call}")
        history = model.fit(dataset, epochs=1, steps_per_epoch=steps, shuffle=False, verbose=0)
        done[0] += steps
        return float(history.history["loss"][-1])

    return Training(train, pitfalls, batch, width, seed, (x, y), model, lambda: done[0])


def data_hash(training: Training) -> str:
    """The registry's hash of the data ``training`` trains on (:func:`tfperf.diagnosis.registry.data_hash`)."""
    from tfperf.diagnosis.registry import data_hash as hash_of

    return hash_of(*training.data)


# ---------------------------------------------------------------------------------------
# The fixes, one at a time.


def ladder(pitfalls: Sequence[str] = PITFALLS) -> list[tuple[str, frozenset[str]]]:
    """The configurations of the fix ladder: every pitfall, then each fixed in turn (``(label, pitfalls left)``)."""
    left = [p for p in PITFALLS if p in pitfalls]
    rungs = [("as written", frozenset(left))]
    for fixed in list(left):
        left.remove(fixed)
        rungs.append((f"fix {fixed}", frozenset(left)))
    return rungs


def fix_ladder(
    steps: int,
    *,
    rounds: int = 3,
    batch: int = 64,
    width: int = 256,
    pitfalls: Sequence[str] = PITFALLS,
    progress: Progress | None = None,
) -> list[dict[str, Any]]:
    """Time ``steps`` steps of each configuration of :func:`ladder`, ``rounds`` times in interleaved rounds (after
    a warm-up call each); one record a configuration: ``label``, ``pitfalls``, ``seconds`` (the median of the
    rounds), ``all_seconds``, ``examples_per_second``, ``loss`` (of the last call) and ``flops_per_step``."""
    rungs = ladder(pitfalls)
    scripts = [make_training(left, batch=batch, width=width) for _, left in rungs]
    with logs.captured_output():  # the prints of print-in-step
        for script in scripts:
            script.train(3)  # traces, the first batches
        times: list[list[float]] = [[] for _ in scripts]
        losses = [float("nan")] * len(scripts)
        for r in range(rounds):
            for i, script in enumerate(scripts):
                losses[i], seconds = timing.stopwatch(lambda: script.train(steps))
                times[i].append(seconds)
            if progress:
                progress(r + 1, rounds)
    records = []
    for (label, left), script, seconds, loss in zip(rungs, scripts, times, losses):
        median = statistics.median(seconds)
        records.append(
            {
                "label": label,
                "pitfalls": sorted(left),
                "seconds": median,
                "all_seconds": seconds,
                "examples_per_second": steps * batch / median,
                "loss": loss,
                "flops_per_step": script.flops_per_step(),
                "flops_per_s": script.flops_per_step() * steps / median,
                "steps": steps,
            }
        )
    return records


def slower_fixes(records: Sequence[dict[str, Any]]) -> list[str]:
    """A line for each fix of a ladder (:func:`fix_ladder`) that measured slower than the rung before it: whether
    every round said so (the fix made this script slower here: it may have uncovered another cause) or the rounds'
    times overlap (the two are the same within this measurement's noise)."""
    lines = []
    for before, after in zip(records, records[1:]):
        if after["seconds"] <= before["seconds"]:
            continue
        ratio = after["seconds"] / before["seconds"]
        if min(after["all_seconds"]) > max(before["all_seconds"]):
            why = "slower in every round: it made this script slower here (a fix can uncover another cause)"
        else:
            why = "the rounds' times overlap: no faster, but not measurably slower either (more steps measure closer)"
        lines.append(f"{after['label']}: {ratio:.2f}x the time of the rung before it; {why}.")
    return lines


#: The waterfall's colours: the script as written, a fix that measured faster, one that measured slower.
WATERFALL_COLORS = {"as written": "tab:gray", "faster": "tab:green", "slower": "tab:red"}


def plot_waterfall(fig, runs) -> None:
    """Every run's ladder (:func:`fix_ladder`): each fix's gain as a bar from the time a step took before it to the
    time after it (ms per step, log scale), green where it measured faster, red where it measured slower; several
    runs side by side at each rung, their bars told apart by their edges' line style and labelled with the run."""
    from matplotlib.patches import Patch
    from matplotlib.ticker import FuncFormatter

    from tfperf.lesson import plots

    drawn = [(run, prefix, style) for run, prefix, style in plots.each_run(runs) if run.records]
    ax = fig.add_subplot(1, 1, 1)
    if not drawn:
        return
    labels = [label for label, _ in ladder()]
    labels = [label for label in labels if any(r["label"] == label for run, _, _ in drawn for r in run.records)]
    width = 0.8 / len(drawn)
    every_ms = [r["seconds"] / r["steps"] * 1e3 for run, _, _ in drawn for r in run.records]
    floor = min(every_ms) / 2  # the first bars start here: a log axis has no zero
    for k, (run, _, style) in enumerate(drawn):
        per_step = [r["seconds"] / r["steps"] * 1e3 for r in run.records]
        for i, (record, ms) in enumerate(zip(run.records, per_step)):
            before = per_step[i - 1] if i else floor
            low, high = sorted((before, ms))
            kind = "as written" if i == 0 else ("faster" if ms <= before else "slower")
            x = labels.index(record["label"]) - 0.4 + width * (k + 0.5)
            ax.bar(
                x,
                high - low,
                bottom=low,
                color=WATERFALL_COLORS[kind],
                width=width * 0.9,
                edgecolor="black",
                linestyle=style,
                linewidth=0.8,
            )
            gain = f"{before / ms:.2f}x\n" if i else ""
            ax.annotate(f"{gain}{ms:.2f} ms", (x, high), ha="center", va="bottom", fontsize=9 if len(drawn) == 1 else 7)
    ax.set_xticks(range(len(labels)), labels, rotation=20, ha="right")
    ax.set_yscale("log")
    ax.set_ylim(floor, max(every_ms) * 2.5)
    ax.yaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
    ax.set_ylabel("ms per step (median of the rounds)")
    legend = [Patch(color=color, label=kind) for kind, color in WATERFALL_COLORS.items()]
    legend += [Patch(facecolor="white", edgecolor="black", linestyle=style, label=run.label) for run, _, style in drawn]
    ax.legend(handles=legend, fontsize=8, loc="upper right")
    latest = [r["seconds"] / r["steps"] for r in drawn[-1][0].records]
    ax.set_title(f"Each fix's gain, measured here ({drawn[-1][0].label}: {latest[0] / latest[-1]:.1f}x in all)")


# ---------------------------------------------------------------------------------------
# Unseen scripts, for the diagnosis exercise.


def variant(pitfall: str | None, seed: int | None) -> Training:
    """A script with one pitfall (None: none) and a batch and data of its own, drawn from ``seed`` (None: afresh).
    Its batches are large enough that the Profiler's few steps are not a handful of milliseconds (measured, batch
    512: the input wait of the fixed pipeline 0.05 to 0.10 on one core and at most 0.13 with both cores busy with
    other work, the unfixed one's 0.75 to 0.86; at batch 64 the fixed one's reached 0.51 under that load, a
    scheduler's time slice landing in a 5 ms window). On a faster CPU (a 2-CPU AMD EPYC with AVX-512, about 2.5 ms a
    step) that fixed pipeline, its records sliced and batched again, waited 0.07 to 0.14 on one core and once 0.23 (named
    input-bound); batched before tf.data takes them (:func:`pipeline` now), 0.01 to 0.02 (8 draws each)."""
    if pitfall is not None and pitfall not in PITFALLS:
        raise ValueError(f"unknown pitfall {pitfall!r}; the script has {', '.join(PITFALLS)}")
    rng = np.random.default_rng(seed)
    return make_training(
        [pitfall] if pitfall else [],
        batch=int(rng.choice([512, 640])),
        width=256,
        records=4096,
        seed=int(rng.integers(0, 2**31 - 1)),
    )
