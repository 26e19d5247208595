"""A worker's thread confined by Landlock (tfperf.autograding.sandbox.confine_thread): run in a child process of its own."""

import subprocess
import sys

import pytest

from tfperf.autograding import sandbox

try:
    sandbox.landlock_abi()
    AVAILABLE = True
except sandbox.LandlockUnavailable:
    AVAILABLE = False

PROBE = """
import os, threading
from pathlib import Path
from tfperf.autograding import sandbox
r, w = os.pipe()
assert sandbox.confine_thread()

def opens(path, mode="rb"):
    try:
        open(path, mode).close()
        return True
    except PermissionError:
        return False

seen = {
    "mem": opens("/proc/self/mem"),
    "a thread's mem": opens(f"/proc/self/task/{os.getpid()}/mem"),
    "environ": opens("/proc/self/environ"),
    "status": opens("/proc/self/status"),
    "meminfo": opens("/proc/meminfo"),
    "a file in /tmp": opens("/tmp/landlock-probe", "wb"),
    "the held pipe": os.write(w, b"x") == 1,
}
later = []
threading.Thread(target=lambda: later.append(opens("/proc/self/mem"))).start()
import time; time.sleep(0.2)
seen["mem, from a thread started later"] = later[0]
print(seen)
"""


@pytest.mark.skipif(not AVAILABLE, reason="this kernel has no Landlock")
def test_a_confined_thread_reads_no_memory_of_its_process_and_what_it_needs_still():
    result = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    seen = eval(result.stdout)  # noqa: S307 (our own probe's dict)
    assert seen == {
        "mem": False,
        "a thread's mem": False,
        "environ": False,
        "status": True,
        "meminfo": True,
        "a file in /tmp": True,
        "the held pipe": True,
        "mem, from a thread started later": False,
    }


def test_without_landlock_confine_says_so(monkeypatch):
    def unavailable():
        raise sandbox.LandlockUnavailable(38, "no Landlock")

    monkeypatch.setattr(sandbox, "landlock_abi", unavailable)
    assert sandbox.confine_thread() is False
