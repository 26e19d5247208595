"""tfperf.runtime.replicas: the devices of a model's replicas in one process, made before TensorFlow starts."""

import json
import subprocess
import sys

import pytest

from tfperf.runtime import replicas


@pytest.mark.parametrize(
    "count, gpus, kind, split, real",
    [
        (2, 0, "CPU", 2, False),  # no GPU: logical CPUs, sharing the cores
        (4, 0, "CPU", 4, False),
        (2, 1, "GPU", 2, False),  # one GPU: split, never logical CPUs beside a GPU
        (4, 2, "GPU", 4, False),  # too few GPUs: the first one split
        (2, 2, "GPU", 1, True),  # enough GPUs: the GPUs themselves
        (2, 8, "GPU", 1, True),
    ],
)
def test_the_plan_prefers_real_gpus_then_a_split_gpu_then_the_cpu(count, gpus, kind, split, real):
    chosen = replicas.plan(count, gpus)
    assert (chosen.kind, chosen.count, chosen.split, chosen.real) == (kind, count, split, real)
    assert ("never a speedup" in chosen.note) is not real


def test_a_plan_needs_a_replica():
    with pytest.raises(ValueError, match="at least 1"):
        replicas.plan(0, 0)


def _in_a_fresh_process(code: str) -> dict:
    """Run ``code`` in a new Python (TensorFlow not started) and return the JSON it printed last."""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_the_setup_cell_makes_the_devices_and_a_strategy_over_them():
    got = _in_a_fresh_process(
        "import json\n"
        "from tfperf import course\n"
        "from tfperf.runtime import replicas\n"
        "course.start(replicas=2)\n"  # chapter 7's setup cell
        "chosen, names = replicas.configure(2)\n"  # the chapter's next cell
        "again = replicas.configure(2)[1]\n"  # a second run of the setup cell
        "s = replicas.strategy(names)\n"
        "print(json.dumps({'kind': chosen.kind, 'names': names, 'again': again, 'replicas': s.num_replicas_in_sync,"
        " 'same': s is replicas.strategy(list(names)), 'extended': sorted(s.extended.worker_devices)}))\n"
    )
    assert len(got["names"]) == 2 and got["again"] == got["names"]
    assert all(f"{got['kind']}:" in name for name in got["names"])
    assert got["replicas"] == 2 and got["same"]
    assert [n.rsplit("device:", 1)[1] for n in got["extended"]] == [n.rsplit("device:", 1)[1] for n in got["names"]]


@pytest.mark.slow
def test_configure_after_tensorflow_started_says_to_restart_the_kernel():
    got = _in_a_fresh_process(
        "import json\n"
        "import tensorflow as tf\n"
        "from tfperf.runtime import replicas\n"
        "split = replicas.plan(2, len(tf.config.list_physical_devices('GPU'))).split\n"
        "tf.constant(1.0) + 1.0\n"  # the runtime starts with the first op
        "try:\n"
        "    replicas.configure(2)\n"
        "    print(json.dumps({'raised': None, 'split': split}))\n"
        "except replicas.TooLate as err:\n"
        "    print(json.dumps({'raised': str(err), 'split': split}))\n"
    )
    if got["split"] == 1:  # two GPUs or more: nothing to split, nothing too late
        assert got["raised"] is None
    else:
        assert got["raised"] and "Restart the kernel" in got["raised"]
