"""A batch of generated toy submissions graded sequentially, then in parallel (docs/measurements-grading.md).

    python -m tests.classgrading.batch50 [--students 50] [--dir DIR]

Mixed submissions (every kind of :data:`toy.KINDS`: reference, wrong, crashing, endless loop
with a 5 s cell limit, a kernel that kills itself, untouched, screened), graded with
``python -m tfperf grade`` at ``--jobs 1``, then again with ``--force --jobs 2``. Checks that
every student is graded with the points their kind deserves, both times, and prints the wall times.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from tests.classgrading import toy


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--students", type=int, default=50)
    parser.add_argument("--dir", type=Path)
    args = parser.parse_args()
    root = (args.dir or Path(tempfile.mkdtemp(prefix="batch50-"))) / "course"
    course = toy.make_course(root)
    released = toy.released(course)
    kinds = {f"s{i:03d}": toy.KINDS[i % len(toy.KINDS)] for i in range(args.students)}
    for student, kind in kinds.items():
        toy.submit(course, student, toy.variant(kind, released))
    wanted = {s: dict(zip(("check_square", "check_total"), map(float, toy.EXPECTED[k]))) for s, k in kinds.items()}
    results = {}
    for label, extra in (("jobs1", ["--jobs", "1"]), ("jobs2", ["--force", "--jobs", "2"])):
        started = time.monotonic()
        run = toy.grade(course, *extra, "--no-progress", timeout=3600)
        wall = time.monotonic() - started
        scores = toy.scores(course)
        results[label] = {
            "wall_s": round(wall, 1),
            "rc": run.returncode,
            "output": run.stdout[-2000:],
            "all_graded": sorted(scores) == sorted(kinds),
            "wrong_scores": {s: scores.get(s) for s in kinds if scores.get(s) != wanted[s]},
            "gradebook_problems": toy.gradebook_problems(course),
            "scores": scores,
        }
        print(label, json.dumps({k: v for k, v in results[label].items() if k != "scores"}, indent=1), flush=True)
    same = results["jobs1"]["scores"] == results["jobs2"]["scores"]
    print(
        json.dumps(
            {
                "students": args.students,
                "same_scores_jobs1_jobs2": same,
                "jobs1_wall_s": results["jobs1"]["wall_s"],
                "jobs2_wall_s": results["jobs2"]["wall_s"],
                "kinds": {k: sum(v == k for v in kinds.values()) for k in toy.KINDS},
            }
        )
    )
    ok = same and all(
        r["rc"] == 0 and r["all_graded"] and not r["wrong_scores"] and not r["gradebook_problems"]
        for r in results.values()
    )
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
