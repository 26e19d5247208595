"""Measure what chapter 6 (issue 20) will build on, on this device; print it and write JSON.

Usage: python tools/probes/chapter6_probe.py OUT.json [--size full|ci]

1. The device card (tfperf.measure.ceilings).
2. XLA fusion: a chain of elementwise ops, eager vs tf.function vs tf.function(jit_compile=True).
3. Keras fit throughput of one MLP under the float32, mixed_float16 and mixed_bfloat16 policies.
"""

from __future__ import annotations

import argparse
import json
import sys

from tfperf.measure import ceilings, timing
from tfperf.runtime import device, logs


def fusion(elements: int) -> dict:
    tf = logs.tensorflow()
    with tf.device(device.compute_device()):
        x = tf.random.uniform((elements,), 0.5, 1.5)

    def chain(v):
        for _ in range(8):
            v = v * 1.0001 + 0.5
            v = tf.nn.relu(v - 0.25)
        return v

    graph = tf.function(chain)
    fused = tf.function(chain, jit_compile=True)
    out = {}
    for name, fn in [("eager", chain), ("graph", graph), ("xla", fused)]:
        t = timing.measure(lambda fn=fn: fn(x), repeats=5, warmup=2).median
        out[name] = {"seconds": t, "bytes_if_once": 2 * 4 * elements / t}
    ok = float(tf.reduce_max(tf.abs(graph(x) - fused(x))))
    out["max_abs_difference_graph_vs_xla"] = ok
    return out


def mixed_precision(batch: int, width: int, steps: int) -> dict:
    tf = logs.tensorflow()
    import keras
    import numpy as np

    rng = np.random.default_rng(0)
    x = rng.uniform(0.5, 1.5, (batch * steps, width)).astype("float32")
    y = rng.integers(0, 10, (batch * steps,))
    out = {}
    for policy in ("float32", "mixed_float16", "mixed_bfloat16"):
        keras.mixed_precision.set_global_policy(policy)
        keras.utils.set_random_seed(0)
        model = keras.Sequential(
            [
                keras.Input((width,)),
                keras.layers.Dense(width, activation="relu"),
                keras.layers.Dense(width, activation="relu"),
                keras.layers.Dense(width, activation="relu"),
                keras.layers.Dense(10),
                keras.layers.Activation("softmax", dtype="float32"),
            ]
        )
        model.compile(optimizer="sgd", loss="sparse_categorical_crossentropy")
        ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(batch).cache().prefetch(2)
        model.fit(ds, epochs=1, verbose=0)  # compile + warm up
        device.sync()
        times = []
        for _ in range(3):
            start = timing.now()
            model.fit(ds, epochs=1, verbose=0)
            device.sync()
            times.append(timing.now() - start)
        times.sort()
        out[policy] = {
            "samples_per_second": batch * steps / times[1],
            "jit_compile": str(model.jit_compile),
            "optimizer": type(model.optimizer).__name__,
        }
    keras.mixed_precision.set_global_policy("float32")
    return out


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--size", default="full")
    args = parser.parse_args()
    full = args.size == "full"
    result = {}
    t0 = timing.now()
    card = ceilings.measure(args.size, progress=lambda m: print("card:", m, flush=True))
    result["card"] = card.to_dict()
    print(json.dumps(result["card"]["ceilings"], indent=1), flush=True)
    print("fusion", flush=True)
    result["fusion"] = fusion(2**26 if full and device.device_class() == "gpu" else 2**22)
    print(json.dumps(result["fusion"], indent=1), flush=True)
    print("mixed precision", flush=True)
    gpu = device.device_class() == "gpu"
    result["mixed_precision"] = mixed_precision(
        batch=1024 if gpu else 256, width=4096 if gpu else 512, steps=50 if gpu else 10
    )
    print(json.dumps(result["mixed_precision"], indent=1), flush=True)
    result["seconds"] = timing.now() - t0
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
