"""Measure what chapter 7 (issue 23) will build on, on this machine; print it and write JSON.

Usage: python tools/probes/chapter7_probe.py OUT.json

1. The tf.data service (tfperf.runtime.servers): a preprocessing-bound pipeline (a sequential map of pure
   TensorFlow ops) read locally, and through a service of 1 and 2 worker processes ('distributed_epoch').
2. MirroredStrategy on 2 logical CPU devices against one device: a Keras fit step of the same global batch; where
   a GPU is present, also on 2 logical GPUs (4 GiB each) split from the first GPU.
3. Where nvidia-smi is present: the GPU memory each process holds while a service of 2 workers runs (do the
   service's processes take GPU memory?).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import tensorflow as tf

cpus = tf.config.list_physical_devices("CPU")
tf.config.set_logical_device_configuration(cpus[0], [tf.config.LogicalDeviceConfiguration()] * 2)
gpus = tf.config.list_physical_devices("GPU")
if gpus:
    tf.config.set_logical_device_configuration(gpus[0], [tf.config.LogicalDeviceConfiguration(memory_limit=4096)] * 2)

import keras  # noqa: E402

from tfperf.measure import timing  # noqa: E402
from tfperf.runtime import servers  # noqa: E402

ELEMENTS = 512


def pipeline(size: int = 64, batch: int | None = None) -> tf.data.Dataset:
    def heavy(i):
        x = tf.random.stateless_uniform((size, size), seed=tf.stack([i, i]))
        for _ in range(8):
            x = tf.tanh(x @ x / size)
        return tf.reduce_sum(x)

    dataset = tf.data.Dataset.range(ELEMENTS).map(heavy)  # sequential on purpose: one element at a time
    return dataset.batch(batch) if batch else dataset


def read(dataset: tf.data.Dataset) -> tuple[float, float]:
    start = timing.now()
    with tf.device("/cpu:0"):  # on a GPU machine, a service's compressed elements cannot be iterated on the GPU
        total = sum(float(tf.reduce_sum(v)) for v in dataset)
    return ELEMENTS / (timing.now() - start), total


def data_service() -> dict:
    out = {}
    for name, options in (
        ("64x64 elements, one by one", {}),
        ("256x256 elements, batches of 16", {"size": 256, "batch": 16}),
    ):
        row = {"local": [read(pipeline(**options))[0] for _ in range(3)]}
        for workers in (1, 2, 4) if (os.cpu_count() or 1) >= 8 else (1, 2):
            with servers.DataService(workers=workers) as service:
                shared = pipeline(**options).apply(
                    tf.data.experimental.service.distribute(processing_mode="distributed_epoch", service=service.target)
                )
                read(shared)  # warm-up: the workers register and build the pipeline
                row[f"service_{workers}"] = [read(shared)[0] for _ in range(3)]
        out[name] = {k: round(sorted(v)[1], 1) for k, v in row.items()}  # elements per second, median of 3
    return out


def service_gpu_memory() -> list[str] | str:
    """nvidia-smi's compute processes while a service of 2 workers runs, each with the GPU memory it holds."""
    try:
        with servers.DataService(workers=2) as service:
            list(
                tf.data.Dataset.range(4).apply(
                    tf.data.experimental.service.distribute("distributed_epoch", service.target)
                )
            )
            pids = service.pids()
            smi = subprocess.run(
                ["nvidia-smi", "--query-compute-apps=pid,used_memory", "--format=csv,noheader"],
                capture_output=True,
                text=True,
                timeout=30,
            ).stdout.splitlines()
            return [f"parent {os.getpid()}, service {list(pids)}", *smi]
    except FileNotFoundError:
        return "no nvidia-smi"


def mirrored(global_batch: int = 256, width: int = 512, steps: int = 20, kind: str = "cpu", jit=None) -> dict:
    x = tf.random.uniform((global_batch * steps, width))
    y = tf.random.uniform((global_batch * steps,), 0, 10, tf.int32)
    out = {"global_batch": global_batch, "width": width}
    for name, strategy in (
        ("one_device", tf.distribute.OneDeviceStrategy(f"/{kind}:0")),
        ("mirrored_2", tf.distribute.MirroredStrategy([f"/{kind}:0", f"/{kind}:1"])),
    ):
        with strategy.scope():
            model = keras.Sequential(
                [keras.Input((width,)), keras.layers.Dense(width, activation="relu"), keras.layers.Dense(10)]
            )
            model.compile(
                "sgd",
                keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                jit_compile="auto" if jit is None else jit,
            )
        model.fit(x, y, batch_size=global_batch, epochs=1, verbose=0)
        times = []
        for _ in range(3):
            start = timing.now()
            model.fit(x, y, batch_size=global_batch, epochs=1, verbose=0)
            times.append((timing.now() - start) / steps)
        out[name] = {
            "ms_per_step": 1e3 * sorted(times)[1],
            "replicas": strategy.num_replicas_in_sync,
            "jit_compile": str(model.jit_compile),
        }
    return out


def main() -> int:
    result = {"data_service": data_service()}
    print(json.dumps(result["data_service"], indent=1), flush=True)
    # MirroredStrategy on logical CPUs fails in a process that also has a GPU (collectives of mixed device types);
    # two strategies in one process, models of different sizes, failed with a collective shape mismatch (H100).
    result["mirrored"] = [] if gpus else [mirrored()]
    if gpus:
        result["service_gpu_memory"] = service_gpu_memory()
        print(json.dumps(result["service_gpu_memory"], indent=1), flush=True)
        for batch, width, jit in ((4096, 2048, None), (4096, 2048, False)):
            result["mirrored"].append(mirrored(batch, width, kind="gpu", jit=jit))
            print(json.dumps(result["mirrored"][-1]), flush=True)
    print(json.dumps(result["mirrored"], indent=1), flush=True)
    with open(sys.argv[1], "w") as f:
        json.dump(result, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
