"""tfperf.experiments.beyond_one_device (chapter 7): data, and what replication costs, measured on 2 replicas made
in a fresh process (the replicas' devices must exist before TensorFlow starts)."""

import json
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("tensorflow")

SCALING = """
import json
from tfperf.runtime import replicas
plan, names = replicas.configure(2)
from tfperf.experiments import beyond_one_device as bod
done = []
records = bod.scaling(names, width=64, per_replica=16, repeats=3, min_time=0.02, progress=lambda *a: done.append(a))
print(json.dumps({"records": records, "done": done, "seen": sorted(set(bod.witnessed()))}))
"""


def test_make_data_is_a_function_of_its_seed():
    from tfperf.experiments import beyond_one_device as bod

    x, y = bod.make_data(50, seed=3)
    assert x.shape == (50, bod.FEATURES) and x.dtype == np.float32 and y.dtype == np.int32
    assert set(np.unique(y)) <= set(range(bod.CLASSES))
    again = bod.make_data(50, seed=3)
    assert np.array_equal(x, again[0]) and np.array_equal(y, again[1])
    assert not np.array_equal(x, bod.make_data(50, seed=4)[0])


@pytest.mark.slow
def test_scaling_times_one_then_two_replicas_on_a_growing_global_batch():
    done = subprocess.run([sys.executable, "-c", SCALING], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    got = json.loads(done.stdout.strip().splitlines()[-1])
    one, two = got["records"]
    assert (one["replicas"], one["global_batch"], two["replicas"], two["global_batch"]) == (1, 16, 2, 32)
    for record in (one, two):
        assert record["ms_per_step"] > 0 and record["call_ms"] > 0
        assert record["examples_per_second"] == pytest.approx(record["global_batch"] / record["ms_per_step"] * 1e3)
        assert record["all_reduce_share"] == pytest.approx(record["all_reduce_ms"] / record["ms_per_step"])
    # one replica reduces nothing: what the all-reduce adds is what two replicas' call costs beyond one's
    assert one["all_reduce_ms"] == 0 and two["call_ms"] == one["call_ms"] and two["all_reduce_ms"] >= 0
    assert one["efficiency"] == 1.0
    assert two["efficiency"] == pytest.approx(two["examples_per_second"] / (2 * one["examples_per_second"]))
    assert got["done"] == [[1, 2], [2, 2]]
    assert [0, 16] in got["seen"] and [1, 16] in got["seen"]  # the step ran on each replica, 16 examples each


def test_steady_rate_counts_rows_after_the_warm_up():
    import tensorflow as tf

    from tfperf.experiments import beyond_one_device as bod

    rate = bod.steady_rate(tf.data.Dataset.range(10**9).batch(8), 400, warmup=40)
    assert rate > 0
    with pytest.raises(ValueError, match="ended after about 100 elements"):  # shorter than warm-up and timing
        bod.steady_rate(tf.data.Dataset.range(100), 400)


@pytest.mark.slow
def test_service_scaling_reads_locally_then_through_each_service():
    import tensorflow as tf

    from tfperf.experiments import beyond_one_device as bod
    from tfperf.runtime import servers

    def endless():
        return tf.data.Dataset.range(10**9).map(lambda i: tf.reduce_sum(tf.random.stateless_uniform((16, 16), [i, i])))

    seen = []
    records = bod.service_scaling(endless, workers=(1, 2), elements=256, batch=8, progress=lambda *a: seen.append(a))
    assert [(r["where"], r["workers"]) for r in records] == [("local", 0), ("service", 1), ("service", 2)]
    assert all(r["rate"] > 0 for r in records) and records[0]["speedup"] == 1.0
    assert records[2]["speedup"] == pytest.approx(records[2]["rate"] / records[0]["rate"])
    assert seen == [(1, 3), (2, 3), (3, 3)]
    assert servers.library_pids() == set()  # every server stopped


def test_plot_scaling_draws_throughput_against_its_ideal_and_the_shares():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from tfperf.experiments import beyond_one_device as bod
    from tfperf.lesson import plots

    records = [
        {"replicas": 1, "examples_per_second": 100.0, "efficiency": 1.0, "all_reduce_share": 0.1},
        {"replicas": 2, "examples_per_second": 150.0, "efficiency": 0.75, "all_reduce_share": 0.3},
    ]
    fig = plt.figure()
    bod.plot_scaling(fig, [plots.Run("width 256", records=records), plots.Run("width 1024", records=records)])
    rate, share = fig.axes
    assert rate.get_xlabel() == "replicas" and rate.get_ylabel() == "examples per second"
    ideal = [line for line in rate.lines if line.get_label() == "width 256: ideal"][0]
    assert list(ideal.get_ydata()) == [100.0, 200.0]  # one replica's rate times the replicas
    assert len(rate.lines) == 4 and len(share.lines) == 4  # measured and ideal; efficiency and share, for each run
    plt.close(fig)


def test_plot_service_draws_the_served_rates_the_local_rate_and_the_ideal():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from tfperf.experiments import beyond_one_device as bod
    from tfperf.lesson import plots

    records = [
        {"where": "local", "workers": 0, "rate": 100.0},
        {"where": "service", "workers": 1, "rate": 80.0},
        {"where": "service", "workers": 2, "rate": 150.0},
    ]
    fig = plt.figure()
    bod.plot_service(fig, [plots.Run("pinned", records=records)])
    (ax,) = fig.axes
    lines = {line.get_label(): line for line in ax.lines}
    assert list(lines["service"].get_xdata()) == [1, 2] and list(lines["service"].get_ydata()) == [80.0, 150.0]
    assert list(lines["ideal"].get_ydata()) == [100.0, 200.0]  # the local rate times the workers
    assert list(lines["local, this process"].get_ydata()) == [100.0, 100.0]
