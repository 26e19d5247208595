"""The device module on this machine (whatever it has), on the CPU path forced by hiding the GPUs,
and its GPU paths with TensorFlow's driver-facing calls faked."""

import dataclasses
from types import SimpleNamespace

import pytest
import tensorflow as tf

from tests.cpu_only import run_on_cpu
from tfperf.runtime import device


def test_detect_matches_what_tensorflow_sees_here():
    info = device.detect()
    gpus = tf.config.list_physical_devices("GPU")
    assert len(info.gpus) == len(gpus)
    assert info.tensorflow == tf.__version__
    if gpus:
        assert info.kind == "gpu" and info.name == info.gpus[0]
        assert f"GPU: {info.name}" in info.summary()
        assert device.device_class() == "gpu" and device.compute_device() == "/GPU:0"
    else:
        assert info.kind == "cpu" and info.gpus == ()
        assert "CPU only" in info.summary()
        assert device.device_class() == "cpu" and device.compute_device() == "/CPU:0"


def test_detect_with_the_gpus_hidden():
    seen = run_on_cpu("""
        import json
        from tfperf.runtime import device
        info = device.detect()
        print(json.dumps([info.kind, list(info.gpus), info.summary(), device.device_class(), device.compute_device()]))
    """)
    kind, gpus, summary, device_class, compute = seen
    assert kind == "cpu" and gpus == [] and "CPU only" in summary
    assert device_class == "cpu" and compute == "/CPU:0"


def cpu_info() -> device.DeviceInfo:
    """This machine's description as if TensorFlow saw no GPU (the checks below are about that case)."""
    return dataclasses.replace(device.detect(), kind="cpu", gpus=(), name=device.cpu_name())


@pytest.fixture
def fake_gpus(monkeypatch):
    """Make TensorFlow report two GPUs; record what is asked of them."""
    gpus = [
        SimpleNamespace(name="/physical_device:GPU:0", device_type="GPU"),
        SimpleNamespace(name="/physical_device:GPU:1", device_type="GPU"),
    ]
    calls = SimpleNamespace(memory_growth=[], synced=0)
    monkeypatch.setattr(tf.config, "list_physical_devices", lambda kind=None: gpus if kind == "GPU" else [])
    monkeypatch.setattr(tf.config, "list_logical_devices", lambda kind=None: gpus if kind == "GPU" else [])
    monkeypatch.setattr(tf.config.experimental, "get_device_details", lambda d: {"device_name": "NVIDIA T4"})
    monkeypatch.setattr(
        tf.config.experimental, "set_memory_growth", lambda d, on: calls.memory_growth.append((d.name, on))
    )

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


def test_sync_really_waits_for_queued_work(asynchronous_eager):
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
    info = cpu_info()
    problems = device.health_check(info, expect_gpu=True)
    assert len(problems) == 1 and "tensorflow[and-cuda]" in problems[0]
    assert device.health_check(info, expect_gpu=False) == []


def test_health_check_expects_a_gpu_when_nvidia_smi_lists_one(tmp_path, monkeypatch):
    fake = tmp_path / "nvidia-smi"
    fake.write_text("#!/bin/sh\necho 'GPU 0: Tesla T4 (UUID: GPU-123)'\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    assert device.nvidia_gpu_present()
    assert device.health_check(cpu_info())  # a GPU is expected, and TensorFlow sees none


def test_no_nvidia_smi_means_no_gpu_expected(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    assert not device.nvidia_gpu_present()


@pytest.mark.parametrize(
    "env, expected",
    [
        ({"COLAB_RELEASE_TAG": "release-colab_2026"}, "colab"),
        ({"BINDER_LAUNCH_HOST": "https://binder.example/"}, "binder"),
        ({}, "local"),
    ],
)
def test_runtime_platform(monkeypatch, env, expected):
    for var in ("COLAB_RELEASE_TAG", "BINDER_LAUNCH_HOST", "BINDER_REQUEST"):
        monkeypatch.delenv(var, raising=False)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    assert device.runtime_platform() == expected


def test_binder_note(monkeypatch):
    monkeypatch.setenv("BINDER_LAUNCH_HOST", "https://binder.example/")
    notes = device.health_check(cpu_info(), expect_gpu=False)
    assert any("Binder has no GPU" in n for n in notes)


def test_free_memory_on_a_cpu_is_what_the_system_says_is_available(monkeypatch):
    import psutil

    monkeypatch.setattr(device, "gpu_names", lambda: ())
    monkeypatch.setattr(psutil, "virtual_memory", lambda: SimpleNamespace(available=12_345_678))
    assert device.free_memory() == (12_345_678, "available to processes (psutil)")


def test_free_memory_on_a_gpu_is_nvmls_free_memory_of_gpu_0(fake_gpus, monkeypatch):
    import sys
    import types

    calls = []
    nvml = types.ModuleType("pynvml")
    nvml.nvmlInit = lambda: calls.append("init")
    nvml.nvmlShutdown = lambda: calls.append("shutdown")
    nvml.nvmlDeviceGetHandleByIndex = lambda index: calls.append(f"handle {index}") or object()
    nvml.nvmlDeviceGetMemoryInfo = lambda handle: SimpleNamespace(free=7_000_000_000, total=8_000_000_000)
    monkeypatch.setitem(sys.modules, "pynvml", nvml)
    assert device.free_memory() == (7_000_000_000, "free on GPU 0 (NVML)")
    assert calls == ["init", "handle 0", "shutdown"]


def test_free_memory_without_nvml_on_a_gpu_is_unknown(fake_gpus, monkeypatch):
    import sys
    import types

    nvml = types.ModuleType("pynvml")

    def fail():
        raise RuntimeError("NVML Shared Library Not Found")

    nvml.nvmlInit = fail
    monkeypatch.setitem(sys.modules, "pynvml", nvml)
    assert device.free_memory() is None


@pytest.mark.parametrize("before", [True, False])
def test_full_float32_turns_tensorfloat32_off_inside_and_restores_it_even_after_an_error(before):
    was = tf.config.experimental.tensor_float_32_execution_enabled()
    tf.config.experimental.enable_tensor_float_32_execution(before)
    try:
        with pytest.raises(RuntimeError, match="inside"):
            with device.full_float32():
                assert not tf.config.experimental.tensor_float_32_execution_enabled()
                raise RuntimeError("inside")
        assert tf.config.experimental.tensor_float_32_execution_enabled() is before
    finally:
        tf.config.experimental.enable_tensor_float_32_execution(was)
