"""Chapter 6: where a step sits below this device's ceilings, and what fusion and lower precision move.

A step's time per call has three floors, each from this device's card (:mod:`tfperf.measure.ceilings`):

- **overhead**: launching it at all (the card's ``function_call``: one call of a small ``tf.function``);
- **memory**: the bytes it moves (:mod:`tfperf.measure.bytes_moved`) over the card's memory bandwidth at the size of
  its tensors (:func:`tfperf.measure.ceilings.memory_roof`: a small tensor stays in a cache);
- **compute**: its floating-point operations over the card's best float32 matmul rate, the one float32 matmuls run
  at here (with TensorFloat-32 where it is on: :func:`tfperf.measure.ceilings.float32_roof`).

The largest floor names the step's regime (overhead-, memory- or compute-bound): what a fix must reduce.
The roofline plot (FLOP/s against FLOPs per byte) draws the card's compute roof and one memory roof per tensor
size it measured (a cache-aware roofline), and places each measured step under them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from tfperf.measure import bytes_moved, ceilings, timing
from tfperf.runtime import device, logs

Progress = Callable[[int, int], None]
REGIMES = ("overhead", "memory", "compute")
#: Elementwise operations per element of :func:`gelu_chain` (``tanh`` counted as one).
CHAIN_OPS_PER_ELEMENT = 11


def gelu_chain(x, scale, shift):
    """A memory-bound step: scale and shift, then the tanh approximation of GELU, one elementwise op at a time."""
    import tensorflow as tf  # imported already (logs.tensorflow() would touch os.environ while traced)

    y = x * scale + shift
    return 0.5 * y * (1.0 + tf.tanh(0.7978845608 * (y + 0.044715 * y * y * y)))


def step_sizes() -> dict[str, int]:
    """The size of each example step on this device: large enough that the regime it shows holds here.

    A matmul of 512 takes about a millisecond on a 2-core CPU (compute-bound), but a few microseconds on a
    data-center GPU, less than launching it: there it takes 4096. From the H100 card of
    docs/measurements-gpu-nvidia-h100.md: a ``tf.function`` call 193 µs; float32 matmuls (TensorFloat-32)
    384 TFLOP/s at 4096, so a matmul of 4096 has a compute floor of 0.36 ms and one of 512 under 10 µs; a
    chain of 2**24 values moves about 1.7 GB op by op, well above the call at any GPU's bandwidth."""
    on_gpu = device.device_class() == "gpu"
    return {"tiny add": 16, "elementwise chain": 2**24 if on_gpu else 2**20, "matmul": 4096 if on_gpu else 512}


def make_step(kind: str, n: int, *, xla: bool = False) -> tuple[Callable[..., Any], tuple, float]:
    """One example step: ``(tf.function, its arguments, FLOPs per call)``; ``xla`` compiles it with XLA."""
    tf = logs.tensorflow()
    fresh = lambda *shape: tf.random.uniform(shape, 0.5, 1.5)  # noqa: E731 (never zero)
    if kind == "tiny add":
        return tf.function(lambda x: x + 1.0, jit_compile=xla), (fresh(n),), float(n)
    if kind == "elementwise chain":
        return (
            tf.function(gelu_chain, jit_compile=xla),
            (fresh(n), tf.constant(1.1), tf.constant(0.1)),
            float(CHAIN_OPS_PER_ELEMENT * n),
        )
    if kind == "matmul":
        return tf.function(lambda a, b: tf.linalg.matmul(a, b), jit_compile=xla), (fresh(n, n), fresh(n, n)), 2.0 * n**3
    raise ValueError(f"unknown step {kind!r}: one of 'tiny add', 'elementwise chain', 'matmul'")


def tensor_bytes(kind: str, n: int) -> int:
    """The bytes of one of the example step's tensors (its working set per op): ``n`` values, or ``n``×``n`` for a
    matmul, of float32."""
    return 4 * (n * n if kind == "matmul" else n)


def floors(card: ceilings.Card, flops: float, nbytes: float, tensor_size: float | None = None) -> dict[str, float]:
    """Seconds per call that each of the card's ceilings allows at best: ``overhead``, ``memory`` (at tensors of
    ``tensor_size`` bytes, :func:`tfperf.measure.ceilings.memory_roof`), ``compute`` (float32 matmuls as they run
    here, :func:`tfperf.measure.ceilings.float32_roof`)."""

    def value(name: str) -> float:
        found = card.get(name)
        if found is None or found.value <= 0:
            raise ValueError(f"the device card has no {name}: measure it with `python -m tfperf ceilings --force`")
        return found.value

    return {
        "overhead": value("function_call"),
        "memory": nbytes / ceilings.memory_roof(card, tensor_size)[0],
        "compute": flops / value(ceilings.float32_roof(card)),
    }


def regime(card: ceilings.Card, flops: float, nbytes: float, tensor_size: float | None = None) -> str:
    """``"overhead"``, ``"memory"`` or ``"compute"``: the largest of the step's :func:`floors`."""
    bounds = floors(card, flops, nbytes, tensor_size)
    return max(REGIMES, key=bounds.get)


def measure_steps(
    card: ceilings.Card,
    kinds: Sequence[str] = ("tiny add", "elementwise chain", "matmul"),
    *,
    xla: bool = False,
    scale: float = 1.0,
    repeats: int = 5,
    progress: Progress | None = None,
) -> list[dict]:
    """Time each example step (``scale`` multiplies its size) and place it: one record per step with its
    ``seconds`` per call (median; the result's values read, so the device's work is inside), ``flops``,
    ``bytes`` (:func:`tfperf.measure.bytes_moved.bytes_moved`), attained ``flops_per_s`` and ``bytes_per_s``,
    ``intensity`` (FLOPs per byte), the ``floors`` and the ``regime`` they name."""
    sizes = step_sizes()
    records = []
    for done, kind in enumerate(kinds, 1):
        n = max(1, int(sizes[kind] * (scale if kind != "matmul" else scale ** (1 / 3))))
        fn, args, flops = make_step(kind, n, xla=xla)
        nbytes, how = bytes_moved.bytes_moved(fn, args)
        seconds = timing.measure(lambda fn=fn, args=args: fn(*args), repeats=repeats, warmup=2, min_time=0.05).median
        bounds = floors(card, flops, nbytes, tensor_bytes(kind, n))
        records.append(
            {
                "step": kind,
                "n": n,
                "xla": xla,
                "seconds": seconds,
                "flops": flops,
                "bytes": nbytes,
                "tensor_bytes": tensor_bytes(kind, n),
                "bytes_read_as": how,
                "flops_per_s": flops / seconds,
                "bytes_per_s": nbytes / seconds,
                "intensity": flops / nbytes,
                "floors": bounds,
                "regime": max(REGIMES, key=bounds.get),
                "device": device.compute_device(),
            }
        )
        if progress:
            progress(done, len(kinds))
    return records


def describe(record: dict, card: ceilings.Card) -> str:
    """One line for a measured step: its time, its regime and its share of the ceiling that bounds it."""
    line = f"{record['step']:18s} n={record['n']:<9d} {record['seconds'] * 1e3:9.3f} ms  {record['regime']}-bound"
    if record["regime"] == "memory":
        line += (
            f"; {ceilings.share(record['bytes_per_s'], 'memory_bandwidth', card, tensor_bytes=record['tensor_bytes'])}"
        )
    elif record["regime"] == "compute":
        line += f"; {ceilings.share(record['flops_per_s'], 'matmul_float32', card)}"
    else:
        call = card.get("function_call")
        times = record["seconds"] / call.value if call else None
        if times is not None and times * ceilings.NOISE < 1:
            line += f"; {times:.2f} times the card's tf.function call: below it, so the card does not bound it here"
        elif times is not None:
            line += f"; {times:.1f} times the card's tf.function call"
    return line


def plot_roofline(fig, runs, card: ceilings.Card) -> None:
    """The card's roofs and each measured step under them, labelled with its regime: the compute roof (the rate
    float32 matmuls run at here), and a memory roof (bandwidth × intensity) for each of up to three tensor sizes of
    the card's memory sweep, thicker for larger tensors; a step is bounded by the roof of its own tensors' size. The
    dotted line: where the largest tensors' roof meets the compute roof."""
    import numpy as np

    from tfperf.lesson import plots

    ax = fig.subplots()
    roof = ceilings.float32_roof(card)
    peak = card.get(roof).value
    points = [r for run in runs for r in run.records]
    low = min([0.01, *(r["intensity"] / 3 for r in points)])
    high = max([1000.0, *(r["intensity"] * 3 for r in points)])
    x = np.logspace(np.log10(low), np.log10(high), 200)
    memory = card.sweeps.get("memory") or [
        {"tensor_bytes": None, "bytes_per_second": card.get("memory_bandwidth").value}
    ]
    shown = memory if len(memory) <= 3 else [memory[0], memory[len(memory) // 2], memory[-1]]
    for row, width in zip(shown, (0.8, 1.1, 1.5)[-len(shown) :]):
        bandwidth = row["bytes_per_second"]
        size = f"tensors of {ceilings.readable_size(row['tensor_bytes'])}" if row["tensor_bytes"] else "memory"
        ax.loglog(
            x,
            np.minimum(peak, bandwidth * x),
            color="black",
            linewidth=width,
            alpha=0.4 + 0.2 * width,
            label=f"memory roof, {size}: {bandwidth / 1e9:.3g} GB/s",
        )
    what = "float32 with TensorFloat-32" if roof == "matmul_tf32" else "float32"
    ax.axhline(peak, color="black", linewidth=1.5, label=f"compute roof: {what} matmuls, {peak / 1e9:.3g} GFLOP/s")
    ax.axvline(peak / memory[-1]["bytes_per_second"], color="grey", linestyle=":", linewidth=1)
    markers = {"overhead": "s", "memory": "o", "compute": "^"}
    for number, (run, prefix, _style) in enumerate(plots.each_run(runs)):
        for r in run.records:
            color = plots.group_color(ax, r["step"])
            label = f"{prefix}{r['step']}{' (XLA)' if r['xla'] else ''}: {r['regime']}-bound"
            fill = "full" if number == 0 else ("none", "left", "bottom")[(number - 1) % 3]  # later runs: hollow
            ax.loglog(
                r["intensity"],
                r["flops_per_s"],
                markers[r["regime"]],
                color=color,
                markersize=8,
                label=label,
                fillstyle=fill,
            )
    ax.set_xlabel("arithmetic intensity (FLOPs per byte moved)")
    ax.set_ylabel("attained FLOP/s")
    ax.set_title("Your steps under your device's roofline (memory roof, then compute roof)")
    ax.legend(fontsize=7, loc="lower right")


def mlp_train_step(compute_dtype: str = "float32"):
    """Chapter 2's SGD step of its MLP (:mod:`tfperf.experiments.eager_vs_graph`), compiled by XLA and computing
    in ``compute_dtype``: the weights stay float32 variables and are cast for each product, as Keras's mixed
    precision policies do; the loss is computed in float32."""
    import tensorflow as tf

    def loss_in(params, x, y):
        h = tf.cast(x, compute_dtype)
        for i in range(0, len(params) - 2, 2):
            h = tf.nn.relu(tf.matmul(h, tf.cast(params[i], compute_dtype)) + tf.cast(params[i + 1], compute_dtype))
        logits = tf.cast(
            tf.matmul(h, tf.cast(params[-2], compute_dtype)) + tf.cast(params[-1], compute_dtype), tf.float32
        )
        return tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))

    def step(params, x, y, lr):
        with tf.GradientTape() as tape:
            loss = loss_in(params, x, y)
        grads = tape.gradient(loss, params)
        for p, g in zip(params, grads):
            p.assign_sub(lr * g)
        return loss

    return tf.function(step, jit_compile=True)


def memory_by_batch(
    batch_sizes: Sequence[int],
    *,
    width: int = 1024,
    depth: int = 4,
    dtypes: Sequence[str] = ("float32", "bfloat16"),
    progress: Progress | None = None,
) -> list[dict]:
    """What one train step of a ``width`` x ``depth`` MLP allocates, per batch size and compute dtype, read from
    XLA's plan (:func:`tfperf.measure.step_memory.step_memory`; nothing runs). Records: ``dtype``, ``batch``,
    ``weights`` (bytes of the float32 variables), ``parameters`` (every argument: the weights and the batch),
    ``temporaries``, ``results``, ``total``, and ``temporaries_per_sample``."""
    import tensorflow as tf

    from tfperf.experiments import eager_vs_graph as eg
    from tfperf.measure.step_memory import step_memory

    params = eg.make_mlp(width, depth=depth)
    weights = sum(int(p.shape.num_elements()) * p.dtype.size for p in params)
    records = []
    for dtype in dtypes:
        step = mlp_train_step(dtype)
        for batch in batch_sizes:
            x, y = eg.make_batch(batch)
            with logs.captured_stderr():  # XLA's start-up notices
                found = step_memory(step, (params, x, y, tf.constant(0.01)))
            records.append(
                {
                    "dtype": dtype,
                    "batch": batch,
                    "width": width,
                    "depth": depth,
                    "weights": weights,
                    **found,
                    "temporaries_per_sample": found["temporaries"] / batch,
                }
            )
            if progress:
                progress(len(records), len(dtypes) * len(batch_sizes))
    return records


def held_by_batch(
    batch_sizes: Sequence[int],
    *,
    width: int = 1024,
    depth: int = 4,
    dtypes: Sequence[str] = ("float32", "bfloat16"),
    progress: Progress | None = None,
) -> list[dict]:
    """The steps of :func:`memory_by_batch`, run: per batch size and compute dtype, what XLA planned for one step
    beyond its arguments (``planned``: its temporaries and results), what the device held during one step beyond
    what it held before (``held``, :func:`tfperf.measure.step_memory.peak_while`; None where it cannot be read,
    ``read``: what was read), and the samples per second of the step (``samples_per_second``: the median of
    :func:`tfperf.measure.timing.measure`'s samples, after a warm-up call that compiles it)."""
    import tensorflow as tf

    from tfperf.experiments import eager_vs_graph as eg
    from tfperf.measure.step_memory import peak_while, step_memory

    params = eg.make_mlp(width, depth=depth)
    lr = tf.constant(0.0)  # a step that leaves the weights as they are: every call does the same work
    records = []
    for dtype in dtypes:
        step = mlp_train_step(dtype)
        for batch in batch_sizes:
            x, y = eg.make_batch(batch)
            with logs.captured_stderr():  # XLA's start-up notices
                plan = step_memory(step, (params, x, y, lr))
                step(params, x, y, lr)  # compiled now, not while measured
            _, held, read = peak_while(lambda: step(params, x, y, lr))
            timed = timing.measure(lambda: step(params, x, y, lr), repeats=3, warmup=0, min_time=0.02)
            records.append(
                {
                    "dtype": dtype,
                    "batch": batch,
                    "width": width,
                    "planned": plan["temporaries"] + plan["results"],
                    "held": held,
                    "read": read,
                    "samples_per_second": batch / timed.median,
                }
            )
            if progress:
                progress(len(records), len(dtypes) * len(batch_sizes))
    return records


def _against_batch(ax, records, y: str, prefix: str, style: str, ylabel: str) -> None:
    """``y`` of ``records`` against their batch size, one line per ``line``, both axes logarithmic."""
    from tfperf.lesson import plots

    plots.plot_lines(
        ax,
        records,
        x="batch",
        y=y,
        group="line",
        label_prefix=prefix,
        logx=True,
        logy=True,
        linestyle=style,
        xlabel="batch size (samples)",
        ylabel=ylabel,
    )


def plot_held(fig, runs) -> None:
    """Runs of :func:`held_by_batch`: memory held by one step (solid) and planned by XLA (dashed) against the batch
    size, and the samples per second, per dtype."""
    from tfperf.lesson import plots

    memory, speed = fig.subplots(1, 2)
    for run, prefix, style in plots.each_run(runs):
        held = [dict(r, line=f"held, {r['dtype']}", mb=r["held"] / 1e6) for r in run.records if r["held"] is not None]
        planned = [dict(r, line=f"planned, {r['dtype']}", mb=r["planned"] / 1e6) for r in run.records]
        for records, dash in ((held, style), (planned, "--")):
            _against_batch(memory, records, "mb", prefix, dash, "MB beyond the step's arguments")
        speed_records = [dict(r, line=r["dtype"]) for r in run.records]
        _against_batch(speed, speed_records, "samples_per_second", prefix, style, "samples per second")
    memory.set_title("One step's memory: held, planned (dashed)", fontsize=9)
    speed.set_title("Its throughput", fontsize=9)
    plots.legend(memory, runs, fontsize=7)
    plots.legend(speed, runs, fontsize=7)


def largest_batch(records: Sequence[dict], dtype: str, budget: float) -> int | None:
    """The largest batch whose step fits in ``budget`` bytes, from the two largest batches of ``dtype`` measured
    (the memory of a step grows by the same amount per sample: a straight line through them); None when
    fewer than two were measured, or not even the fixed part fits."""
    mine = sorted((r for r in records if r["dtype"] == dtype), key=lambda r: r["batch"])
    if len(mine) < 2:
        return None
    small, large = mine[-2], mine[-1]
    per_sample = (large["total"] - small["total"]) / (large["batch"] - small["batch"])
    fixed = large["total"] - per_sample * large["batch"]
    if per_sample <= 0 or budget <= fixed:
        return None
    return int((budget - fixed) // per_sample)


def plot_memory(fig, runs) -> None:
    """Runs of :func:`memory_by_batch`: a step's total and temporary memory against the batch size, per dtype."""
    from tfperf.lesson import plots

    ax = fig.subplots()
    for run, prefix, style in plots.each_run(runs):
        for what in ("total", "temporaries"):
            records = [dict(r, line=f"{what}, {r['dtype']}", mb=r[what] / 1e6) for r in run.records]
            _against_batch(ax, records, "mb", prefix, style, "MB that XLA allocates for one step")
    weights = {r["weights"] for run in runs for r in run.records}
    for value in sorted(weights):
        ax.axhline(value / 1e6, color="grey", linestyle=":", linewidth=1)
    ax.set_title("Memory of one train step (dotted: the float32 weights)")
    plots.legend(ax, runs, fontsize=7)


#: The ways :func:`under_budget` runs one training step of a batch: all of it at once; half of it (a different
#: training: smaller batches, more updates); all of it as ``pieces`` micro-batches whose gradients are added up
#: before one update (gradient accumulation: the same update as the whole batch); all of it computed in bfloat16.
BUDGET_WAYS = ("whole batch", "half the batch", "gradient accumulation", "bfloat16")


def grad_function():
    """The gradients of chapter 2's MLP loss (:func:`tfperf.experiments.eager_vs_graph.mlp_loss`, float32) with
    respect to the MLP's weights, compiled by XLA. (Chapter 2 shows ``sgd_step``'s tape whole, so it is not split
    out of it.)"""
    import tensorflow as tf

    from tfperf.experiments import eager_vs_graph as eg

    def grads(params, x, y):
        with tf.GradientTape() as tape:
            loss = eg.mlp_loss(params, x, y)
        return tape.gradient(loss, params)

    return tf.function(grads, jit_compile=True)


def _check_pieces(batch: int, pieces: int) -> None:
    if pieces < 1 or batch % pieces:
        raise ValueError(f"A batch of {batch} does not split into {pieces} equal micro-batches.")


def accumulated_step(params, x, y, lr, pieces: int, grads=None) -> None:
    """One SGD update of the MLP ``params`` from the batch ``(x, y)`` computed in ``pieces`` equal micro-batches:
    each one's mean gradient is added into an accumulator, and their mean (the whole batch's mean gradient, up to
    float32 rounding) is applied once. Only one micro-batch's activations are alive at a time, beside the
    accumulated gradients (as many bytes as the weights, twice while one is added). The batch must split into
    ``pieces`` equal parts."""
    import tensorflow as tf

    _check_pieces(int(x.shape[0]), pieces)
    grads = grads or grad_function()
    size = int(x.shape[0]) // pieces
    total = [tf.zeros_like(p) for p in params]
    for i in range(pieces):
        part = grads(params, x[i * size : (i + 1) * size], y[i * size : (i + 1) * size])
        total = [t + g for t, g in zip(total, part)]
    for p, t in zip(params, total):
        p.assign_sub(lr * t / pieces)


def accumulation_agrees(*, width: int = 256, depth: int = 2, batch: int = 512, pieces: int = 4) -> float:
    """The largest difference between the weights after one whole-batch update and after one update accumulated
    over ``pieces`` micro-batches, from the same start: float32 rounding, nothing more."""
    import numpy as np

    from tfperf.experiments import eager_vs_graph as eg

    x, y = eg.make_batch(batch)
    whole, pieced = eg.make_mlp(width, depth=depth), eg.make_mlp(width, depth=depth)
    grads = grad_function()
    for p, g in zip(whole, grads(whole, x, y)):
        p.assign_sub(0.1 * g)
    accumulated_step(pieced, x, y, 0.1, pieces, grads)
    return max(float(np.max(np.abs(a.numpy() - b.numpy()))) for a, b in zip(whole, pieced))


def _run_under_budget(config: dict) -> dict:
    """In a fresh process (:func:`under_budget`): build the MLP and one batch, run one step ``way`` once with room
    to spare (XLA compiles it then), then leave it only ``budget`` bytes more than it holds and run it again. On a
    GPU, a logical GPU of ``limit`` MB (set before TensorFlow uses the GPU), then a ballast tensor that fills all
    of it but ``budget``; on a CPU (oneDNN's operations off: see :func:`under_budget`), ``RLIMIT_DATA`` at what the
    process's data memory (``VmData``) holds after the first run, plus the budget, with large blocks mapped on
    their own and returned when freed."""
    import resource

    tf = logs.tensorflow()
    from tfperf.experiments import eager_vs_graph as eg
    from tfperf.measure.step_memory import step_memory
    from tfperf.runtime import processes

    width, depth, batch, budget, way = (config[k] for k in ("width", "depth", "batch", "budget", "way"))
    pieces = config.get("pieces", 4)
    gpus = tf.config.list_physical_devices("GPU")
    if gpus:
        tf.config.set_visible_devices(gpus[:1], "GPU")
        room = tf.config.LogicalDeviceConfiguration(memory_limit=int(config["limit_mb"]))
        tf.config.set_logical_device_configuration(gpus[0], [room])
    else:
        processes.return_large_frees(64 << 10)
    params = eg.make_mlp(width, depth=depth)
    x, y = eg.make_batch(batch)
    lr = tf.constant(0.01)
    if way == "gradient accumulation":
        fn, args = grad_function(), (params, x[: batch // pieces], y[: batch // pieces])
    else:
        fn = mlp_train_step("bfloat16" if way == "bfloat16" else "float32")
        args = (params, x[: batch // 2], y[: batch // 2], lr) if way == "half the batch" else (params, x, y, lr)

    def run() -> None:
        if way == "gradient accumulation":
            accumulated_step(params, x, y, lr, pieces, fn)
        else:
            fn(*args)
        device.sync()

    result = {"way": way, "batch": batch, "planned_mb": None}
    try:
        with logs.captured_stderr():
            plan = step_memory(fn, args)
            planned = plan["temporaries"] + plan["results"]
            if way == "gradient accumulation":  # the accumulated gradients too: twice the weights while one is added
                planned += 2 * eg.mlp_weight_bytes(width, depth=depth)
            result["planned_mb"] = planned / 1e6
            run()  # compiled now, with room to spare: what is capped is the step's own memory
        if gpus:
            name = "GPU:0"
            free = int(config["limit_mb"]) * (1 << 20) - tf.config.experimental.get_memory_info(name)["current"]
            ballast = tf.zeros([max(0, free - budget)], tf.uint8)  # noqa: F841 (held while the step runs)
        else:
            data = processes.data_bytes()
            if data is None:
                return result | {"ran": None, "error": "the process's data memory could not be read (/proc)"}
            _, hard = resource.getrlimit(resource.RLIMIT_DATA)
            resource.setrlimit(resource.RLIMIT_DATA, (data + budget, hard))
        with logs.captured_stderr():
            run()
    except (tf.errors.ResourceExhaustedError, MemoryError) as err:
        return result | {"ran": False, "error": f"{type(err).__name__}: {str(err).splitlines()[0][:160]}"}
    return result | {"ran": True, "error": None}


def under_budget(
    way: str,
    *,
    width: int,
    depth: int,
    batch: int,
    budget_mb: float,
    pieces: int = 4,
    limit_mb: int | None = None,
    timeout: float = 300,
) -> dict:
    """One training step of a batch of ``batch`` samples of the ``width`` x ``depth`` MLP, run ``way`` (one of
    :data:`BUDGET_WAYS`) in a fresh Python process left ``budget_mb`` MB more than it holds once the step has run
    (:func:`_run_under_budget`), so that running out of memory harms nothing here. Returns ``way``, ``batch``,
    ``planned_mb`` (what XLA planned for the compiled function it runs, beyond its arguments: for gradient
    accumulation, one micro-batch's and the accumulated gradients), ``ran`` (None where the limit could not be set)
    and ``error`` (what TensorFlow raised, or how the process ended). On a CPU the process runs with oneDNN's
    operations off: with them on, TensorFlow's CPU allocator keeps freed blocks for reuse, and the capped run would
    reuse the first run's memory. ``limit_mb``: the logical GPU's whole memory (by default room for the weights,
    the batch and a step far larger than this one)."""
    import json
    import os
    import signal
    import subprocess
    import sys
    from pathlib import Path

    from tfperf.experiments import eager_vs_graph as eg

    if way not in BUDGET_WAYS:
        raise ValueError(f"Unknown way {way!r}; choose from {', '.join(BUDGET_WAYS)}.")
    _check_pieces(batch, pieces)
    given = eg.mlp_weight_bytes(width, depth=depth) + batch * 4 * (eg.FEATURES + 1)  # the weights, x and y
    config = {
        "way": way,
        "width": width,
        "depth": depth,
        "batch": batch,
        "budget": int(budget_mb * 1e6),
        "pieces": pieces,
        "limit_mb": limit_mb or (4 * given + 4 * int(budget_mb * 1e6)) // (1 << 20) + 256,
    }
    source = Path(__file__).resolve().parents[2]
    env = dict(
        os.environ,
        TF_CPP_MIN_LOG_LEVEL="3",
        TF_ENABLE_ONEDNN_OPTS="0",
        PYTHONPATH=os.pathsep.join(filter(None, [str(source), os.environ.get("PYTHONPATH")])),
    )
    # The result is printed, then the process leaves at once: after an allocation failed, TensorFlow's state may
    # not survive the interpreter's clean-up (seen: a segmentation fault while garbage-collecting at exit).
    code = (
        "import json, os, sys; from tfperf.experiments import device_ceilings as dc; "
        "print(json.dumps(dc._run_under_budget(json.loads(sys.argv[1]))), flush=True); os._exit(0)"
    )
    try:
        done = subprocess.run(
            [sys.executable, "-c", code, json.dumps(config)], capture_output=True, text=True, timeout=timeout, env=env
        )
    except subprocess.TimeoutExpired:
        return {"way": way, "batch": batch, "planned_mb": None, "ran": False, "error": f"no answer in {timeout:g} s"}
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if lines:
        return json.loads(lines[-1])
    if done.returncode >= 0:
        ended = f"the process ended with exit status {done.returncode}"
    else:
        ended = f"the process was killed by {signal.Signals(-done.returncode).name}"
    last = (done.stderr.strip().splitlines() or [""])[-1][:160]
    return {
        "way": way,
        "batch": batch,
        "planned_mb": None,
        "ran": False,
        "error": f"{ended} ({last})" if last else ended,
    }


#: The ways :func:`predict_memory` computes a model's outputs for many rows.
PREDICT_WAYS = ("model(x): every row at once", "predict_on_batch(x): every row at once", "predict(x, batch_size=256)")


def predict_memory(rows: int, *, width: int = 1024, depth: int = 3, features: int = 64) -> list[dict]:
    """The outputs of a Keras MLP (``depth`` Dense layers of ``width`` units) for ``rows`` rows, computed each of
    :data:`PREDICT_WAYS`, after a first call of each on the same rows (traced and warmed up then): per way, ``held``
    (the most memory the device held during the call beyond what it held before,
    :func:`tfperf.measure.step_memory.peak_while`; None where it cannot be read), ``read`` (what was read),
    ``seconds`` (the median of :func:`tfperf.measure.timing.measure`'s samples, timed apart from the memory reading)
    and ``agrees`` (the largest difference from the first way's outputs)."""
    import keras
    import numpy as np

    from tfperf.measure.step_memory import peak_while

    rng = np.random.default_rng(0)
    x = rng.standard_normal((rows, features)).astype(np.float32)
    model = keras.Sequential(
        [
            keras.Input((features,)),
            *(keras.layers.Dense(width, activation="relu") for _ in range(depth)),
            keras.layers.Dense(10),
        ]
    )
    calls = {
        PREDICT_WAYS[0]: lambda: np.asarray(model(x)),
        PREDICT_WAYS[1]: lambda: model.predict_on_batch(x),
        PREDICT_WAYS[2]: lambda: model.predict(x, batch_size=256, verbose=0),
    }
    records, first = [], None
    for way, call in calls.items():
        with logs.captured_stderr():
            call()
        out, held, read = peak_while(call)
        seconds = timing.measure(call, repeats=3, warmup=0, min_time=0.02).median
        first = out if first is None else first
        records.append(
            {
                "way": way,
                "rows": rows,
                "held": held,
                "read": read,
                "seconds": seconds,
                "agrees": float(np.max(np.abs(out - first))),
            }
        )
    return records
