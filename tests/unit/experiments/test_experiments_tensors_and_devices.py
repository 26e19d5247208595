import numpy as np
import pytest

from tfperf.experiments import tensors_and_devices as copies
from tfperf.runtime import device


def test_every_strategy_computes_the_same_total():
    array = copies.make_array(0.01)
    totals = [float(copies.loop_for(s, array, steps=3)()) for s in copies.STRATEGIES]
    assert np.allclose(totals, totals[0], rtol=1e-5)
    assert np.isclose(totals[0], 3 * array.sum(dtype=np.float64), rtol=1e-4)


def test_copy_costs_returns_one_record_per_setting_with_progress():
    seen = []
    records = copies.copy_costs(
        [0.01, 0.04], steps=2, repeats=1, min_time=0.0, progress=lambda done, total: seen.append((done, total))
    )
    assert len(records) == 2 * len(copies.STRATEGIES)
    assert seen[-1] == (6, 6)
    for r in records:
        assert r["ms_per_step"] > 0 and r["gb_per_s"] > 0 and r["device"] == device.compute_device()


def test_unknown_strategy():
    with pytest.raises(ValueError, match="Unknown strategy"):
        copies.loop_for("teleport", copies.make_array(0.01), 1)


@pytest.mark.parametrize("largest_mb", [16.0, 64.0])  # the ci size's sweep, the full size's
def test_copy_cost_plot_labels_do_not_overlap(largest_mb):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from tests.unit.lesson.test_plots import overlapping_labels
    from tfperf.lesson import plots
    from tfperf.runtime import sizes

    records = [
        {"size_mb": mb, "strategy": strategy, "ms_per_step": 0.1 + mb * factor, "gb_per_s": mb / (0.1 + mb * factor)}
        for mb in sizes.ladder_to(largest_mb, smallest=0.01)
        for strategy, factor in zip(copies.STRATEGIES, (0.05, 0.01, 0.4))
    ]
    fig = plt.figure(figsize=plots.FIGSIZE, layout="constrained")
    copies.plot_copy_costs(fig, [plots.Run("this run", records=records)])
    fig.canvas.draw()
    assert overlapping_labels(fig) == []
    plt.close(fig)
