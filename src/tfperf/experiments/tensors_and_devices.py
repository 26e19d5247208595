"""Chapter 1 experiments: what host<->device copies cost.

Three ways to use a NumPy array in a loop of ``steps`` small computations on the compute
device (the GPU if there is one):

- ``convert every step``: ``tf.convert_to_tensor(array)`` inside the loop, so the array is
  copied to the device on every step;
- ``convert once``: converted before the loop, so it is copied once;
- ``.numpy() round trip``: converted once, but pulled back to NumPy and converted again
  on every step (device -> host -> device).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from tfperf.measure import timing
from tfperf.measure.timing import Progress
from tfperf.runtime import device, logs

STRATEGIES = ("convert every step", "convert once", ".numpy() round trip")


def make_array(size_mb: float, seed: int = 0) -> np.ndarray:
    """A float32 NumPy array of about ``size_mb`` megabytes (10^6 bytes)."""
    n = max(1, int(size_mb * 1e6 / 4))
    return np.random.default_rng(seed).standard_normal(n, dtype=np.float32)


def loop_for(strategy: str, array: np.ndarray, steps: int) -> Callable[[], object]:
    """A no-argument function running ``steps`` steps of ``strategy`` on ``array``."""
    tf = logs.tensorflow()

    # What each strategy does at the start of a step, given the tensor of the step before.
    next_tensor = {
        "convert every step": lambda x: tf.convert_to_tensor(array),  # host -> device, every step
        "convert once": lambda x: x,  # already on the device
        ".numpy() round trip": lambda x: tf.convert_to_tensor(x.numpy()),  # device -> host -> device
    }
    if strategy not in next_tensor:
        raise ValueError(f"Unknown strategy {strategy!r}; choose from {', '.join(STRATEGIES)}.")
    step_input = next_tensor[strategy]
    where = device.compute_device()

    def run_steps():
        with tf.device(where):
            x = tf.identity(tf.convert_to_tensor(array))  # the one copy every strategy makes
            total = tf.constant(0.0)
            for _ in range(steps):
                x = step_input(x)
                total += tf.reduce_sum(x)
            return total

    return run_steps


def copy_costs(
    sizes_mb: Sequence[float],
    strategies: Sequence[str] = STRATEGIES,
    *,
    steps: int = 20,
    repeats: int = 3,
    min_time: float = 0.05,
    progress: Progress | None = None,
) -> list[dict]:
    """Time each strategy at each array size.

    Returns one record per (size, strategy): ``size_mb``, ``strategy``, ``ms_per_step``
    (median), and ``gb_per_s``, the array bytes handled per second of loop time.
    """
    records = []
    total = len(sizes_mb) * len(strategies)
    for size_mb in sizes_mb:
        array = make_array(size_mb)
        for strategy in strategies:
            t = timing.measure(loop_for(strategy, array, steps), repeats=repeats, min_time=min_time)
            seconds_per_step = t.median / steps
            records.append(
                {
                    "size_mb": array.nbytes / 1e6,
                    "strategy": strategy,
                    "ms_per_step": seconds_per_step * 1e3,
                    "gb_per_s": array.nbytes / seconds_per_step / 1e9,
                    "device": device.compute_device(),
                }
            )
            if progress:
                progress(len(records), total)
    return records


def plot_copy_costs(fig, runs) -> None:
    """Draw runs of :func:`copy_costs`: time per step and effective bandwidth against size."""
    from tfperf.lesson import plots

    ax_time, ax_bw = fig.subplots(1, 2)
    for run, prefix, style in plots.each_run(runs):
        plots.plot_lines(
            ax_time,
            run.records,
            x="size_mb",
            y="ms_per_step",
            group="strategy",
            label_prefix=prefix,
            logx=True,
            logy=True,
            linestyle=style,
            xlabel="array size (MB)",
            ylabel="time per step (ms)",
        )
        plots.plot_lines(
            ax_bw,
            run.records,
            x="size_mb",
            y="gb_per_s",
            group="strategy",
            label_prefix=prefix,
            logx=True,
            logy=True,
            linestyle=style,
            xlabel="array size (MB)",
            ylabel="array bytes per second (GB/s)",
        )
    ax_time.set_title("Cost per step (lower is better)")
    ax_bw.set_title("Effective bandwidth (higher is better)")
    plots.legend(ax_bw, runs, fontsize=8)
