"""What the kernel's scheduler says about a worker, read from ``/proc``: the CPU seconds its process tree used
(:func:`busy_seconds`, from :mod:`tfperf.runtime.processes`), and how long the thread that serves its requests waited for a CPU that other
processes held (:func:`reading`, :func:`waited_for_others`).

A speed check times how long each worker takes to make a sample's inputs, and the answer's may not take much
longer than the unfixed code's (:mod:`tfperf.autograding.recheck`). On a loaded machine a worker's serving thread
also waits in the run queue while other processes hold the cores: under load, chapter 1's inputs took up to 0.076 s
longer than their CPU time, all but at most 0.007 s of it such waiting (``docs/measurements-grading.md``, "The
inputs' time under load"). That wait is the machine's, not the worker's, and is not counted, but for the part
that the worker's own other threads and processes could have caused (their CPU time meanwhile): an answer that keeps
its serving thread waiting behind work of its own still has that work counted.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from tfperf.runtime.processes import busy_seconds, stat_fields, tree


def host_pid(root: int, namespaced: int) -> int | None:
    """The pid, as this process sees it, of the process below ``root`` whose pid in its own (innermost) pid
    namespace is ``namespaced`` (``NSpid`` in ``/proc/PID/status``): how a sandbox's process is found from
    outside it. None where there is none."""
    for member in tree(root):
        try:
            lines = Path(f"/proc/{member}/status").read_text().splitlines()
        except OSError:
            continue
        for line in lines:
            if line.startswith("NSpid:"):
                pids = line.split()[1:]
                if len(pids) > 1 and int(pids[-1]) == namespaced:
                    return member
    return None


@dataclass(frozen=True)
class Reading:
    """One moment of a worker: seconds its serving thread has waited for a CPU so far, and CPU seconds its
    process tree but that thread has used so far."""

    waited: float
    others: float


def reading(root: int, serving: int) -> Reading | None:
    """A :class:`Reading` of the process tree below ``root`` whose requests the main thread of process
    ``serving`` answers; None where ``/proc`` cannot tell (no scheduler statistics, the thread gone). A thread's
    ``schedstat``: time on the CPU, time waiting on a run queue (both in ns), timeslices (the kernel's
    ``Documentation/scheduler/sched-stats.rst``)."""
    thread = f"/proc/{serving}/task/{serving}"
    try:
        waited_ns = int(Path(f"{thread}/schedstat").read_text().split()[1])
        own = sum(int(f) for f in stat_fields(f"{thread}/stat")[11:13])  # the thread's utime, stime
    except (OSError, IndexError, ValueError):
        return None
    return Reading(waited_ns / 1e9, busy_seconds(root) - own / os.sysconf("SC_CLK_TCK"))


def waited_for_others(before: Reading | None, after: Reading | None) -> float:
    """Seconds the serving thread waited for a CPU between two readings, less the CPU seconds that the rest of
    its process tree used meanwhile (waiting behind the worker's own work is not waiting for others): 0.0 where
    a reading is missing."""
    if before is None or after is None:
        return 0.0
    return max(0.0, (after.waited - before.waited) - max(0.0, after.others - before.others))
