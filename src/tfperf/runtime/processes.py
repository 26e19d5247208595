"""A process tree read from ``/proc``: the processes below one (:func:`tree`) and the CPU seconds they used
(:func:`busy_seconds`). Linux only; elsewhere a tree is its root alone and its seconds 0.0."""

from __future__ import annotations

import os
from pathlib import Path


def stat_fields(path: str) -> list[str]:
    """The fields of a ``stat`` file after the command's name (which may hold spaces and parentheses)."""
    return Path(path).read_text().rsplit(")", 1)[1].split()


def tree(pid: int) -> list[int]:
    """Process ``pid`` and every process below it, found through each thread's ``children`` (no scan of all
    of ``/proc``); a process that starts or ends meanwhile may be missed."""
    found, todo = [], [pid]
    while todo:
        here = todo.pop()
        found.append(here)
        try:
            threads = os.listdir(f"/proc/{here}/task")
        except OSError:
            continue
        for thread in threads:
            try:
                todo += [int(c) for c in Path(f"/proc/{here}/task/{thread}/children").read_text().split()]
            except (OSError, ValueError):
                continue
    return found


def busy_seconds(pid: int) -> float:
    """CPU seconds used so far by process ``pid`` and every process below it (their threads, and the
    children they waited for), from ``/proc``: 0.0 where it cannot be read."""
    used = 0
    for member in tree(pid):
        try:
            used += sum(int(f) for f in stat_fields(f"/proc/{member}/stat")[11:15])  # utime, stime, cutime, cstime
        except (OSError, IndexError, ValueError):
            continue  # gone meanwhile
    return used / os.sysconf("SC_CLK_TCK")
