"""What every notebook's setup cell calls."""

from __future__ import annotations

import subprocess
import sys
from importlib import metadata

from tfperf.grading import calls, guard
from tfperf.runtime import as_on_gpu, device, logs, sizes
from tfperf.runtime import replicas as replica_devices

#: The TensorFlow the course is tested with (requirements/tensorflow-*.txt pin it; a test keeps them equal).
TESTED_TENSORFLOW = "2.21.0"
#: TensorFlow versions the course accepts as they are: (major, minor) at least, and below.
TENSORFLOW_RANGE = ((2, 21), (2, 22))


def in_range(version: str) -> bool:
    """Whether a TensorFlow version (e.g. ``"2.21.0"``, ``"2.21.0rc1"``) is in :data:`TENSORFLOW_RANGE`."""
    parts = version.split(".")
    try:
        major_minor = (int(parts[0]), int(parts[1]))
    except (IndexError, ValueError):
        return False
    low, high = TENSORFLOW_RANGE
    return low <= major_minor < high


def installed_tensorflow() -> str | None:
    """The installed TensorFlow's version (any of its distributions), without importing it."""
    for name in ("tensorflow", "tensorflow-cpu"):
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return None


def prepare_colab(run=subprocess.run) -> list[str]:
    """On Colab, keep its TensorFlow if it is in the course's range; else install the tested one.

    Must run before TensorFlow is imported. Returns notes for the learner.
    """
    version = installed_tensorflow()
    if version and in_range(version):
        return []
    if "tensorflow" in sys.modules:
        return [
            f"TensorFlow {version} is outside the range this course is tested with, and it is already "
            "imported: Runtime > Restart session, then run this cell first."
        ]
    print(
        f"Colab has TensorFlow {version or '(none)'}; installing {TESTED_TENSORFLOW}, which this course is "
        "tested with (a minute or two)...",
        flush=True,
    )
    run([sys.executable, "-m", "pip", "install", "--quiet", f"tensorflow[and-cuda]=={TESTED_TENSORFLOW}"], check=True)
    return [
        f"Installed TensorFlow {TESTED_TENSORFLOW} (Colab had {version or 'none'}). If a later cell fails to "
        "import a package, Runtime > Restart session, then run the notebook again from this cell."
    ]


def start(replicas: int | None = None) -> device.DeviceInfo:
    """Prepare TensorFlow for the course and say what we are running on.

    ``replicas``: first make the devices of that many replicas (:func:`tfperf.runtime.replicas.configure`, which
    must run before TensorFlow starts) and say what they can show.

    On Colab, first makes sure TensorFlow is in the course's range (:func:`prepare_colab`).
    Quiets TensorFlow's C++ logging, turns on GPU memory growth (before the GPU is
    first used), prints the device, the experiment size and any set-up problems, and
    takes the snapshot that the checks compare the kernel against (:mod:`tfperf.grading.guard`).
    With ``TFPERF_AS_ON_GPU=1``, first makes the kernel behave as on a GPU machine where a CPU
    can (:mod:`tfperf.runtime.as_on_gpu`).
    """
    notes = prepare_colab() if device.runtime_platform() == "colab" else []
    plan = None
    if replicas:
        plan, _ = logs.quietly(lambda: replica_devices.configure(replicas))
        # tf.distribute logs routine INFO lines (one per strategy made, one per reduce traced): warnings only
        logs.tensorflow().get_logger().setLevel("WARNING")
    if plan is None or not (plan.kind == "GPU" and plan.split > 1):  # a split GPU's devices have a fixed memory
        notes += logs.quietly(device.enable_memory_growth)  # before the GPU is first used
    notes += logs.quietly(as_on_gpu.apply)  # before any model is compiled, before the guard's snapshot
    info = logs.quietly(device.detect)
    print(info.summary())
    size = sizes.course_size()
    print(f"Experiment size: {size} ({sizes.DESCRIPTIONS[size]}).")
    if plan is not None:
        print(f"Replicas: {plan.count}, on {plan.note}")
    for note in notes + device.health_check(info):
        print(f"Note: {note}")
    calls.let_run_all_continue()  # in a notebook, Run All goes past the Checks of exercises not written yet
    guard.arm()
    return info
