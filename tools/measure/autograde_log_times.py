"""Where an ``nbgrader autograde`` run's time went, from its log: the kernel's share and the workers'.

    python tools/measure/autograde_log_times.py test-artifacts/roundtrip/lane-*/autograde-*.log

Reads the logs the round trip writes (``tests/grading/test_roundtrip.py``: a first line
``# nbgrader ...: N s``, then nbgrader's lines, each starting with its time of day). Per log, one line: the run's
seconds, its students, and their seconds split three ways: in the kernel (from "Autograding" to the first
"Grading exercise", or to the graded notebook's write where no exercise went outside), in the exercises'
workers (the seconds each "Exercise ...: ... in N s" line reports), and nbgrader's own (the rest of the run, its
start included). The times of day have whole seconds: a student's kernel share is good to about a second.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path

LINE = re.compile(r"(\d\d):(\d\d):(\d\d) (.*)")
WORKER_SECONDS = re.compile(r"^Exercise '.*': .* in ([0-9.]+) s$")


@dataclass
class Student:
    started: int
    autograding: int | None = None
    kernel_done: int | None = None
    done: int | None = None
    workers: float = 0.0

    def kernel(self) -> int:
        if self.autograding is None or self.done is None:
            return 0
        return (self.kernel_done if self.kernel_done is not None else self.done) - self.autograding


def students(lines: list[str]) -> list[Student]:
    found: list[Student] = []
    for line in lines:
        match = LINE.match(line)
        if not match:
            continue
        hours, minutes, seconds, message = match.groups()
        at = int(hours) * 3600 + int(minutes) * 60 + int(seconds)
        if message.startswith("Creating/updating student"):
            found.append(Student(at))
        elif not found:
            continue
        elif message.startswith("Autograding "):
            found[-1].autograding = at
        elif message.startswith("Grading exercise") and found[-1].kernel_done is None:
            found[-1].kernel_done = at
        elif worker := WORKER_SECONDS.match(message):
            found[-1].workers += float(worker.group(1))
        elif message.startswith("Setting destination file permissions"):
            found[-1].done = at
    return found


def summary(path: Path) -> str:
    lines = path.read_text().splitlines()
    total = float(re.search(r": ([0-9.]+) s$", lines[0]).group(1))
    graded = students(lines[1:])
    kernel = sum(s.kernel() for s in graded)
    workers = sum(s.workers for s in graded)
    return (
        f"{path.name}: {total:.1f} s, {len(graded)} students; kernel {kernel} s, workers {workers:.1f} s, "
        f"nbgrader {total - kernel - workers:.1f} s"
    )


if __name__ == "__main__":
    for name in sys.argv[1:]:
        print(summary(Path(name)))
