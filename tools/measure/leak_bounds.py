"""The bounds of chapter 5's leak check (``grading.assert_memory_flat``), measured: the reference and the unfixed loop,
each run in a fresh process forked from one that imported TensorFlow (as the grading fork server does), glibc's mmap
threshold set as the grading worker sets it, the visible check's call and then the hidden one's, with the
exercise's inputs. Appends one JSON line per run (load label, kind, the floor read before any call, the readings
before and at each epoch's end of each call) to OUT.

    python tools/measure/leak_bounds.py OUT.jsonl RUNS LABEL     # measure (LABEL: idle, loaded, ...)
    python tools/measure/leak_bounds.py --summary OUT.jsonl      # the figures of docs/measurements-grading.md
"""

import json
import os
import statistics
import sys
from pathlib import Path

import numpy as np

from tfperf.experiments import gpu_sync
from tfperf.runtime import logs, processes

tf = logs.tensorflow()


def _cells():
    """The given cell (``train_best_unfixed``) and the reference answer (``train_best``) of the solutions notebook."""
    notebook = json.loads(
        (Path(__file__).resolve().parents[2] / "solutions/05_gpu_sync/gpu_sync_pitfalls.ipynb").read_text()
    )
    found = {}
    for cell in notebook["cells"]:
        grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        if grade_id in ("leak_given", "train_best"):
            found[grade_id] = "".join(line for line in cell["source"] if "### " not in line)
    return found


CALLS = [(3, 6, 1, 1.0), (2, 16, 2, 34.0)]  # the visible check's, then the hidden one's


def run(kind, load, out):
    processes.return_large_frees()
    me = os.getpid()
    floor = processes.held_bytes(me)
    ns = {"tf": tf, "gpu_sync": gpu_sync, "__name__": "leak_bounds"}
    cells = _cells()
    exec(cells["leak_given"], ns)
    if kind == "reference":
        exec(cells["train_best"], ns)
    else:
        ns["train_best"] = ns["train_best_unfixed"]
    calls = []
    for steps, epochs, seed, scale in CALLS:
        w0, xs, ys = gpu_sync.make_problem(steps, features=2048, outputs=2048, scale=scale, seed=seed)
        # the judge sends arrays: the subject makes tensors of them
        w0, xs, ys = (tf.constant(np.asarray(a)) for a in (w0, xs, ys))
        readings = [processes.held_bytes(me)]
        ns["train_best"](w0, xs, ys, epochs, lambda e: readings.append(processes.held_bytes(me)))
        calls.append(readings)
    out.write(json.dumps({"load": load, "kind": kind, "floor": floor, "calls": calls}) + "\n")
    out.flush()


def measure(path: str, runs: int, load: str) -> None:
    """``runs`` pairs (the reference, then the unfixed loop), each in a process forked from this one."""

    for i in range(runs):
        for kind in ("reference", "unfixed"):
            pid = os.fork()
            if pid == 0:
                try:
                    with open(path, "a") as mine:
                        run(kind, load, mine)
                finally:
                    os._exit(0)
            os.waitpid(pid, 0)
        print(i, flush=True)


def summary(path: str) -> None:
    rows = [json.loads(line) for line in open(path)]

    def later_half(readings):
        half = (len(readings) - 1) // 2
        return (readings[-1] - readings[-1 - half]) / 1e6 / half

    for load in sorted({r["load"] for r in rows}):
        for kind in ("reference", "unfixed"):
            runs = [r for r in rows if r["load"] == load and r["kind"] == kind]
            for index, name in ((0, "visible"), (1, "hidden")):
                if not runs:
                    continue
                per = sorted(later_half(r["calls"][index]) for r in runs)
                peak = sorted((max(r["calls"][index]) - r["floor"]) / 1e6 for r in runs)
                print(
                    f"{load:6s} {kind:9s} {name:7s} n={len(runs):3d} later half, MB an epoch: min {per[0]:.2f} "
                    f"median {statistics.median(per):.2f} max {per[-1]:.2f}; most held over the floor, MB: "
                    f"min {peak[0]:.1f} median {statistics.median(peak):.1f} max {peak[-1]:.1f}"
                )


if __name__ == "__main__":
    if sys.argv[1] == "--summary":
        summary(sys.argv[2])
    else:
        measure(sys.argv[1], int(sys.argv[2]), sys.argv[3])
