"""What the kernel's scheduler says about a worker (tfperf.runtime.processes.reading): waiting for a CPU that other
processes held is told apart from waiting behind the worker's own work. Real processes pinned to one core."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tfperf.runtime import processes

#: Spins for the seconds given (wall clock), then waits to be killed.
SPIN = (
    "import sys, time\nend = time.monotonic() + float(sys.argv[1])\nwhile time.monotonic() < end: pass\ntime.sleep(60)"
)
#: Starts a child that spins as long, pinned to the same core, then spins itself.
SPIN_WITH_A_CHILD = (
    "import subprocess, sys, time\n"
    f"subprocess.Popen([sys.executable, '-c', {SPIN!r}, sys.argv[1]])\n"
    "end = time.monotonic() + float(sys.argv[1])\nwhile time.monotonic() < end: pass\ntime.sleep(60)"
)

pytestmark = pytest.mark.skipif(
    not os.path.exists(f"/proc/{os.getpid()}/task/{os.getpid()}/schedstat"), reason="no scheduler statistics"
)


def pinned(code: str, seconds: float, core: int) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", code, str(seconds)], preexec_fn=lambda: os.sched_setaffinity(0, {core})
    )


def waited_over(process: subprocess.Popen, seconds: float) -> float:
    before = processes.reading(process.pid, process.pid)
    time.sleep(seconds)
    return processes.waited_for_others(before, processes.reading(process.pid, process.pid))


def stop(*started: subprocess.Popen) -> None:
    for process in started:
        for member in processes.tree(process.pid)[1:]:
            # A member may be gone already: killing a sandbox's first process ends the rest of its PID namespace.
            with contextlib.suppress(ProcessLookupError):
                os.kill(member, 9)
        process.kill()
        process.wait()
        if process.stdout is not None:
            process.stdout.close()


def test_a_worker_kept_waiting_by_another_process_is_read_as_waiting_for_others():
    core = min(os.sched_getaffinity(0))
    other, worker = pinned(SPIN, 3, core), pinned(SPIN, 3, core)
    try:
        time.sleep(0.3)  # both started and spinning
        waited = waited_over(worker, 1.0)
    finally:
        stop(other, worker)
    assert 0.25 < waited <= 1.05, waited  # about half of the second: the other process held the core


def core_busy_seconds(core: int) -> float:
    """CPU seconds that core ``core`` has run any process so far (``/proc/stat``: user, nice, system, irq,
    softirq, steal)."""
    line = next(x for x in Path("/proc/stat").read_text().splitlines() if x.startswith(f"cpu{core} "))
    user, nice, system, _idle, _iowait, irq, softirq, steal = (int(f) for f in line.split()[1:9])
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def test_waiting_behind_the_workers_own_child_is_not_waiting_for_others():
    core = min(os.sched_getaffinity(0))
    worker = pinned(SPIN_WITH_A_CHILD, 3, core)
    try:
        time.sleep(0.6)  # the child started and spinning
        assert len(processes.tree(worker.pid)) == 2
        core_before, tree_before = core_busy_seconds(core), processes.busy_seconds(worker.pid)
        waited = waited_over(worker, 1.0)
        core_after, tree_after = core_busy_seconds(core), processes.busy_seconds(worker.pid)
    finally:
        stop(worker)
    # Its own child held the core: the child's CPU time offsets the wait. Only what processes outside the worker's
    # tree ran on that core meanwhile (none on an idle machine; the suite's other half where it runs beside) may
    # count; not offsetting the child would count about half of the second more.
    others_on_the_core = max(0.0, (core_after - core_before) - (tree_after - tree_before))
    assert waited < others_on_the_core + 0.1, (waited, others_on_the_core)


def test_no_reading_where_the_thread_is_gone():
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    assert processes.reading(gone.pid, gone.pid) is None
    assert processes.waited_for_others(None, None) == 0.0


@pytest.mark.skipif(not shutil.which("bwrap"), reason="needs bubblewrap")
def test_a_sandboxed_process_is_found_from_its_pid_inside_the_sandbox():
    sandboxed = subprocess.Popen(
        ["bwrap", "--unshare-all", "--unshare-user", "--die-with-parent", "--dev-bind", "/", "/", "--proc", "/proc"]
        + [sys.executable, "-c", "import os, time\nprint(os.getpid(), flush=True)\ntime.sleep(60)"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        inside = int(sandboxed.stdout.readline())
        found = processes.host_pid(sandboxed.pid, inside)
        assert found is not None and found != inside
        assert "time.sleep(60)" in Path(f"/proc/{found}/cmdline").read_text()
        assert processes.host_pid(sandboxed.pid, 99999) is None
    finally:
        stop(sandboxed)
