"""What every notebook's setup cell calls."""

from __future__ import annotations

from tfperf import device, logs, sizes
from tfperf.grading import guard


def start() -> device.DeviceInfo:
    """Prepare TensorFlow for the course and say what we are running on.

    Quiets TensorFlow's C++ logging, turns on GPU memory growth (before the GPU is
    first used), prints the device, the experiment size and any set-up problems, and
    takes the snapshot that the checks compare the kernel against (:mod:`tfperf.grading.guard`).
    """
    notes = logs.quietly(device.enable_memory_growth)  # before the GPU is first used
    info = logs.quietly(device.detect)
    print(info.summary())
    size = sizes.course_size()
    print(f"Experiment size: {size} ({sizes.DESCRIPTIONS[size]}).")
    for note in notes + device.health_check(info):
        print(f"Note: {note}")
    guard.arm()
    return info
