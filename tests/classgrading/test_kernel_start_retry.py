"""A kernel that dies before it starts is not the submission's doing: ``tfperf grade`` runs that step
again, once (real nbgrader, the course's sandboxed kernel behind a launcher that fails as told)."""

from __future__ import annotations

import json
import sys
from urllib.parse import quote

from tests.classgrading import toy
from tfperf.classgrading import batch
from tfperf.classgrading.ledger import FAILED, GRADED, Ledger

# Fails (exit 1, before the kernel could reply to anything) while the count in its first argument's
# file is above 0, counting down; then starts the real kernel.
FLAKY_LAUNCHER = """\
import os, sys
counter = sys.argv[1]
left = int(open(counter).read())
if left > 0:
    open(counter, "w").write(str(left - 1))
    sys.exit(1)
os.execv(sys.argv[2], sys.argv[2:])
"""


def make_flaky(course, failures: int):
    """Put FLAKY_LAUNCHER in front of the course's grading kernel, failing its first ``failures`` starts."""
    spec = next((course.parent / "jupyter").glob("share/jupyter/kernels/*/kernel.json"))
    kernel = json.loads(spec.read_text())
    launcher, counter = course.parent / "flaky.py", course.parent / "failures-left"
    launcher.write_text(FLAKY_LAUNCHER)
    counter.write_text(str(failures))
    kernel["argv"] = [sys.executable, str(launcher), str(counter), *kernel["argv"]]
    spec.write_text(json.dumps(kernel))
    return counter


def attempts(course, student):
    log = course / "reports" / "logs" / toy.ASSIGNMENT / f"{quote(student, safe='')}.log"
    return sum(line.startswith("$ ") and " autograde " in line for line in log.read_text().splitlines())


def test_a_kernel_that_never_started_is_started_again_once(toy_course):
    toy.submit(toy_course, "ann", toy.variant("reference", toy.released(toy_course)))
    counter = make_flaky(toy_course, failures=1)
    done = toy.grade(toy_course, "--no-progress")
    assert done.returncode == 0, done.stdout + done.stderr
    entry = Ledger(toy_course / "reports", toy.ASSIGNMENT).read("ann")
    assert entry.status == GRADED and counter.read_text() == "0"
    assert toy.scores(toy_course)["ann"] == dict(
        zip(("check_square", "check_total"), map(float, toy.EXPECTED["reference"]))
    )
    assert ["kernel start retried", f"nbgrader autograde: {batch.KERNEL_NEVER_STARTED}"] in entry.anomalies
    assert attempts(toy_course, "ann") == 2


def test_a_kernel_that_never_starts_fails_the_student_after_one_retry(toy_course):
    toy.submit(toy_course, "bob", toy.variant("reference", toy.released(toy_course)))
    make_flaky(toy_course, failures=10)
    done = toy.grade(toy_course, "--no-progress")
    assert done.returncode == 1 and "Look at: bob" in done.stdout, done.stdout + done.stderr
    entry = Ledger(toy_course / "reports", toy.ASSIGNMENT).read("bob")
    assert entry.status == FAILED and batch.KERNEL_NEVER_STARTED in " ".join(entry.problems)
    assert attempts(toy_course, "bob") == 1 + batch.START_RETRIES
