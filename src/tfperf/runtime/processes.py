"""A process tree read from ``/proc``: the processes below one (:func:`tree`), the CPU seconds they used
(:func:`busy_seconds`) and the memory their objects hold (:func:`held_bytes`, and on a GPU :func:`gpu_bytes`).
Linux only; elsewhere a tree is its root alone, its seconds 0.0 and its memory unknown (None)."""

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


#: glibc's ``M_MMAP_THRESHOLD`` (``mallopt(3)``), and the value :func:`return_large_frees` sets: 1 MiB.
M_MMAP_THRESHOLD, LARGE_BYTES = -3, 1 << 20


def return_large_frees() -> bool:
    """Have this process's allocator (glibc's ``malloc``) map every block of :data:`LARGE_BYTES` or more on its own
    and give it back to the system when it is freed, from now on: what the process holds (:func:`held_bytes`) then
    follows the large objects it keeps. By default glibc raises that threshold as blocks are freed (up to 32 MiB on
    64-bit), and later blocks come from its heap, whose freed memory it may keep: a process that keeps nothing
    can look as if it grew by a whole block. Setting it turns that off (``mallopt(3)``). Whether it was set: not
    on other C libraries."""
    try:
        import ctypes

        return bool(ctypes.CDLL(None).mallopt(M_MMAP_THRESHOLD, LARGE_BYTES))
    except (OSError, AttributeError):
        return False


#: The lines of ``/proc/PID/status`` that :func:`held_bytes` adds: resident anonymous memory (what a process
#: allocated: arrays, tensors on the host, Python objects) and resident shared memory (``memfd``, ``tmpfs`` files it
#: mapped). Not ``RssFile``: pages of the libraries and files it maps come and go with what the kernel reclaims.
HELD_LINES = ("RssAnon:", "RssShmem:")


def held_bytes(pid: int) -> int | None:
    """The memory the objects of process ``pid`` and every process below it hold now (:data:`HELD_LINES`), read
    from outside them in ``/proc``: None where even the first cannot be read."""
    total, read = 0, False
    for member in tree(pid):
        try:
            lines = Path(f"/proc/{member}/status").read_text().splitlines()
        except OSError:
            continue  # gone meanwhile
        for line in lines:
            if line.startswith(HELD_LINES):
                total += int(line.split()[1]) * 1024  # kB
                read = True
    return total if read else None


def gpu_bytes(pids: list[int]) -> int | None:
    """GPU memory that NVML (the library behind ``nvidia-smi``) says processes ``pids`` hold, on every GPU; None
    without NVML (no ``nvidia-ml-py``, no driver) or where it lists none of them (a process in another pid
    namespace, as a sandbox's, is listed under the pid this process sees)."""
    try:
        import pynvml
    except ImportError:
        return None
    try:
        pynvml.nvmlInit()
    except Exception:  # noqa: BLE001 (no driver: nothing to read)
        return None
    try:
        total, found, wanted = 0, False, set(pids)
        for index in range(pynvml.nvmlDeviceGetCount()):
            handle = pynvml.nvmlDeviceGetHandleByIndex(index)
            for listed in pynvml.nvmlDeviceGetComputeRunningProcesses(handle):
                if listed.pid in wanted and listed.usedGpuMemory is not None:
                    total, found = total + int(listed.usedGpuMemory), True
        return total if found else None
    except Exception:  # noqa: BLE001 (NVML could not say)
        return None
    finally:
        pynvml.nvmlShutdown()
