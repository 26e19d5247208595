"""Measure what chapter 6's mixed-precision speed check builds on, on this device; print it and write JSON.

Usage: python tools/probes/mixed_speed_probe.py OUT.json

1. The gate (grading.precision.matmul_gain): float16 and bfloat16 against float32 as TensorFlow runs it.
2. One training step (``train_on_batch``) of chapter 6's classifier at several widths and batches, in float32,
   mixed_float16 and mixed_bfloat16: interleaved pairs (timing.compare), fixed inputs, synced; the losses of the
   first step from the same initial weights.
"""

from __future__ import annotations

import json
import sys

import numpy as np

from tfperf.grading import precision
from tfperf.measure import timing
from tfperf.runtime import device, logs

FEATURES, CLASSES = 32, 4


def build(policy: str, width: int):
    import keras

    keras.config.set_dtype_policy(policy)
    try:
        keras.utils.set_random_seed(0)
        model = keras.Sequential(
            [
                keras.Input((FEATURES,)),
                keras.layers.Dense(width, activation="relu"),
                keras.layers.Dense(width, activation="relu"),
                keras.layers.Dense(CLASSES),
                keras.layers.Activation("softmax", dtype="float32"),
            ]
        )
    finally:
        keras.config.set_dtype_policy("float32")
    model.compile(optimizer=keras.optimizers.Adam(1e-3), loss="sparse_categorical_crossentropy")
    return model


def main() -> int:
    logs.tensorflow()
    out: dict = {"device": logs.quietly(device.detect).summary(), "gate": {}, "steps": []}
    for dtype in ("float16", "bfloat16"):
        start = timing.now()
        gain, n = precision.matmul_gain(dtype)
        out["gate"][dtype] = {"gain": gain, "n": n, "seconds": timing.now() - start}
        print("gate", dtype, out["gate"][dtype], flush=True)
    rng = np.random.default_rng(0)
    gpu = device.device_class() == "gpu"
    for width, batch in [(1024, 8192), (2048, 8192), (4096, 2048), (4096, 8192), (8192, 8192)] if gpu else [(256, 512)]:
        x = rng.standard_normal((batch, FEATURES)).astype(np.float32)
        y = rng.integers(0, CLASSES, batch).astype(np.int32)
        start = timing.now()
        models = {p: build(p, width) for p in ("float32", "mixed_float16", "mixed_bfloat16")}
        first = {p: float(m.train_on_batch(x, y)) for p, m in models.items()}
        row = {"width": width, "batch": batch, "first_loss": first, "jit_compile": str(models["float32"].jit_compile)}
        base = models["float32"]
        for p in ("mixed_float16", "mixed_bfloat16"):
            m = models[p]
            c = timing.compare(
                lambda m=m: m.train_on_batch(x, y),
                lambda base=base: base.train_on_batch(x, y),
                pairs=5,
                min_time=0.05,
                sync=device.sync,
            )
            row[p] = {
                "median": c.median,
                "low": c.low,
                "high": c.high,
                "ms": c.candidate.median * 1e3,
                "float32_ms": c.baseline.median * 1e3,
            }
        row["seconds"] = timing.now() - start
        out["steps"].append(row)
        print(json.dumps(row), flush=True)
        del models
    with open(sys.argv[1], "w") as f:
        json.dump(out, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
