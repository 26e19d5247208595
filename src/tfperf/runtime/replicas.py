"""The devices that hold the replicas of one model in one process (chapter 7), made before TensorFlow starts.

``tf.distribute.MirroredStrategy`` keeps one copy of the model on each device it is given. Which devices a
machine can give, in the order :func:`plan` prefers them:

- as many GPUs as replicas: real replicas, each with its own memory and compute;
- one GPU (or too few): the first GPU split into logical GPUs, each with a memory limit;
- no GPU: the CPU split into logical CPUs.

Logical devices of one physical device share its compute: they show what replication and the all-reduce cost,
never a speedup. A process with a GPU never gets logical CPUs here: on an H100, a ``MirroredStrategy`` over two
logical CPUs failed there ("joining a group with incompatible device type CPU",
``docs/measurements-gpu-nvidia-h100.md``).

TensorFlow fixes its logical devices when its runtime starts (the first op, or listing the logical devices):
:func:`configure` must run before that (``tf.config.set_logical_device_configuration``). Strategies are made
once per set of devices and kept (:func:`strategy`): on that H100, a second ``MirroredStrategy`` over the same
devices failed its all-reduce ("Shape mismatch in the collective instance 100") when it trained a model of
another size than the first one had.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

#: Memory of each logical GPU split from one GPU, in MB (``LogicalDeviceConfiguration(memory_limit=...)``).
GPU_MEMORY_MB = 2048

_strategies: dict[tuple[str, ...], Any] = {}


class TooLate(RuntimeError):
    """TensorFlow's runtime started before the replicas' devices were made."""


@dataclass(frozen=True)
class Plan:
    """The devices of ``count`` replicas: of ``kind`` ("GPU" or "CPU"), ``split`` logical devices made from the
    first physical one (1: the physical devices themselves), and what a learner should know about them."""

    kind: str
    count: int
    split: int
    note: str

    @property
    def real(self) -> bool:
        """Whether each replica has a device of its own (none shares its compute)."""
        return self.split == 1


def plan(count: int, gpus: int, gpu_memory_mb: int = GPU_MEMORY_MB) -> Plan:
    """Which devices ``count`` replicas get on a machine with ``gpus`` GPUs."""
    if count < 1:
        raise ValueError("count must be at least 1")
    if gpus >= count:
        return Plan("GPU", count, 1, f"{count} of this machine's {gpus} GPUs: each replica has a GPU of its own.")
    if gpus:
        return Plan(
            "GPU",
            count,
            count,
            f"this machine's first GPU split into {count} logical GPUs of {gpu_memory_mb} MB each: the replicas share "
            f"one GPU's compute and memory bandwidth, so they show what replication costs, never a speedup.",
        )
    return Plan(
        "CPU",
        count,
        count,
        f"this machine's CPU split into {count} logical CPUs: the replicas share the same cores, so they show what "
        f"replication costs, never a speedup.",
    )


def configure(count: int = 2, gpu_memory_mb: int = GPU_MEMORY_MB) -> tuple[Plan, list[str]]:
    """Make the devices of ``count`` replicas (see :func:`plan`); their plan and names, for ``MirroredStrategy``.

    Must run before TensorFlow's runtime starts; running it again with the same arguments is harmless.
    """
    import tensorflow as tf

    gpus = tf.config.list_physical_devices("GPU")
    chosen = plan(count, len(gpus), gpu_memory_mb)
    physical = gpus[0] if chosen.kind == "GPU" else tf.config.list_physical_devices("CPU")[0]
    if chosen.split > 1:
        limit = gpu_memory_mb if chosen.kind == "GPU" else None
        try:
            tf.config.set_logical_device_configuration(
                physical, [tf.config.LogicalDeviceConfiguration(memory_limit=limit) for _ in range(chosen.split)]
            )
        except RuntimeError as err:
            raise TooLate(
                f"TensorFlow started before the replicas' devices were made ({err}). Restart the kernel and run the "
                f"setup cells first, before any other cell."
            ) from None
    names = [d.name for d in tf.config.list_logical_devices(chosen.kind)][:count]
    if len(names) < count:
        raise TooLate(
            f"TensorFlow has {len(names)} {chosen.kind} device(s), not the {count} the replicas need: it started "
            f"before they were made. Restart the kernel and run the setup cells first."
        )
    return chosen, names


def strategy(devices: list[str]) -> Any:
    """The ``MirroredStrategy`` over ``devices``: made at the first call, the same object after (see above)."""
    import tensorflow as tf

    key = tuple(devices)
    if key not in _strategies:
        _strategies[key] = tf.distribute.MirroredStrategy(list(devices))
    return _strategies[key]
