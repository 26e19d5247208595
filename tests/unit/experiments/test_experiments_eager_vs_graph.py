"""Unit tests of the chapter 2 experiments (small sizes: seconds, not minutes)."""

import math

import pytest

tf = pytest.importorskip("tensorflow")

from tfperf.experiments import eager_vs_graph as eg  # noqa: E402


def test_modes_compute_the_same_step():
    x, y = eg.make_batch(8)
    results = []
    for mode in eg.MODES:
        params = eg.make_mlp(16)
        step = eg.train_step_for(mode)
        losses = [float(step(params, x, y, tf.constant(0.1))) for _ in range(3)]
        results.append((losses, params[0].numpy()))
    for losses, w in results[1:]:
        assert losses == pytest.approx(results[0][0], rel=1e-4)
        assert w == pytest.approx(results[0][1], rel=1e-4, abs=1e-6)
    assert results[0][0][-1] < results[0][0][0]  # it trains


def test_unknown_mode_and_kind_are_rejected():
    with pytest.raises(ValueError, match="Unknown mode"):
        eg.train_step_for("turbo")
    with pytest.raises(ValueError, match="Unknown kind"):
        eg.retracing_cost(2, ["float"])
    with pytest.raises(ValueError, match="Unknown placement"):
        eg.function_in_loop("sometimes", 2)


def test_step_throughput_records():
    done = []
    records = eg.step_throughput([8], [4], min_time=0.001, repeats=1, progress=lambda d, t: done.append((d, t)))
    assert [r["mode"] for r in records] == list(eg.MODES)
    assert done[-1] == (3, 3)
    for r in records:
        assert r["width"] == 8 and r["batch"] == 4 and r["ms_per_step"] > 0
        assert r["examples_per_s"] == pytest.approx(4 / (r["ms_per_step"] / 1e3))
    assert records[0]["speedup_vs_eager"] == pytest.approx(1.0)
    only_graph = eg.step_throughput([8], [4], ["graph"], min_time=0.001, repeats=1)
    assert math.isnan(only_graph[0]["speedup_vs_eager"])


def test_retracing_cost_counts_traces():
    by_kind = {r["kind"]: r for r in eg.retracing_cost(4)}
    assert by_kind["Python int"]["traces"] == 4
    assert by_kind["tensor"]["traces"] == 1
    assert by_kind["Python int, reduce_retracing=True"]["traces"] == 4


def test_first_call_and_steady_and_graph_size():
    fn = tf.function(lambda x: x * 2)
    record = eg.first_call_and_steady(fn, tf.ones([2]), repeats=1, min_time=0.001)
    assert record["traces"] == 1 and record["first_ms"] > 0 and record["steady_ms"] > 0

    @tf.function
    def unrolled(x, n):
        for _ in range(n):
            x = x + 1
        return x

    assert eg.graph_op_count(unrolled, tf.ones([2]), 10) > eg.graph_op_count(unrolled, tf.ones([2]), 2)


def test_function_in_loop_runs():
    eg.function_in_loop("once", 2)()
    eg.function_in_loop("every step", 2)()


def test_plot_accepts_runs():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from tfperf.lesson.plots import Run

    records = eg.step_throughput([8, 16], [4], min_time=0.001, repeats=1)
    fig = plt.figure()
    eg.plot_step_throughput(fig, [Run("a", {}, records), Run("b", {}, records)])
    assert len(fig.axes) == 2
    plt.close(fig)


def _labelled_ticks(axis) -> list[float]:
    """The values a reader can read off ``axis``: labelled ticks inside its limits."""
    low, high = sorted(axis.get_view_interval())
    ticks = axis.get_major_ticks() + axis.get_minor_ticks()
    labels = [t.label1.get_text() for t in ticks if t.label1.get_visible()]
    values = [float(text.replace(",", "")) for text in labels if text]
    return sorted(v for v in values if low <= v <= high)


@pytest.mark.parametrize(
    "widths, speedups, examples_per_s",
    [
        ([16, 32, 64], [2.4, 2.0, 1.6], [30_000, 60_000, 90_000]),  # the ci size's sweep
        ([16, 64, 256, 1024], [3.1, 2.2, 1.3, 1.05], [150_000, 120_000, 40_000, 4_000]),  # the full size's
    ],
)
def test_step_throughput_plot_has_readable_values_on_its_log_axes(widths, speedups, examples_per_s):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from tfperf.lesson import plots

    records = []
    for width, speedup, eager in zip(widths, speedups, examples_per_s):
        for mode, factor in (("eager", 1.0), ("graph", speedup), ("graph + XLA", speedup * 0.9)):
            records.append(
                {
                    "width": width,
                    "batch": 32,
                    "mode": mode,
                    "examples_per_s": eager * factor,
                    "speedup_vs_eager": factor,
                }
            )
    fig = plt.figure(figsize=plots.FIGSIZE, layout="constrained")
    eg.plot_step_throughput(fig, [plots.Run("this run", records=records)])
    fig.canvas.draw()
    ax_tp, ax_speed = fig.axes[:2]
    speed_values = _labelled_ticks(ax_speed.yaxis)
    assert len(speed_values) >= 3, speed_values
    assert 1.0 in speed_values  # where the graph stops winning
    assert max(speed_values) >= 0.75 * max(speedups)  # labels along the whole axis, not only at its bottom
    assert len(_labelled_ticks(ax_tp.yaxis)) >= 3, _labelled_ticks(ax_tp.yaxis)
    plt.close(fig)
