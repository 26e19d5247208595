"""Two worker processes of one MultiWorkerMirroredStrategy cluster on this machine (runtime.cluster.run_workers):
Keras's fit under the strategy, then a custom loop with worker 1 killed after 15 s. Prints each worker's first
and last lines and how it ended.

Usage: python tools/probes/chapter7_multiworker_probe.py
"""

from __future__ import annotations

import time
from pathlib import Path

from tfperf.runtime import cluster

SCRIPT = Path(__file__).with_name("multi_worker_script.py")


def show(title: str, runs: list[cluster.WorkerRun], seconds: float) -> None:
    print(f"== {title} ({seconds:.1f} s)")
    for run in runs:
        lines = [line for line in run.output.splitlines() if line.startswith("worker")]
        print(f"worker {run.index}: exit {run.returncode}; first {lines[:2]}; last {lines[-2:]}")


def main() -> None:
    start = time.monotonic()
    show("Model.fit", cluster.run_workers(SCRIPT, 2, args=["fit"], timeout=120), time.monotonic() - start)
    start = time.monotonic()
    runs = cluster.run_workers(SCRIPT, 2, timeout=90, stop={1: 15.0})
    show("custom loop, worker 1 killed at 15 s", runs, time.monotonic() - start)


if __name__ == "__main__":
    main()
