"""The reference's speedups graded alone and with ``--jobs 2`` (docs/measurements-grading.md).

    python -m tests.classgrading.measure_jobs 01_tensors [--dir DIR] [--rounds 1]

Two students submit the chapter's reference solution. Each round grades them one after the
other (``--jobs 1``: each grader has every CPU and the machine to itself, apart from other
users), then both at once (``--force --jobs 2``: each pinned to one core). Prints, per run and
student, the median speedup of every throughput check, its ratios' range, the score and the
seconds per student-notebook (nbgrader start-up, kernel, notebook, feedback).
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

from tests.classgrading import chapter
from tfperf.classgrading.ledger import Ledger

STUDENTS = ["ref_a", "ref_b"]


def snapshot(course: Path, assignment: str) -> dict:
    out = {}
    for student in STUDENTS:
        entry = Ledger(course / "reports", assignment).read(student)
        out[student] = {
            "score": f"{entry.score}/{entry.max_score}",
            "seconds": round(entry.seconds, 1),
            "speedups": {
                row["exercise"]: {
                    "median": round(statistics.median(row["ratios"]), 2),
                    "min": round(min(row["ratios"]), 2),
                    "max": round(max(row["ratios"]), 2),
                    "pairs": len(row["ratios"]),
                    "target": row["target"],
                }
                for row in entry.speedups
            },
        }
    return out


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("assignment")
    parser.add_argument("--dir", type=Path)
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args()
    root = (args.dir or Path(tempfile.mkdtemp(prefix="measure-jobs-"))) / "course"
    course = chapter.make_course(root, args.assignment, STUDENTS)
    for round_ in range(args.rounds):
        for label, extra in (("jobs1", ["--jobs", "1"]), ("jobs2", ["--jobs", "2"])):
            started = time.monotonic()
            result = chapter.grade(course, args.assignment, "--force", *extra)
            wall = time.monotonic() - started
            print(
                json.dumps(
                    {
                        "round": round_,
                        "run": label,
                        "rc": result.returncode,
                        "wall_s": round(wall, 1),
                        "students": snapshot(course, args.assignment),
                    }
                ),
                flush=True,
            )
            if result.returncode != 0:
                print(result.stdout[-3000:], result.stderr[-3000:])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
