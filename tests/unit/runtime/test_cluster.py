"""tfperf.runtime.cluster: worker processes of one MultiWorkerMirroredStrategy cluster, over real gRPC on loopback."""

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.unit.runtime.processes import all_end, children_of
from tfperf.runtime import cluster

ALL_REDUCE = """
import json, os
import tensorflow as tf
strategy = tf.distribute.MultiWorkerMirroredStrategy()
index = json.loads(os.environ["TF_CONFIG"])["task"]["index"]
total = strategy.reduce(tf.distribute.ReduceOp.SUM, strategy.run(lambda: tf.constant(index + 1.0)), axis=None)
print("replicas", strategy.num_replicas_in_sync, "sum", float(total))
"""


def test_each_worker_gets_the_cluster_and_its_own_index():
    ports = cluster.free_ports(3)
    assert len(set(ports)) == 3
    config = json.loads(cluster.tf_config(ports, 2))
    assert config == {
        "cluster": {"worker": [f"localhost:{p}" for p in ports]},
        "task": {"type": "worker", "index": 2},
    }


@pytest.mark.slow
def test_two_workers_all_reduce_over_grpc(tmp_path):
    script = tmp_path / "all_reduce.py"
    script.write_text(ALL_REDUCE)
    runs = cluster.run_workers(script, 2, timeout=240)
    assert [r.ok for r in runs] == [True, True], [r.output[-2000:] for r in runs]
    for run in runs:  # 1 + 2, summed across the two processes
        assert "replicas 2 sum 3.0" in run.output


def test_a_worker_stopped_on_purpose_and_one_left_hanging_are_both_ended(tmp_path):
    script = tmp_path / "sleeper.py"
    script.write_text("import time\nprint('up', flush=True)\ntime.sleep(600)\n")
    started = time.monotonic()
    runs = cluster.run_workers(script, 2, timeout=3, stop={1: 0.5})
    assert time.monotonic() - started < 20
    assert runs[0].returncode is None and "up" in runs[0].output  # killed at the timeout
    assert runs[1].returncode == -9  # stopped as a failing machine would


def test_a_stop_can_count_from_a_line_the_worker_prints(tmp_path):
    script = tmp_path / "slow_start.py"
    script.write_text("import time\ntime.sleep(1.5)\nprint('step 0', flush=True)\ntime.sleep(600)\n")
    started = time.monotonic()
    runs = cluster.run_workers(script, 2, timeout=30, stop={1: 0.5, 0: 0.5}, stop_after="step 0")
    took = time.monotonic() - started
    assert [r.returncode for r in runs] == [-9, -9] and all("step 0" in r.output for r in runs)
    assert 2.0 <= took < 20  # killed half a second after each said "step 0", not half a second after the start


def test_workers_die_with_their_parent(tmp_path):
    script = tmp_path / "sleeper.py"
    script.write_text("import os, time\nprint(os.getpid(), flush=True)\ntime.sleep(600)\n")
    parent = tmp_path / "parent.py"
    parent.write_text(
        f"import sys\nfrom tfperf.runtime import cluster\ncluster.run_workers({str(script)!r}, 2, timeout=600, gpus=0)\n"
    )
    process = subprocess.Popen([sys.executable, str(parent)])
    try:
        deadline, children = time.monotonic() + 20, []
        while time.monotonic() < deadline and len(children) < 2:
            time.sleep(0.2)
            children = _workers_of(process.pid)
        assert len(children) == 2
        # forked by the notebook's launcher where it serves (tfperf.runtime.preloaded), which ends with its parent too
        children += children_of(process.pid)
    finally:
        process.kill()
        process.wait()
    assert all_end(children)


def _workers_of(pid: int) -> list[str]:
    """The cluster's workers that ``pid`` started: its launcher's children, or (no launcher) its own."""
    children = children_of(pid)
    launchers = [c for c in children if "tfperf.runtime.preloaded" in _command_line(c)]
    return [w for launcher in launchers for w in children_of(launcher)] if launchers else children


def _command_line(pid: str) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_text()
    except OSError:  # ended meanwhile
        return ""


@pytest.mark.parametrize(
    "workers, gpus, expected",
    [(2, 0, ["-1", "-1"]), (2, 1, ["-1", "-1"]), (2, 2, ["0", "1"]), (2, 8, ["0", "1"]), (3, 2, ["-1", "-1", "-1"])],
)
def test_each_worker_gets_a_gpu_of_its_own_or_none(workers, gpus, expected):
    assert [cluster.visible_gpus(i, workers, gpus) for i in range(workers)] == expected


def test_a_worker_sees_the_gpus_given_to_it(tmp_path):
    script = tmp_path / "show.py"
    script.write_text("import os\nprint('visible', os.environ['CUDA_VISIBLE_DEVICES'], flush=True)\n")
    runs = cluster.run_workers(script, 2, timeout=30, gpus=2)
    assert ["visible 0" in runs[0].output, "visible 1" in runs[1].output] == [True, True]
    runs = cluster.run_workers(script, 2, timeout=30, gpus=1)
    assert all("visible -1" in run.output for run in runs)
