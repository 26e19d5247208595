"""What we run on: the device TensorFlow uses, where the notebook runs, and its health.

GPU code paths follow TensorFlow's documentation (``tf.config.list_physical_devices``,
``tf.config.experimental.set_memory_growth``, ``tf.test.experimental.sync_devices``).
On a machine without a GPU every function here still runs; only the driver calls
themselves are skipped.
"""

from __future__ import annotations

import contextlib
import os
import platform as _platform
import shutil
import subprocess
import sys
from dataclasses import dataclass

from tfperf.runtime import logs


@dataclass(frozen=True)
class DeviceInfo:
    """The device TensorFlow computes on, and where the notebook runs."""

    kind: str  #: "gpu" or "cpu": the device class targets are chosen for
    name: str  #: e.g. "NVIDIA A100-SXM4-40GB" or the CPU model
    gpus: tuple[str, ...]  #: names of all GPUs TensorFlow sees
    cpu_count: int
    platform: str  #: "colab", "binder" or "local"
    tensorflow: str  #: TensorFlow version

    def summary(self) -> str:
        where = {"colab": "Google Colab", "binder": "Binder", "local": "this machine"}[self.platform]
        if self.kind == "gpu":
            extra = f" (+{len(self.gpus) - 1} more)" if len(self.gpus) > 1 else ""
            what = f"GPU: {self.name}{extra}"
        else:
            what = f"CPU only: {self.name}, {self.cpu_count} cores"
        return f"TensorFlow {self.tensorflow} on {where}. Computing on {what}."


def runtime_platform() -> str:
    """``"colab"``, ``"binder"`` or ``"local"``."""
    if "google.colab" in sys.modules or "COLAB_RELEASE_TAG" in os.environ:
        return "colab"
    if "BINDER_LAUNCH_HOST" in os.environ or "BINDER_REQUEST" in os.environ:
        return "binder"
    return "local"


def cpu_name() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return _platform.processor() or _platform.machine() or "unknown CPU"


def gpu_names() -> tuple[str, ...]:
    """Names of the GPUs TensorFlow can see (empty on a CPU-only machine)."""
    tf = logs.tensorflow()
    names = []
    for gpu in tf.config.list_physical_devices("GPU"):
        details = tf.config.experimental.get_device_details(gpu)
        names.append(details.get("device_name", gpu.name))
    return tuple(names)


def detect() -> DeviceInfo:
    """Describe the device TensorFlow will compute on."""
    tf = logs.tensorflow()
    gpus = gpu_names()
    return DeviceInfo(
        kind="gpu" if gpus else "cpu",
        name=gpus[0] if gpus else cpu_name(),
        gpus=gpus,
        cpu_count=os.cpu_count() or 1,
        platform=runtime_platform(),
        tensorflow=tf.__version__,
    )


def device_class() -> str:
    """``"gpu"`` if TensorFlow sees a GPU, else ``"cpu"`` (the key of the targets file)."""
    return "gpu" if gpu_names() else "cpu"


def compute_device() -> str:
    """The TensorFlow device name to compute on: ``"/GPU:0"`` if there is a GPU, else ``"/CPU:0"``."""
    return "/GPU:0" if gpu_names() else "/CPU:0"


@contextlib.contextmanager
def full_float32():
    """float32 matmuls and convolutions in full float32 inside the block, TensorFloat-32's setting restored after.

    TensorFlow runs them with TensorFloat-32 by default on GPUs that have it (Ampere and later): inputs rounded to
    a 10-bit mantissa (``tf.config.experimental.enable_tensor_float_32_execution``). Two correct versions of a
    training run that take different kernels then drift apart (on an H100, weights 7.5e-4 apart after 100 steps of
    chapter 8's script); in full float32 only the order of their sums differs. Nothing changes on a CPU.
    """
    import tensorflow as tf

    was = tf.config.experimental.tensor_float_32_execution_enabled()
    tf.config.experimental.enable_tensor_float_32_execution(False)
    try:
        yield
    finally:
        tf.config.experimental.enable_tensor_float_32_execution(was)


def enable_memory_growth() -> list[str]:
    """Ask TensorFlow to allocate GPU memory as needed instead of mapping nearly all of it.

    Must run before the first GPU operation. Returns one note per GPU that could not be
    configured (because it was already initialized); an empty list means all is well.
    """
    tf = logs.tensorflow()
    notes = []
    for gpu in tf.config.list_physical_devices("GPU"):
        try:
            tf.config.experimental.set_memory_growth(gpu, True)
        except RuntimeError as err:  # raised once the GPU has been initialized
            notes.append(f"{gpu.name}: memory growth not set ({err}). Restart the kernel and run the setup cell first.")
    return notes


def free_memory() -> tuple[int, str] | None:
    """Bytes free on the device TensorFlow computes on, and where they were read: on a GPU, NVML's free memory of
    GPU 0 (``pynvml``); on a CPU, the memory the operating system says is available (``psutil``). None when
    neither can be read."""
    if gpu_names():
        try:
            import pynvml

            pynvml.nvmlInit()
            try:
                free = pynvml.nvmlDeviceGetMemoryInfo(pynvml.nvmlDeviceGetHandleByIndex(0)).free
            finally:
                pynvml.nvmlShutdown()
            return int(free), "free on GPU 0 (NVML)"
        except Exception:  # noqa: BLE001 (no pynvml, or NVML cannot be read here)
            return None
    try:
        import psutil

        return int(psutil.virtual_memory().available), "available to processes (psutil)"
    except Exception:  # noqa: BLE001
        return None


def sync() -> None:
    """Wait until every device has finished the work queued so far.

    Work can still be pending when an operation returns in two cases: kernels queued on
    a GPU's stream (GPUs always run them asynchronously), and, on any device, operations
    queued by asynchronous eager execution
    (``tf.config.experimental.set_synchronous_execution(False)``). Without a sync, a timer
    measures how fast work is *queued*, not how fast it runs.
    ``tf.test.experimental.sync_devices()`` waits for both; it is called whenever either
    can exist. An error raised by queued asynchronous work surfaces here.
    """
    tf = logs.tensorflow()
    if tf.config.list_logical_devices("GPU") or not tf.config.experimental.get_synchronous_execution():
        tf.test.experimental.sync_devices()


def nvidia_gpu_present() -> bool:
    """Whether the NVIDIA driver reports a GPU (``nvidia-smi -L``), whatever TensorFlow sees."""
    exe = shutil.which("nvidia-smi")
    if not exe:
        return False
    try:
        out = subprocess.run([exe, "-L"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return out.returncode == 0 and "GPU" in out.stdout


def health_check(info: DeviceInfo, *, expect_gpu: bool | None = None) -> list[str]:
    """Problems with the set-up, each as one sentence saying what to do; empty if none.

    ``expect_gpu=None`` expects a GPU exactly when the NVIDIA driver reports one.
    """
    if expect_gpu is None:
        expect_gpu = nvidia_gpu_present()
    problems = []
    if expect_gpu and info.kind != "gpu":
        problems.append(
            "A GPU was expected but TensorFlow sees none, so everything will run on the CPU. "
            "Likely causes: the CPU-only wheel is installed (pip show tensorflow-cpu), or the "
            "CUDA libraries do not match this TensorFlow (install tensorflow[and-cuda] of the "
            "same version). On Colab: Runtime > Change runtime type > GPU."
        )
    if info.kind == "cpu" and info.platform == "colab" and not expect_gpu:
        problems.append(
            "This Colab runtime has no GPU, so everything runs on the CPU. To use one: "
            "Runtime > Change runtime type > a GPU (e.g. T4) > Save, then run the notebook again from this cell."
        )
    if info.kind == "cpu" and info.platform == "binder":
        problems.append(
            "Binder has no GPU: the experiments run on the CPU. The effects are smaller than on "
            "a GPU but every lesson still shows them; the targets used for grading are the CPU ones."
        )
    return problems
