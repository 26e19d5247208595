"""How far chapter 8's fixed scripts end from the script as written, after run_script's 100 steps, on this machine.

Usage: python tools/probes/capstone_drift_probe.py [DRAWS]

Runs exercise 3's given cell and reference answer from solutions/08_capstone/capstone.ipynb, and three wrong fixes
made from the reference (one step short; the learning rate one step late; a constant learning rate), each on DRAWS
draws of records (default 2), against run_as_written. Prints each one's largest weight difference and how many times
the strict result check's allowance (atol 1e-4 + rtol 1e-3 times the weight) that is. On a CPU the reference is
equal; on a GPU its drift is what the timed calls' tolerance (atol 1.2e-3) must allow, and the wrong fixes what it
must still catch.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "src"))

import tensorflow as tf  # noqa: E402

from tfperf import grading  # noqa: E402
from tfperf.experiments import capstone as cs  # noqa: E402


def main() -> int:
    draws = int(sys.argv[1]) if len(sys.argv) > 1 else 2
    nb = json.loads((ROOT / "solutions/08_capstone/capstone.ipynb").read_text())
    source = {
        c["metadata"].get("nbgrader", {}).get("grade_id"): "".join(c["source"])
        for c in nb["cells"]
        if c["cell_type"] == "code"
    }
    given = {"np": np, "tf": tf, "cs": cs, "grading": grading}
    exec(source["fixed_script_given"], given)
    reference = source["fixed_script"]
    wrong = {
        "one step short": reference.replace("for _ in range(steps):", "for _ in range(1, steps):"),
        "rate one step late": reference.replace("cs.DECAY ** done[0]", "cs.DECAY ** (done[0] - 1)"),
        "rate constant": reference.replace("cs.LEARNING_RATE * cs.DECAY ** done[0]", "cs.LEARNING_RATE"),
    }
    makers = {}
    for name, code in {"reference": reference, **wrong}.items():
        assert name == "reference" or code != reference, f"{name}: the reference changed, the probe no longer applies"
        namespace = dict(given)
        exec(code, namespace)
        makers[name] = namespace["make_fixed_training"]
    print("device:", "GPU" if tf.config.list_physical_devices("GPU") else "CPU")
    for draw in range(draws):
        x, y = given["script_records"]()
        base_loss, base_weights = given["run_as_written"](x, y)
        for name, make in makers.items():
            loss, weights = given["run_script"](make, x, y)
            diff = np.abs(weights - base_weights)
            allowed = 1e-4 + 1e-3 * np.abs(base_weights)
            print(
                f"draw {draw} {name:18s} loss {abs(loss[0] - base_loss[0]):.2e} away; largest weight difference "
                f"{diff.max():.2e} ({np.max(diff / allowed):.2f}x the allowance); median {np.median(diff):.2e}",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
