"""The device module on a CPU machine, and its GPU paths with TensorFlow's driver-facing calls faked."""

from types import SimpleNamespace

import pytest
import tensorflow as tf

from tfperf import device


def test_detect_on_this_cpu_machine():
    info = device.detect()
    assert info.kind == "cpu" and info.gpus == ()
    assert info.tensorflow == tf.__version__
    assert "CPU only" in info.summary()
    assert device.device_class() == "cpu"
    assert device.compute_device() == "/CPU:0"


@pytest.fixture
def fake_gpus(monkeypatch):
    """Make TensorFlow report two GPUs; record what is asked of them."""
    gpus = [SimpleNamespace(name="/physical_device:GPU:0", device_type="GPU"),
            SimpleNamespace(name="/physical_device:GPU:1", device_type="GPU")]
    calls = SimpleNamespace(memory_growth=[], synced=0)
    monkeypatch.setattr(tf.config, "list_physical_devices", lambda kind=None: gpus if kind == "GPU" else [])
    monkeypatch.setattr(tf.config, "list_logical_devices", lambda kind=None: gpus if kind == "GPU" else [])
    monkeypatch.setattr(tf.config.experimental, "get_device_details", lambda d: {"device_name": "NVIDIA T4"})
    monkeypatch.setattr(tf.config.experimental, "set_memory_growth", lambda d, on: calls.memory_growth.append((d.name, on)))

    def sync_devices():
        calls.synced += 1
    monkeypatch.setattr(tf.test.experimental, "sync_devices", sync_devices)
    return calls


def test_detect_reports_the_gpu(fake_gpus):
    info = device.detect()
    assert info.kind == "gpu" and info.name == "NVIDIA T4" and len(info.gpus) == 2
    assert "GPU: NVIDIA T4 (+1 more)" in info.summary()
    assert device.compute_device() == "/GPU:0"


def test_memory_growth_is_set_on_every_gpu(fake_gpus):
    assert device.enable_memory_growth() == []
    assert fake_gpus.memory_growth == [("/physical_device:GPU:0", True), ("/physical_device:GPU:1", True)]


def test_memory_growth_after_initialization_is_explained(fake_gpus, monkeypatch):
    def too_late(d, on):
        raise RuntimeError("Physical devices cannot be modified after being initialized")
    monkeypatch.setattr(tf.config.experimental, "set_memory_growth", too_late)
    notes = device.enable_memory_growth()
    assert len(notes) == 2 and "Restart the kernel" in notes[0]


def test_sync_waits_for_gpus_only_when_there_are_some(fake_gpus, monkeypatch):
    device.sync()
    assert fake_gpus.synced == 1
    monkeypatch.setattr(tf.config, "list_logical_devices", lambda kind=None: [])
    device.sync()
    assert fake_gpus.synced == 1  # a CPU in the default (synchronous) mode: nothing queued


def test_sync_waits_for_asynchronous_eager_work_without_a_gpu(fake_gpus, monkeypatch):
    monkeypatch.setattr(tf.config, "list_logical_devices", lambda kind=None: [])
    monkeypatch.setattr(tf.config.experimental, "get_synchronous_execution", lambda: False)
    device.sync()
    assert fake_gpus.synced == 1


@pytest.fixture
def asynchronous_eager():
    tf.config.experimental.set_synchronous_execution(False)
    try:
        yield
    finally:
        tf.config.experimental.set_synchronous_execution(True)


def test_sync_really_waits_for_queued_work_on_this_cpu(asynchronous_eager):
    # In asynchronous mode an operation returns before it has run: device.sync() must wait for it.
    import time

    done = []

    def slow(x):
        time.sleep(0.3)
        done.append(True)
        return x

    tf.py_function(slow, [tf.constant(1.0)], tf.float32)
    assert done == []  # queued, not run yet
    device.sync()
    assert done == [True]


def test_health_check_when_a_gpu_is_expected_but_missing():
    info = device.detect()
    problems = device.health_check(info, expect_gpu=True)
    assert len(problems) == 1 and "tensorflow[and-cuda]" in problems[0]
    assert device.health_check(info, expect_gpu=False) == []


def test_health_check_expects_a_gpu_when_nvidia_smi_lists_one(tmp_path, monkeypatch):
    fake = tmp_path / "nvidia-smi"
    fake.write_text("#!/bin/sh\necho 'GPU 0: Tesla T4 (UUID: GPU-123)'\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    assert device.nvidia_gpu_present()
    assert device.health_check(device.detect())  # a GPU is expected, and TensorFlow sees none


def test_no_nvidia_smi_means_no_gpu_expected(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    assert not device.nvidia_gpu_present()


@pytest.mark.parametrize("env, expected", [
    ({"COLAB_RELEASE_TAG": "release-colab_2026"}, "colab"),
    ({"BINDER_LAUNCH_HOST": "https://binder.example/"}, "binder"),
    ({}, "local"),
])
def test_runtime_platform(monkeypatch, env, expected):
    for var in ("COLAB_RELEASE_TAG", "BINDER_LAUNCH_HOST", "BINDER_REQUEST"):
        monkeypatch.delenv(var, raising=False)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    assert device.runtime_platform() == expected


def test_binder_note(monkeypatch):
    monkeypatch.setenv("BINDER_LAUNCH_HOST", "https://binder.example/")
    notes = device.health_check(device.detect(), expect_gpu=False)
    assert any("Binder has no GPU" in n for n in notes)
