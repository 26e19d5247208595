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
points = bod.scaling(names, width=64, per_replica=16, repeats=3, min_time=0.02)
print(json.dumps({"points": [p.__dict__ | {"share": p.all_reduce_share} for p in points],
                  "seen": sorted(set(bod.witnessed()))}))
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
    one, two = got["points"]
    assert (one["replicas"], one["global_batch"], two["replicas"], two["global_batch"]) == (1, 16, 2, 32)
    for point in (one, two):
        assert point["seconds_per_step"] > 0 and point["all_reduce_seconds"] > 0
        assert point["examples_per_second"] == pytest.approx(point["global_batch"] / point["seconds_per_step"])
        assert point["share"] == pytest.approx(point["all_reduce_seconds"] / point["seconds_per_step"])
    assert one["efficiency"] == 1.0
    assert two["efficiency"] == pytest.approx(two["examples_per_second"] / (2 * one["examples_per_second"]))
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
    records = bod.service_scaling(endless, workers=(1, 2), elements=256, batch=8, progress=seen.append)
    assert [(r["where"], r["workers"]) for r in records] == [("local", 0), ("service", 1), ("service", 2)]
    assert all(r["rate"] > 0 for r in records)
    assert seen == ["local", "service, 1 worker(s)", "service, 2 worker(s)"]
    assert servers.library_pids() == set()  # every server stopped
