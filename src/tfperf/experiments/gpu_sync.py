"""Chapter 5 experiments: host syncs in a training loop, and what they cost.

The model is a linear regression trained with plain SGD on batches already on the
compute device, so that everything but the loop's structure stays the same. Four ways
to run ``steps`` training steps while still reporting the loss:

- ``read every step``: ``loss.numpy()`` after every step (the incident);
- ``read every N steps``: the same loop, reading the loss on every N-th step only;
- ``sum on device, read every N``: add the losses up on the device, read their mean every N steps;
- ``N steps per tf.function``: N steps run inside one ``tf.function`` call (a
  ``tf.range`` loop), which returns the last loss to read: Keras' ``steps_per_execution``.
"""

from __future__ import annotations

import contextlib
import statistics
from collections.abc import Callable, Iterator, Sequence

import numpy as np

from tfperf.measure import host_syncs, monitor, timing
from tfperf.measure.timing import Progress
from tfperf.runtime import device, logs

STRATEGIES = ("read every step", "read every N steps", "sum on device, read every N", "N steps per tf.function")
LEARNING_RATE = 0.05
Report = Callable[[int, float], None]


def make_problem(
    steps: int, *, batch: int = 64, features: int = 32, outputs: int = 1, scale: float = 1.0, seed: int = 0
):
    """Initial weights ``w0`` (zeros, ``(features, outputs)``) and ``steps`` batches ``xs``, ``ys`` on the device.
    ``scale`` multiplies the inputs: above about 25 for 2048 features, :data:`LEARNING_RATE` is too large for them and
    the loss, after falling, grows again."""
    tf = logs.tensorflow()
    rng = np.random.default_rng(seed)
    w_true = rng.standard_normal((features, outputs)).astype(np.float32)
    xs = scale * rng.standard_normal((steps, batch, features)).astype(np.float32)
    ys = xs @ w_true + 0.1 * rng.standard_normal((steps, batch, outputs)).astype(np.float32)
    with tf.device(device.compute_device()):
        return tf.zeros([features, outputs]), tf.identity(tf.constant(xs)), tf.identity(tf.constant(ys))


def held_per_epoch(fn: Callable, args: Sequence) -> list[float]:
    """Call ``fn(*args, on_epoch_end)``: the MB more than before the call that this process holds at the end of each
    epoch (its resident anonymous and shared memory, :func:`tfperf.runtime.processes.held_bytes`; freed large blocks
    given back to the system during the call, :func:`~tfperf.runtime.processes.large_frees_returned`)."""
    import os

    from tfperf.runtime import processes

    with processes.large_frees_returned():
        start, held = processes.held_bytes(os.getpid()) or 0, []
        fn(*args, lambda epoch: held.append(((processes.held_bytes(os.getpid()) or 0) - start) / 1e6))
    return held


_compiled: dict[str, Callable] = {}
#: How many counted runs of :func:`train_step` a mark covers (:func:`marked`); later runs keep the last one.
MARKED_RUNS = 1024
#: The largest change of the step size a mark makes (:func:`marked`): each run's step is scaled by ``1 + e``,
#: ``|e|`` up to this.
MARK_SIZE = 0.5
#: The seed of marks that are all 1 (:func:`marks_of`): the runs as a call no check marks makes them, what they were
#: given summed as they are. :func:`unit_marks` draws such marks whose sum is weighted.
UNIT_MARKS = -1


def _state() -> dict:
    """:func:`train_step`'s graph and the variables it reads and writes (the count of its runs; the marks; what the
    marked runs were given), made once."""
    if "step" not in _compiled:
        tf = logs.tensorflow()
        with tf.init_scope():  # made once, outside any function being traced
            runs = tf.Variable(0, dtype=tf.int64, trainable=False, name="train_steps_run")
            marked_from = tf.Variable(0, dtype=tf.int64, trainable=False, name="train_steps_marked_from")
            marks = tf.Variable(tf.ones([MARKED_RUNS]), trainable=False, name="train_step_marks")
            weights = tf.Variable(tf.ones([MARKED_RUNS]), trainable=False, name="train_step_given_weights")
            given = tf.Variable(0.0, dtype=tf.float64, trainable=False, name="train_step_given")

        @tf.function
        def step(w, x, y):
            run = tf.minimum(runs.read_value() - marked_from.read_value(), MARKED_RUNS - 1)  # never below 0
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - y))
            mark = tf.gather(marks, run)
            inputs = tf.reduce_sum(x) + tf.reduce_sum(y) + tf.reduce_sum(w) + tf.cast(tf.size(w), w.dtype)
            weight = tf.cast(tf.gather(weights, run), tf.float64)  # the mark, or a tally's own weight
            given.assign_add(weight * tf.cast(inputs, tf.float64))  # w as this run found it
            w.assign_sub(LEARNING_RATE * tf.cast(mark, w.dtype) * tape.gradient(loss, w))
            runs.assign_add(1)
            return loss

        _compiled.update(step=step, runs=runs, marked_from=marked_from, marks=marks, given=given, weights=weights)
    return _compiled


def train_step(w, x, y):
    """One SGD step of the mean squared error of ``x @ w`` against ``y``; returns the loss (a tensor). Each run also
    adds one to a counter of this process's steps (:func:`steps_run`), eagerly or inside a graph that calls it. Inside
    a :func:`marked` block, its k-th run there scales its step by that block's k-th mark."""
    return _state()["step"](w, x, y)


def steps_run() -> int:
    """How many times :func:`train_step` has run in this process, eagerly or in graphs, so far: read from a variable
    its graph adds to, so a step queued on a GPU counts once the read has waited for it (the read is a host read:
    made by the grading, it is not counted as the learner's, :func:`tfperf.measure.host_syncs.uncounted`)."""
    if "runs" not in _compiled:
        return 0
    with host_syncs.uncounted():
        return int(_compiled["runs"].numpy())


class Tally:
    """What :func:`train_step`'s runs did in a :func:`work_done` block: tensors read without a wait at its start
    (``before``), at each call back of a function the check passed (:meth:`called_back`: a report) and at its end
    (``after``), turned into numbers once asked (:meth:`added`, :meth:`runs_at_calls`)."""

    def __init__(self, before: dict, runs):
        self.before, self.after, self.runs, self.at_calls = before, None, runs, []

    def called_back(self, position: int) -> None:
        """Note the runs queued so far at call back ``position`` (a tensor read without a wait: on a GPU it follows
        the steps queued before it, so it counts the runs the program asked for before this call, whether or not the
        device has made them)."""
        if self.after is None:
            with host_syncs.uncounted():
                self.at_calls.append((int(position), self.runs.read_value()))

    def added(self) -> dict:
        """By name, what the block's runs added: their number, and their weighted sum of what they were given."""
        with host_syncs.uncounted():  # the grading's own reads
            return {name: float(self.after[name]) - float(self.before[name]) for name in self.after}

    def runs_at_calls(self) -> list[list[int]]:
        """At each call back noted in the block, in order: its position among the block's calls back, and how many of
        the block's runs had been queued."""
        with host_syncs.uncounted():
            start = int(self.before[RUNS_TALLIED])
            return [[position, int(runs) - start] for position, runs in self.at_calls]


@contextlib.contextmanager
def work_done(seed: int) -> Iterator[Tally]:
    """Tally :func:`train_step`'s work in the block (a speed check's ``work``, :func:`tfperf.grading.assert_speedup`,
    around each call it compares): its runs, and the sum over them of what the k-th run was given (the sums of its
    batch, its targets and its weights as it found them, and their size) times the k-th weight drawn from ``seed``
    (:func:`weights_of`). The steps are not changed. Two calls that train with these runs on the same batches from the
    same weights, in order, add the same under one seed; runs on a probe or on made-up batches that add up to the same
    plain sum do not, the weights being drawn by the check and unknown to the answer. The tally also notes how many
    runs were queued at each report (:meth:`Tally.called_back`): when a report came, without waiting for it. Not
    inside a :func:`marked` block (which weighs the sums by its marks)."""
    state = _state()
    with host_syncs.uncounted():  # the grading's own uploads and reads, queued without a wait
        state["marked_from"].assign(state["runs"].read_value())
        state["weights"].assign(weights_of(seed))
        tally = Tally(_tallied(state), state["runs"])
    try:
        yield tally
    finally:
        with host_syncs.uncounted():
            tally.after = _tallied(state)
            state["weights"].assign(np.ones(MARKED_RUNS, np.float32))


#: The name of a :class:`Tally`'s count of runs.
RUNS_TALLIED = "runs of gpu_sync.train_step"


def _tallied(state: dict) -> dict:
    return {
        RUNS_TALLIED: state["runs"].read_value(),
        "weighted sum of what those runs were given (batches, targets, weights)": state["given"].read_value(),
    }


def weights_of(seed: int) -> np.ndarray:
    """The factors :func:`marked` weighs each run's part of the sum of what the runs were given by, for ``seed``: its
    marks (:func:`marks_of`), except for :func:`unit_marks`, whose marks are 1 and whose weights are drawn."""
    seed = int(seed)
    return marks_of(-2 - seed) if seed <= -2 else marks_of(seed)


def draw_marks() -> int:
    """A seed for :func:`marked`, drawn from the system's randomness: a check draws one per call."""
    import secrets

    return secrets.randbits(63)


def unit_marks() -> int:
    """A seed for :func:`marked` drawn from the system's randomness, whose marks are all 1 (the steps as a call no check
    marks makes them) while each run's part of the sum of what the runs were given is weighted by a factor drawn from
    it (:func:`weights_of`): runs on a probe or a made-up batch cannot add up to it. A negative number."""
    return -2 - draw_marks()


def marks_of(seed: int) -> np.ndarray:
    """The factors :func:`marked` scales the step sizes by, for ``seed``: ``1 + e``, ``e`` uniform within
    :data:`MARK_SIZE`, one per counted run (computed with NumPy, the same in every process); all 1 for a negative
    seed (:data:`UNIT_MARKS`, :func:`unit_marks`)."""
    if int(seed) < 0:
        return np.ones(MARKED_RUNS, np.float32)
    rng = np.random.default_rng(int(seed))
    return (1.0 + MARK_SIZE * rng.uniform(-1.0, 1.0, MARKED_RUNS)).astype(np.float32)


class Marked:
    """A :func:`marked` block: its ``seed``, and once it ended, ``given``: the sum, over the block's runs of
    :func:`train_step`, of the k-th mark times what the k-th run was given (the sums of its batch, its targets and its
    weights as it found them, and their size)."""

    def __init__(self, seed: int):
        self.seed, self.given = int(seed), None

    def same_given(self, given: float | None) -> bool:
        """Whether ``given`` (another block's, by the same seed) is this block's, to float tolerance."""
        return (
            given is not None and self.given is not None and bool(np.isclose(given, self.given, rtol=1e-5, atol=1e-3))
        )


@contextlib.contextmanager
def marked(seed: int | None) -> Iterator[Marked | None]:
    """In the block, :func:`train_step`'s k-th run scales its step size by the k-th factor of :func:`marks_of`
    ``(seed)`` (``None``: no marks), and adds what it was given, weighted by the k-th factor of :func:`weights_of`
    (the same factor, but for :func:`unit_marks`), to a sum (:class:`Marked`, yielded).
    A check runs the reference and the answer in such blocks with one seed: weights and losses match only where the
    answer's training was these runs, in this order; training by arithmetic of the answer's own, or on a copy, leaves
    other weights; and the sums match only where those runs were given the batches and the weights. The marks, the
    count and the sum live in variables of the course's, out of the restricted answer's reach."""
    if seed is None:
        yield None
        return
    state, block = _state(), Marked(seed)
    with host_syncs.uncounted():  # the grading's own reads and uploads
        state["marked_from"].assign(state["runs"].read_value())
        state["given"].assign(0.0)
        state["marks"].assign(marks_of(seed))
        state["weights"].assign(weights_of(seed))
    try:
        yield block
    finally:
        with host_syncs.uncounted():
            block.given = float(state["given"].numpy())
            state["marks"].assign(np.ones(MARKED_RUNS, np.float32))
            state["weights"].assign(np.ones(MARKED_RUNS, np.float32))


def train_steps(w, xs, ys):
    """``len(xs)`` training steps inside one ``tf.function`` call; returns the last loss."""
    if "steps" not in _compiled:
        tf = logs.tensorflow()

        @tf.function
        def steps(w, xs, ys):
            loss = tf.constant(0.0)
            for i in tf.range(tf.shape(xs)[0]):
                loss = train_step(w, xs[i], ys[i])
            return loss

        _compiled["steps"] = steps
    return _compiled["steps"](w, xs, ys)


def report_steps(steps: int, every: int) -> list[int]:
    """The steps whose loss a loop reporting every ``every`` steps reports: ends of N-step blocks."""
    return [min(start + every, steps) - 1 for start in range(0, steps, every)]


def reports_due(calls: list, w0, xs, ys, report, every: int) -> list:
    """Of the calls a loop reporting on every step made of ``report`` (each ``[step, loss]``), those a loop reporting
    every ``every`` steps makes: a speed check's ``calls_back`` (:func:`tfperf.grading.assert_speedup`)."""
    due = set(report_steps(int(xs.shape[0]), int(every)))
    return [call for call in calls if int(call[0]) in due]


def loop_for(strategy: str, w0, xs, ys, every: int, report: Report | None = None) -> Callable[[], object]:
    """A no-argument function training from ``w0`` with ``strategy``; it returns the final weights."""
    tf = logs.tensorflow()
    report = report or (lambda step, loss: None)
    steps = int(xs.shape[0])

    def read_every_step():
        w = tf.Variable(w0)
        for step in range(steps):
            loss = train_step(w, xs[step], ys[step])
            report(step, loss.numpy())
        return w.read_value()

    def read_every_n():
        w = tf.Variable(w0)
        for step in range(steps):
            loss = train_step(w, xs[step], ys[step])
            if step in reported:
                report(step, loss.numpy())
        return w.read_value()

    def sum_on_device():
        w = tf.Variable(w0)
        total, count = tf.constant(0.0), 0
        for step in range(steps):
            total += train_step(w, xs[step], ys[step])
            count += 1
            if step in reported:
                report(step, total.numpy() / count)
                total, count = tf.constant(0.0), 0
        return w.read_value()

    def in_graph():
        w = tf.Variable(w0)
        for start in range(0, steps, every):
            loss = train_steps(w, xs[start : start + every], ys[start : start + every])
            report(min(start + every, steps) - 1, loss.numpy())
        return w.read_value()

    reported = set(report_steps(steps, every))
    loops = dict(zip(STRATEGIES, (read_every_step, read_every_n, sum_on_device, in_graph)))
    if strategy not in loops:
        raise ValueError(f"Unknown strategy {strategy!r}; choose from {', '.join(STRATEGIES)}.")
    return loops[strategy]


@contextlib.contextmanager
def asynchronous_eager(enabled: bool = True) -> Iterator[None]:
    """Run eager operations asynchronously (as on a GPU) while the block runs, then restore."""
    tf = logs.tensorflow()
    from tensorflow.python.eager import context

    was_async = context.context().execution_mode == context.ASYNC
    tf.config.experimental.set_synchronous_execution(not enabled)
    try:
        yield
    finally:
        tf.config.experimental.set_synchronous_execution(not was_async)


def dispatch_vs_work(size: int = 1000, ops: int = 20, *, asynchronous: bool = True, repeats: int = 5) -> dict:
    """Queue ``ops`` independent ``size x size`` matmuls, and time it twice: until the calls
    return, and until the device has finished them (``device.sync()``).

    Returns ``{"dispatch_ms", "work_ms"}``, medians of ``repeats`` measurements each. In TensorFlow's default mode a CPU runs each
    operation before the call returns, so both are about equal; a GPU's stream, or
    asynchronous eager execution on any device, returns before the work is done. The
    operations do not depend on each other's results on purpose: in asynchronous mode, an
    operation whose Python code reads an input's shape waits for that input (``tf.matmul``
    does), so a chain of matmuls would not show the queue.
    """
    tf = logs.tensorflow()
    with tf.device(device.compute_device()):
        x = tf.random.normal([size, size]) / size**0.5

    def queue_work():
        return [tf.matmul(x, x) for _ in range(ops)]

    dispatch, work = [], []
    with asynchronous_eager(asynchronous):
        queue_work()
        device.sync()  # warm up, and start from an empty queue
        for _ in range(repeats):
            dispatch.append(timing.stopwatch(queue_work, sync=lambda: None)[1])
            device.sync()
            work.append(timing.stopwatch(queue_work)[1])  # device.sync() before reading the clock
    return {"dispatch_ms": statistics.median(dispatch) * 1e3, "work_ms": statistics.median(work) * 1e3}


def attribute_waits(
    size: int = 1000, *, asynchronous: bool = True, attributes: Sequence[str] = ("dtype", "device", "shape")
) -> dict[str, float]:
    """For each attribute: milliseconds to read it right after queuing one ``size x size`` matmul.

    In the default mode the tensor's metadata exists when the call returns, so every read is
    immediate. In asynchronous eager mode ``.dtype`` and ``.device`` are known at once, but
    ``.shape`` waits until the operation has run.
    """
    tf = logs.tensorflow()
    with tf.device(device.compute_device()):
        x = tf.random.normal([size, size]) / size**0.5
    waits = {}
    with asynchronous_eager(asynchronous):
        tf.matmul(x, x)
        device.sync()
        for name in attributes:
            y = tf.matmul(x, x)
            _, seconds = timing.stopwatch(lambda: getattr(y, name), sync=lambda: None)
            waits[name] = seconds * 1e3
            device.sync()
    return waits


def sync_costs(
    strategies: Sequence[str] = STRATEGIES,
    *,
    steps: int = 200,
    every: int = 20,
    asynchronous: bool = False,
    repeats: int = 3,
    min_time: float = 0.05,
    busy_seconds: float = 1.0,
    progress: Progress | None = None,
) -> list[dict]:
    """Time each strategy, count its host reads, and sample device utilization while it runs.

    Returns one record per strategy: ``strategy``, ``ms_per_step`` (median),
    ``host_syncs`` (per run of ``steps`` steps), ``busy`` (mean utilization, percent),
    ``timeline`` (the :mod:`tfperf.measure.monitor` records, over about ``busy_seconds``).
    """
    w0, xs, ys = make_problem(steps)
    records = []
    with asynchronous_eager(asynchronous):
        for strategy in strategies:
            loop = loop_for(strategy, w0, xs, ys, every)
            t = timing.measure(loop, repeats=repeats, min_time=min_time)
            with host_syncs.counting() as syncs:
                loop()
            runs = max(1, int(busy_seconds / t.median))
            _, timeline = monitor.busy_while(
                lambda: [loop() for _ in range(runs)], interval=min(0.05, busy_seconds / 10)
            )
            records.append(
                {
                    "strategy": strategy,
                    "ms_per_step": t.median / steps * 1e3,
                    "host_syncs": syncs.count,
                    "busy": monitor.mean_busy(timeline),
                    "timeline": timeline,
                    "source": timeline[0]["source"],
                    "steps": steps,
                    "every": every,
                    "asynchronous": asynchronous,
                }
            )
            if progress:
                progress(len(records), len(strategies))
    return records


def plot_sync_costs(fig, runs) -> None:
    """Draw runs of :func:`sync_costs`: time per step by strategy (one bar per run), and the last run's busy timelines."""
    from tfperf.lesson import plots

    ax_time, ax_busy = fig.subplots(1, 2, width_ratios=[1.25, 1])
    strategies = [s for s in STRATEGIES if any(r["strategy"] == s for run in runs for r in run.records)]
    series = []
    for run in runs:
        by_strategy = {r["strategy"]: r for r in run.records}
        values = [by_strategy[s]["ms_per_step"] if s in by_strategy else None for s in strategies]
        notes = [
            f"{by_strategy[s]['ms_per_step']:.3g} ms, {by_strategy[s]['host_syncs']} reads" if s in by_strategy else ""
            for s in strategies
        ]
        series.append((run.label, values, notes))
    plots.plot_grouped_barh(ax_time, strategies, series, xlabel="time per step (ms)")
    ax_time.set_title("Cost per training step (shorter is better)")
    if len(runs) * len(strategies) > 12:  # keep every bar at least about 0.15 inch high
        fig.set_figheight(max(fig.get_figheight(), 1.5 + 0.17 * len(runs) * len(strategies)))
    if runs:
        plot_timelines(ax_busy, runs[-1].records)
        ax_busy.set_title(f"Device busy while the loop runs ({runs[-1].label})")


def plot_timelines(ax, records: Sequence[dict]) -> None:
    """Device utilization over time, one line per record (each with ``timeline`` and ``strategy``)."""
    from tfperf.lesson import plots

    plots.plot_busy_timeline(ax, records, label="strategy", title="Device busy while the loop runs")


SLOWDOWN_KINDS = ("tensor argument", "Python float argument (retraces)", "losses kept in a list")


def epoch_times(kind: str, *, epochs: int = 5, steps: int = 20, progress: Progress | None = None) -> list[dict]:
    """Train ``epochs`` epochs of ``steps`` steps, each epoch timed on its own.

    ``kind`` picks a slowdown source: ``tensor argument`` (none), ``Python float argument
    (retraces)`` (the learning rate passed as a new Python float every step, so every
    step traces a new graph), ``losses kept in a list`` (every loss tensor kept alive).
    Returns one record per epoch: ``epoch``, ``seconds``, ``traces`` (so far), ``rss_mb``
    (the process's resident memory after the epoch).
    """
    import psutil

    tf = logs.tensorflow()
    if kind not in SLOWDOWN_KINDS:
        raise ValueError(f"Unknown kind {kind!r}; choose from {', '.join(SLOWDOWN_KINDS)}.")
    w0, xs, ys = make_problem(steps)

    @tf.function
    def step(w, x, y, lr):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - y))
        w.assign_sub(lr * tape.gradient(loss, w))
        return loss

    w, kept, records, counter = tf.Variable(w0), [], [], 0
    process = psutil.Process()
    for epoch in range(epochs):

        def one_epoch():
            nonlocal counter
            for i in range(steps):
                counter += 1
                if kind == "Python float argument (retraces)":
                    loss = step(w, xs[i], ys[i], LEARNING_RATE / (1.0 + 1e-6 * counter))
                else:
                    loss = step(w, xs[i], ys[i], tf.constant(LEARNING_RATE))
                if kind == "losses kept in a list":
                    kept.append(loss)

        with logs.captured_stderr():  # the retracing warning
            _, seconds = timing.stopwatch(one_epoch)
        records.append(
            {
                "kind": kind,
                "epoch": epoch + 1,
                "seconds": seconds,
                "traces": step.experimental_get_tracing_count(),
                "rss_mb": process.memory_info().rss / 1e6,
            }
        )
        if progress:
            progress(epoch + 1, epochs)
    return records


def plot_epoch_times(fig, runs) -> None:
    """Draw runs of :func:`epoch_times`: seconds per epoch, and resident memory, against the epoch."""
    from tfperf.lesson import plots

    ax_time, ax_mem = fig.subplots(1, 2)
    for run, prefix, style in plots.each_run(runs):
        plots.plot_lines(
            ax_time,
            run.records,
            x="epoch",
            y="seconds",
            group="kind",
            label_prefix=prefix,
            logy=True,
            linestyle=style,
            xlabel="epoch",
            ylabel="seconds per epoch",
        )
        plots.plot_lines(
            ax_mem,
            run.records,
            x="epoch",
            y="rss_mb",
            group="kind",
            label_prefix=prefix,
            linestyle=style,
            xlabel="epoch",
            ylabel="process memory (MB, resident)",
        )
    from matplotlib.ticker import MaxNLocator

    for ax in (ax_time, ax_mem):
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # epochs are whole numbers
    ax_time.set_title("Time per epoch: a trend is a slowdown")
    ax_mem.set_title("Memory after each epoch")
    ax_time.legend(fontsize=8)


MODEL_LOOP_KINDS = (
    "built and called",
    "built and called, clear_session",
    "built and trained",
    "built and trained, clear_session",
    "one model trained again, weights reset",
)


def models_in_a_loop(kind: str, *, models: int = 20, progress: Progress | None = None) -> list[dict]:
    """Make ``models`` small Keras models one after another, as a hyper-parameter search does, and record after each
    the MB this process holds more than after the first (``held_mb``, :func:`tfperf.runtime.processes.held_bytes`
    after a garbage collection; large freed blocks given back to the system meanwhile; None where it cannot be read;
    memory this process freed earlier absorbs growth until it is used up) and how many gradient
    functions TensorFlow has registered for the whole process (``registered_gradients``, the ``CustomGradient-``
    entries of its gradient registry). ``kind``, one of :data:`MODEL_LOOP_KINDS`: each model called on a batch, or
    trained for one step (``train_on_batch``, Adam), with or without ``keras.backend.clear_session()`` before it; or
    one model built once, its weights and its optimizer's state (step count, moments; not its learning rate) reset
    before each training."""
    import gc
    import os

    import keras

    from tfperf.runtime import processes

    if kind not in MODEL_LOOP_KINDS:
        raise ValueError(f"Unknown kind {kind!r}; choose from {', '.join(MODEL_LOOP_KINDS)}.")
    tf = logs.tensorflow()
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((64, 32)).astype(np.float32), rng.standard_normal((64, 1)).astype(np.float32)

    def build():
        inputs = keras.Input((32,))
        hidden = keras.layers.Dense(256, activation="relu")(inputs)
        model = keras.Model(inputs, keras.layers.Dense(1)(hidden))
        model.compile(optimizer="adam", loss="mse")
        return model

    def registered() -> int:
        from tensorflow.python.framework import ops

        return sum(name.startswith("CustomGradient-") for name in ops.gradient_registry.list())

    reused = build() if kind.startswith("one model") else None
    initial = reused.get_weights() if reused else None
    records, start = [], None
    with processes.large_frees_returned(), logs.captured_stderr():
        for index in range(models):
            if "clear_session" in kind:
                keras.backend.clear_session()
            if reused is not None:
                reused.set_weights(initial)
                for variable in reused.optimizer.variables:  # its step count and Adam's moments, not its rate
                    if variable is not reused.optimizer._learning_rate:
                        variable.assign(tf.zeros_like(variable))
                reused.train_on_batch(x, y)
            else:
                model = build()
                if "trained" in kind:
                    model.train_on_batch(x, y)
                else:
                    model(x)
                del model
            gc.collect()
            held = processes.held_bytes(os.getpid())
            start = held if start is None else start
            records.append(
                {
                    "kind": kind,
                    "model": index + 1,
                    "held_mb": None if held is None or start is None else (held - start) / 1e6,
                    "registered_gradients": registered(),
                }
            )
            if progress:
                progress(index + 1, models)
    return records


def plot_models_in_a_loop(fig, runs) -> None:
    """Draw runs of :func:`models_in_a_loop`: the MB held more than after the first model, against the models made."""
    from matplotlib.ticker import MaxNLocator

    from tfperf.lesson import plots

    ax = fig.subplots()
    for run, prefix, style in plots.each_run(runs):
        plots.plot_lines(
            ax,
            run.records,
            x="model",
            y="held_mb",
            group="kind",
            label_prefix=prefix,
            linestyle=style,
            xlabel="models made",
            ylabel="MB held more than after the first",
        )
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_title("Memory as models are made in one process")
    ax.legend(fontsize=8)


FEED_STRATEGIES = ("convert every batch", "convert once, slice on the device", "tf.data with prefetch")


def make_numpy_data(batches: int, *, batch: int = 64, features: int = 32, seed: int = 0):
    """NumPy inputs ``x``, ``y`` of ``batches * batch`` rows for the model of :func:`train_step`, and ``w0``."""
    rng = np.random.default_rng(seed)
    w_true = rng.standard_normal((features, 1)).astype(np.float32)
    x = rng.standard_normal((batches * batch, features)).astype(np.float32)
    y = x @ w_true + 0.1 * rng.standard_normal((batches * batch, 1)).astype(np.float32)
    return logs.tensorflow().zeros([features, 1]), x, y


def feed_loop_for(strategy: str, w0, x, y, batch: int) -> Callable[[], object]:
    """A no-argument function: one epoch over NumPy ``x``, ``y`` fed with ``strategy``; returns the weights."""
    tf = logs.tensorflow()
    where = device.compute_device()

    def convert_every_batch():
        w = tf.Variable(w0)
        for start in range(0, len(x), batch):
            train_step(
                w, tf.convert_to_tensor(x[start : start + batch]), tf.convert_to_tensor(y[start : start + batch])
            )
        return w.read_value()

    def convert_once():
        with tf.device(where):
            xs, ys = tf.identity(tf.constant(x)), tf.identity(tf.constant(y))
        w = tf.Variable(w0)
        for start in range(0, len(x), batch):
            train_step(w, xs[start : start + batch], ys[start : start + batch])
        return w.read_value()

    def pipeline():
        w = tf.Variable(w0)
        for xb, yb in feed_pipeline(x, y, batch):
            train_step(w, xb, yb)
        return w.read_value()

    loops = dict(zip(FEED_STRATEGIES, (convert_every_batch, convert_once, pipeline)))
    if strategy not in loops:
        raise ValueError(f"Unknown strategy {strategy!r}; choose from {', '.join(FEED_STRATEGIES)}.")
    return loops[strategy]


def feed_pipeline(x, y, batch: int):
    """The ``tf.data with prefetch`` strategy's pipeline: batches of NumPy ``x``, ``y``, each copied ahead
    to the compute device by ``tf.data.experimental.prefetch_to_device`` (on every device, CPU included)."""
    tf = logs.tensorflow()
    data = tf.data.Dataset.from_tensor_slices((x, y)).batch(batch)
    return data.apply(tf.data.experimental.prefetch_to_device(device.compute_device()))


def feed_costs(
    batches: int = 100, *, batch: int = 64, features: int = 32, repeats: int = 3, min_time: float = 0.05
) -> list[dict]:
    """Time one epoch of each feeding strategy; one record per strategy with ``ms_per_step``, ``uploads``
    (host data turned into tensors, tf.data deliveries included) and ``uploads_how`` (by what)."""
    w0, x, y = make_numpy_data(batches, batch=batch, features=features)
    records = []
    for strategy in FEED_STRATEGIES:
        loop = feed_loop_for(strategy, w0, x, y, batch)
        t = timing.measure(loop, repeats=repeats, min_time=min_time)
        with host_syncs.counting() as syncs:
            loop()
        records.append(
            {
                "strategy": strategy,
                "ms_per_step": t.median / batches * 1e3,
                "uploads": syncs.uploads,
                "uploads_how": syncs.describe_uploads(),
                "batch_kb": batch * features * 4 / 1e3,
            }
        )
    return records


_MEMORY_PROBE = r"""
import json, os, sys
import tensorflow as tf

gpus = tf.config.list_physical_devices("GPU")
if not gpus:
    print(json.dumps(None))
    sys.exit()
if sys.argv[1] == "growth":
    tf.config.experimental.set_memory_growth(gpus[0], True)
with tf.device("/GPU:0"):
    x = tf.ones([1024, 1024])          # 4 MB of tensors on the GPU
    float(tf.reduce_sum(x))
result = {"in_use_mb": tf.config.experimental.get_memory_info("GPU:0")["current"] / 1e6, "reserved_mb": None}
try:
    import pynvml

    pynvml.nvmlInit()
    handle = pynvml.nvmlDeviceGetHandleByIndex(0)
    result["gpu_total_mb"] = pynvml.nvmlDeviceGetMemoryInfo(handle).total / 1e6
    for process in pynvml.nvmlDeviceGetComputeRunningProcesses(handle):
        if process.pid == os.getpid() and process.usedGpuMemory:
            result["reserved_mb"] = process.usedGpuMemory / 1e6
except Exception as err:  # no NVML, or it cannot see this process (e.g. in a container)
    result["nvml"] = f"{type(err).__name__}: {err}"
print(json.dumps(result))
"""


def memory_reserved(growth: bool, *, timeout: float = 120) -> dict | None:
    """Start a fresh Python process that puts 4 MB of tensors on GPU 0, with or without memory growth.

    Returns ``in_use_mb`` (``tf.config.experimental.get_memory_info``: memory TensorFlow's
    tensors use) and ``reserved_mb`` (what NVML reports for that process, as ``nvidia-smi``
    does; None if NVML cannot tell), or None when the process sees no GPU. A fresh process
    is needed because memory growth must be chosen before TensorFlow first uses the GPU.
    """
    import json
    import os
    import subprocess
    import sys

    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    out = subprocess.run(
        [sys.executable, "-c", _MEMORY_PROBE, "growth" if growth else "default"],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])
