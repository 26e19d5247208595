"""Chapter 2 experiments: eager execution vs ``tf.function`` graphs, tracing and XLA.

The model is a small multilayer perceptron kept as a plain list of ``tf.Variable``s
(weights and biases), trained by SGD with a ``tf.GradientTape``. Small widths make a
step *overhead-bound* (Python and per-op dispatch dominate), large widths make it
*compute-bound* (the matrix multiplications dominate).

A train step runs in one of three modes:

- ``eager``: plain Python, every op dispatched one by one;
- ``graph``: the same step as a ``tf.function``;
- ``graph + XLA``: a ``tf.function(jit_compile=True)``, compiled by XLA.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from tfperf.measure import flops, timing
from tfperf.measure.timing import Progress
from tfperf.runtime import device, logs

MODES = ("eager", "graph", "graph + XLA")
RETRACING_KINDS = ("Python int", "tensor", "Python int, reduce_retracing=True")
FEATURES = 32
CLASSES = 10


tf = logs.tensorflow()


def _layers(width: int, depth: int, features: int, classes: int) -> list[tuple[int, int]]:
    """Each layer's inputs and outputs: ``depth`` hidden layers of ``width`` units, then ``classes`` outputs."""
    sizes = [features, *([width] * depth), classes]
    return list(zip(sizes[:-1], sizes[1:]))


def make_mlp(width: int, *, depth: int = 2, features: int = FEATURES, classes: int = CLASSES, seed: int = 0) -> list:
    """Variables of an MLP: ``depth`` hidden layers of ``width`` units, then ``classes`` outputs."""
    rng = np.random.default_rng(seed)
    params = []
    with tf.device(device.compute_device()):
        for fan_in, fan_out in _layers(width, depth, features, classes):
            w = rng.standard_normal((fan_in, fan_out), dtype=np.float32) * np.float32(np.sqrt(2.0 / fan_in))
            params += [tf.Variable(w), tf.Variable(tf.zeros([fan_out]))]
    return params


def mlp_weight_bytes(width: int, *, depth: int = 2, features: int = FEATURES, classes: int = CLASSES) -> int:
    """Bytes of the float32 variables :func:`make_mlp` makes (weights and biases), without making them."""
    return sum(4 * (fan_in + 1) * fan_out for fan_in, fan_out in _layers(width, depth, features, classes))


def make_batch(batch: int, *, features: int = FEATURES, classes: int = CLASSES, seed: int = 0):
    """A batch of random inputs ``x`` (float32) and integer labels ``y`` (int32)."""
    rng = np.random.default_rng(seed)
    with tf.device(device.compute_device()):
        x = tf.constant(rng.standard_normal((batch, features), dtype=np.float32))
        y = tf.constant(rng.integers(0, classes, batch, dtype=np.int32))
    return x, y


def mlp_loss(params: Sequence[Any], x, y):
    """Mean softmax cross-entropy of the MLP ``params`` on ``(x, y)``."""
    h = x
    for i in range(0, len(params) - 2, 2):
        h = tf.nn.relu(tf.matmul(h, params[i]) + params[i + 1])
    logits = tf.matmul(h, params[-2]) + params[-1]
    return tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))


def sgd_step(params: Sequence[Any], x, y, lr):
    """One SGD step on ``params`` (updated in place); returns the loss before the step."""
    with tf.GradientTape() as tape:
        loss = mlp_loss(params, x, y)
    grads = tape.gradient(loss, params)
    for p, g in zip(params, grads):
        p.assign_sub(lr * g)
    return loss


def train_step_for(mode: str) -> Callable[..., Any]:
    """``sgd_step`` as it runs in ``mode`` (one of :data:`MODES`): a new function each call."""
    if mode == "eager":
        return sgd_step
    if mode == "graph":
        return tf.function(sgd_step)
    if mode == "graph + XLA":
        return tf.function(sgd_step, jit_compile=True)
    raise ValueError(f"Unknown mode {mode!r}; choose from {', '.join(MODES)}.")


def step_for(mode: str, width: int, batch: int, *, depth: int = 2) -> Callable[[], Any]:
    """A no-argument function running one train step of a ``width``-wide MLP on ``batch`` examples."""
    params = make_mlp(width, depth=depth)
    x, y = make_batch(batch)
    lr = tf.constant(0.01)
    step = train_step_for(mode)
    return lambda: step(params, x, y, lr)


def step_throughput(
    widths: Sequence[int],
    batch_sizes: Sequence[int] = (32,),
    modes: Sequence[str] = MODES,
    *,
    depth: int = 2,
    repeats: int = 3,
    min_time: float = 0.05,
    progress: Progress | None = None,
) -> list[dict]:
    """Time one train step in each mode, for each width and batch size.

    Returns one record per (width, batch, mode): ``width``, ``batch``, ``mode``,
    ``ms_per_step`` (median, steady state: tracing and compilation are warmed up first),
    ``examples_per_s``, ``flops_per_s`` (the step's matmuls, :func:`tfperf.measure.flops.dense_train_step`)
    and ``speedup_vs_eager`` (when eager was measured too).
    """
    records: list[dict] = []
    total = len(widths) * len(batch_sizes) * len(modes)
    for width in widths:
        for batch in batch_sizes:
            group = []
            for mode in modes:
                t = timing.measure(
                    step_for(mode, width, batch, depth=depth), repeats=repeats, warmup=2, min_time=min_time
                )
                group.append(
                    {
                        "width": width,
                        "batch": batch,
                        "mode": mode,
                        "ms_per_step": t.median * 1e3,
                        "examples_per_s": batch / t.median,
                        "flops_per_s": flops.dense_train_step(batch, [FEATURES, *[width] * depth, CLASSES]) / t.median,
                        "device": device.compute_device(),
                    }
                )
                records.append(group[-1])
                if progress:
                    progress(len(records), total)
            eager = next((r["ms_per_step"] for r in group if r["mode"] == "eager"), None)
            for r in group:
                r["speedup_vs_eager"] = eager / r["ms_per_step"] if eager else float("nan")
    return records


def plot_step_throughput(fig, runs) -> None:
    """Draw runs of :func:`step_throughput`: throughput and speedup over eager against width."""
    from tfperf.lesson import plots

    ax_tp, ax_speed = fig.subplots(1, 2)
    for run, prefix, style in plots.each_run(runs):
        records = [dict(r, line=f"{r['mode']}, batch {r['batch']}") for r in run.records]
        plots.plot_lines(
            ax_tp,
            records,
            x="width",
            y="examples_per_s",
            group="line",
            label_prefix=prefix,
            logx=True,
            logy=True,
            linestyle=style,
            xlabel="hidden width (units)",
            ylabel="examples per second",
        )
        # Eager is included (at 1x): its line marks where graphs stop winning.
        compared = [r for r in records if r["speedup_vs_eager"] == r["speedup_vs_eager"]]
        if compared:
            plots.plot_lines(
                ax_speed,
                compared,
                x="width",
                y="speedup_vs_eager",
                group="line",
                label_prefix=prefix,
                logx=True,
                logy=True,
                linestyle=style,
                xlabel="hidden width (units)",
                ylabel="speedup over eager (x)",
            )
    widths = sorted({r["width"] for run in runs for r in run.records})
    for ax in (ax_tp, ax_speed):
        ax.set_xticks(widths, [str(w) for w in widths])
        ax.minorticks_off()
    ax_tp.set_title("Train-step throughput (higher is better)")
    ax_speed.set_title("Graph speedup over eager (above 1: graph wins)")
    plots.legend(ax_tp, runs, fontsize=7)


def first_call_and_steady(fn: Callable[..., Any], *args: Any, repeats: int = 3, min_time: float = 0.05) -> dict:
    """Time the first call of ``fn(*args)`` (tracing included) and then its steady state.

    Returns ``first_ms``, ``steady_ms`` and, for a ``tf.function``, ``traces``.
    """
    _, first = timing.stopwatch(lambda: fn(*args))
    steady = timing.measure(lambda: fn(*args), repeats=repeats, warmup=0, min_time=min_time)
    record = {"first_ms": first * 1e3, "steady_ms": steady.median * 1e3}
    if hasattr(fn, "experimental_get_tracing_count"):
        record["traces"] = fn.experimental_get_tracing_count()
    return record


def _scaled_sum(x, k):
    return tf.reduce_sum(x * tf.cast(k, x.dtype))


def retracing_cost(
    values: int, kinds: Sequence[str] = RETRACING_KINDS, *, progress: Progress | None = None
) -> list[dict]:
    """Call a fresh small ``tf.function`` with ``values`` distinct arguments, passed in each way of ``kinds``.

    Returns one record per kind: ``kind``, ``calls``, ``traces``, ``ms_total`` and ``ms_per_call``.
    """
    x = tf.ones([16])
    records = []
    for kind in kinds:
        if kind not in RETRACING_KINDS:
            raise ValueError(f"Unknown kind {kind!r}; choose from {', '.join(RETRACING_KINDS)}.")
        fn = tf.function(_scaled_sum, reduce_retracing=kind.endswith("reduce_retracing=True"))
        args = [tf.constant(i) if kind == "tensor" else i for i in range(values)]
        with logs.captured_stderr():  # TensorFlow warns about the retracing we provoke on purpose
            _, seconds = timing.stopwatch(lambda: [fn(x, a) for a in args])
        records.append(
            {
                "kind": kind,
                "calls": values,
                "traces": fn.experimental_get_tracing_count(),
                "ms_total": seconds * 1e3,
                "ms_per_call": seconds * 1e3 / values,
            }
        )
        if progress:
            progress(len(records), len(kinds))
    return records


def function_in_loop(placement: str, steps: int) -> Callable[[], Any]:
    """A no-argument function running ``steps`` small graph calls, with the ``tf.function``
    created ``"once"`` before the loop or ``"every step"`` inside it."""
    x = tf.ones([16])
    k = tf.constant(3)
    if placement == "once":
        fn = tf.function(_scaled_sum)

        def loop_once():
            for _ in range(steps):
                fn(x, k)

        return loop_once
    if placement == "every step":

        def loop_each():
            for _ in range(steps):
                tf.function(_scaled_sum)(x, k)

        return loop_each
    raise ValueError(f"Unknown placement {placement!r}; choose 'once' or 'every step'.")


def graph_op_count(fn, *args: Any) -> int:
    """Number of operations in the graph that the ``tf.function`` ``fn`` traces for ``args``."""
    return len(fn.get_concrete_function(*args).graph.get_operations())
