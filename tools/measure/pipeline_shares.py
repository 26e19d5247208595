"""The input evidence ``tfperf diagnose`` decides ``input-bound`` from, for training scripts as their authors wrote them.

Usage: ``python tools/measure/pipeline_shares.py SCRIPT.py [SCRIPT.py ...]``

Each script is diagnosed in this process as ``python -m tfperf diagnose SCRIPT --steps 10`` would (its output
hidden); one line a script on stderr: the step's time, the share of the machine's cores its pipeline took over a step
(:func:`tfperf.diagnosis.findings._pipeline_cores_share`, None where no pipeline was pulled), the Profiler's input
wait, and the problems named. docs/measurements-08_capstone.md holds what it printed.
"""

from __future__ import annotations

import contextlib
import io
import sys
from pathlib import Path

from tfperf.diagnosis.findings import _pipeline_cores_share
from tfperf.diagnosis.script import ScriptProblem, diagnose_script


def main(scripts: list[str]) -> None:
    for script in scripts:
        with contextlib.redirect_stdout(io.StringIO()):
            try:
                found = diagnose_script(script, steps=10, warmup=2, card="cached")
            except ScriptProblem as err:
                print(f"{Path(script).name}: {err}", file=sys.stderr)
                continue
        counts = found.counts
        share = _pipeline_cores_share(counts)
        wait = counts.input_wait.share if counts.input_wait else None
        print(
            f"{Path(script).name:45s} step {counts.seconds_per_step * 1e3:7.2f} ms  "
            f"cores' share {'-' if share is None else f'{share:.3f}'}  wait {'-' if wait is None else f'{wait:.3f}'}  "
            f"problems {[f.code for f in found.problems()]}",
            file=sys.stderr,
        )


if __name__ == "__main__":
    main(sys.argv[1:])
