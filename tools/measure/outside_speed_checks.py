"""The reference's checks of one exercise graded outside the kernel, RUNS times: how often does the reference fail?

    python tools/measure/outside_speed_checks.py solutions/01_tensors/tensors_and_devices.ipynb row_scores 15
    python tools/measure/outside_speed_checks.py NOTEBOOK EXERCISE RUNS ANSWER.py   # another answer than the reference

Each run is what nbgrader's ``GradeOutsideKernel`` does for one written exercise: a fresh sandboxed worker
(``tfperf.autograding.outside.grade_exercise``) runs the instructor's cells, the reference answer and the
exercise's test cells (hidden tests included), then this process times each speed check of a passed test
cell against the unfixed code's worker (started once, kept for every run, as in one grading run).
Prints each run's outcome, then one JSON line: the runs that failed, and the speed checks' ratios as
recorded (``TFPERF_RECORD``): pairs, median, min, max, target. Set ``TFPERF_SIZE=ci`` as grading does.
"""

import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import nbformat

from tfperf.autograding import outside
from tfperf.grading.speed import speed_checks

path, answer_id, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
src = nbformat.read(path, 4)
ex = next(e for e in outside.instructor_exercises(src) if e.answer == answer_id)
reference = next(c.source for c in src.cells if c.metadata.get("nbgrader", {}).get("grade_id") == answer_id)
if len(sys.argv) > 4:  # an honest alternative to the reference, graded the same way
    reference = Path(sys.argv[4]).read_text()
checks = [c for c in speed_checks(src) if c.grade_id in ex.tests]
record = Path(tempfile.mkdtemp()) / "record.jsonl"
failed, started = [], time.monotonic()
for i in range(runs):
    out = outside.grade_exercise(
        ex,
        reference,
        timeout=180,
        sandboxed=True,
        record=record,
        speed_checks=checks,
        baseline_for=lambda check: outside.baselines.worker(Path(path), src, check),
    )
    bad = {g: (o.error or {}).get("evalue", "")[:200] for g, o in out.items() if not o.passed}
    if bad:
        failed.append(bad)
    print(f"run {i + 1}: {'FAILED ' + json.dumps(bad) if bad else 'passed'}", flush=True)
rows = [json.loads(line) for line in record.read_text().splitlines()] if record.exists() else []
by = {}
for r in rows:
    by.setdefault((r["exercise"], r.get("device_class")), []).extend(r["ratios"])
print(
    json.dumps(
        {
            "notebook": Path(path).name,
            "exercise": answer_id,
            "answer": sys.argv[4] if len(sys.argv) > 4 else "the reference",
            "runs": runs,
            "failed_runs": len(failed),
            "failures": failed,
            "seconds": round(time.monotonic() - started, 1),
            "speed": {
                f"{k[0]} [{k[1]}]": {
                    "pairs": len(v),
                    "median": round(statistics.median(v), 2),
                    "min": round(min(v), 2),
                    "max": round(max(v), 2),
                    "target": next((r["target"] for r in rows if r["exercise"] == k[0]), None),
                    # the answer's extra time making inputs, as a share of what is allowed (1 fails)
                    "preparing_share_max": max(
                        (
                            r["preparing_share"]
                            for r in rows
                            if r["exercise"] == k[0] and r.get("preparing_share") is not None
                        ),
                        default=None,
                    ),
                }
                for k, v in by.items()
            },
        }
    )
)
