"""step_memory reads XLA's plan of a compiled step: its arguments' bytes exactly, temporaries that grow with the
batch; a function that XLA does not compile is refused. Beside it, the allocator statistics that chapter 6's cell
prints with it: on a CPU, only where oneDNN's operations are on."""

import os
import platform
import subprocess
import sys

import pytest

tf = pytest.importorskip("tensorflow")
from tfperf.measure.step_memory import step_memory  # noqa: E402


def dense_step():
    w = tf.Variable(tf.ones([64, 32]))

    @tf.function(jit_compile=True)
    def step(x):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.nn.relu(x @ w) ** 2)
        w.assign_sub(0.01 * tape.gradient(loss, w))
        return loss

    return step, w


@pytest.mark.parametrize("batch", [8, 512])
def test_the_arguments_are_the_parameters_to_the_byte(batch):
    step, w = dense_step()
    found = step_memory(step, (tf.ones([batch, 64]),))
    assert found["parameters"] == batch * 64 * 4 + 64 * 32 * 4  # the batch, and the variable the step captures
    assert found["total"] == found["parameters"] + found["results"] + found["temporaries"]


def test_the_temporaries_grow_with_the_batch():
    step, _ = dense_step()
    small, large = (step_memory(step, (tf.ones([b, 64]),))["temporaries"] for b in (16, 4096))
    assert large > 64 * small / 2  # 256 times the samples: the activations grow with them


def test_a_step_that_xla_does_not_compile_is_refused():
    with pytest.raises(ValueError, match="jit_compile=True"):
        step_memory(tf.function(lambda x: x * 2), (tf.ones([4]),))


_MEMORY_INFO = """
import tensorflow as tf
tf.ones([256, 256])
try:
    print("answered", sorted(tf.config.experimental.get_memory_info("CPU:0")))
except ValueError as err:
    print("raised", err)
"""


@pytest.mark.skipif(
    platform.system() != "Linux" or platform.machine() != "x86_64",
    reason="TensorFlow's oneDNN default is read on x86 Linux",
)
def test_allocator_statistics_on_a_cpu_exist_only_with_onednn_operations_on():
    """What chapter 6, section 5 (and docs/claims.md) says: on a CPU, ``get_memory_info`` answers where oneDNN's
    operations are on and raises a ValueError where they are off, whatever this machine's default
    (``TF_ENABLE_ONEDNN_OPTS`` overrides it both ways). On a CPU without AVX-512 the chapter's cell raised it."""

    def printed(onednn: str) -> str:
        env = dict(os.environ, TF_ENABLE_ONEDNN_OPTS=onednn, TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="")
        done = subprocess.run(
            [sys.executable, "-c", _MEMORY_INFO], env=env, capture_output=True, text=True, timeout=300
        )
        assert done.returncode == 0, done.stderr
        return done.stdout.strip().splitlines()[-1]

    assert printed("1") == "answered ['current', 'peak']"
    assert printed("0") == "raised Allocator stats not available for device 'CPU:0'"


def test_what_a_call_held_is_its_peak_not_what_it_keeps():
    """resident_peak_while (peak_while on a CPU without oneDNN's operations): 40 MB allocated and freed inside the
    call count; what was held before it does not."""
    import numpy as np

    from tfperf.measure.step_memory import resident_peak_while as peak_while

    before = np.ones(5_000_000)  # 40 MB held before the call

    def call():
        scratch = np.ones(5_000_000)  # 40 MB, freed when it returns
        return float(scratch[0])

    result, held, read = peak_while(call)
    assert result == 1.0 and "VmHWM" in read
    assert 38e6 < held < 48e6, held
    _, idle, _ = peak_while(lambda: None)
    assert idle < 4e6, idle
    del before


def test_a_bigger_batch_holds_more_as_its_plan_says():
    """held_by_batch: the step held more at the larger batch, as XLA planned, and each record has a throughput."""
    from tfperf.experiments import device_ceilings as dc

    small, large = dc.held_by_batch([64, 2048], width=256, depth=2, dtypes=("float32",))
    from tfperf.runtime import device

    try:  # where TensorFlow keeps statistics for the device (a GPU; a CPU with oneDNN's operations on), they are read
        tf.config.experimental.reset_memory_stats(device.compute_device().strip("/"))
        kind = "GPU" if device.device_class() == "gpu" else "CPU (oneDNN's)"
        expected = f"TensorFlow's {kind} allocator"
    except ValueError:
        expected = "the process's peak resident memory (VmHWM)"
    assert small["read"] == large["read"] == expected
    assert large["planned"] > 4 * small["planned"]
    assert large["held"] > 2 * small["held"] and large["held"] > large["planned"] / 2, (small, large)
    assert small["samples_per_second"] > 0 and large["samples_per_second"] > 0


_HELD_AFTER_A_POOL = """
import tensorflow as tf
from tfperf.experiments import device_ceilings as dc
pool = tf.ones([8192, 2048]) + 1.0  # 64 MB through TensorFlow's allocator, then freed
del pool
large = dc.held_by_batch([2048], width=256, depth=2, dtypes=("float32",))[0]
print(large["held"], large["planned"], large["read"])
"""


@pytest.mark.skipif(
    platform.system() != "Linux" or platform.machine() != "x86_64",
    reason="TensorFlow's oneDNN switch is read on x86 Linux",
)
def test_where_onednn_pools_freed_blocks_the_allocator_s_own_peak_is_read():
    """With oneDNN's operations on (the default on CPUs with AVX512_VNNI, AVX512_BF16, AVX_VNNI or AMX), TensorFlow's
    CPU allocator keeps freed blocks for reuse: after a large tensor was freed, a step reuses its memory and the
    process's peak resident memory hardly moves (under 1 MB for a 10.9 MB plan). Its own statistics see it."""
    env = dict(os.environ, TF_ENABLE_ONEDNN_OPTS="1", TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="")
    done = subprocess.run(
        [sys.executable, "-c", _HELD_AFTER_A_POOL], env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    held, planned, read = done.stdout.strip().splitlines()[-1].split(" ", 2)
    assert "oneDNN" in read
    assert int(planned) / 2 < int(held) < 2 * int(planned), done.stdout
