"""What the runtime's tests ask of the processes they start: whether one still runs, whether a set of them ended."""

from __future__ import annotations

import subprocess
import time


def running(pid: int | str) -> bool:
    """Whether ``pid`` still runs (a zombie, dead but not yet reaped by its new parent, does not)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            return not any(line.startswith("State:") and "Z" in line.split()[1] for line in f)
    except OSError:
        return False


def all_end(pids, seconds: float = 10.0) -> bool:
    """Whether every process of ``pids`` ends within ``seconds``."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and any(running(pid) for pid in pids):
        time.sleep(0.1)
    return not any(running(pid) for pid in pids)


def children_of(pid: int | str) -> list[str]:
    """The pids of ``pid``'s children."""
    return subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout.split()
