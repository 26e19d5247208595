"""A process tree read from ``/proc``: the processes below one (:func:`tree`), the CPU seconds they used
(:func:`busy_seconds`), how long a thread of theirs waited for a CPU that other processes held (:func:`reading`,
:func:`waited_for_others`), a sandboxed process found from outside (:func:`host_pid`) and the memory their objects
hold (:func:`held_bytes`, and on a GPU :func:`gpu_bytes`). Linux only; elsewhere a tree is its root alone, its
seconds 0.0 and its memory unknown (None)."""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
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


# ---------------------------------------------------------------- what the scheduler says of a worker
#
# A speed check times how long each worker takes to make a sample's inputs, and the answer's may not take much longer
# than the unfixed code's (:mod:`tfperf.autograding.recheck`). On a loaded machine a worker's serving thread also
# waits in the run queue while other processes hold the cores: under load, chapter 1's inputs took up to 0.076 s
# longer than their CPU time, all but at most 0.007 s of it such waiting (``docs/measurements-grading.md``, "The
# inputs' time under load"). That wait is the machine's, not the worker's, and is not counted (:func:`reading`,
# :func:`waited_for_others`), but for the part that the worker's own other threads and processes could have caused
# (their CPU time meanwhile): an answer that keeps its serving thread waiting behind work of its own still has that
# work counted.


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


#: glibc's ``M_MMAP_THRESHOLD`` (``mallopt(3)``); the value :func:`return_large_frees` sets (1 MiB); the most that
#: glibc's own dynamic threshold reaches on 64-bit (``DEFAULT_MMAP_THRESHOLD_MAX``, 32 MiB).
M_MMAP_THRESHOLD, LARGE_BYTES, DYNAMIC_MAX_BYTES = -3, 1 << 20, 32 << 20


def _glibc(function: str, *args: int) -> int | None:
    """Call ``function`` of this process's C library with ``args``: its result, or None where it has none (a C
    library other than glibc)."""
    try:
        import ctypes

        return getattr(ctypes.CDLL(None), function)(*args)
    except (OSError, AttributeError):
        return None


def _mmap_threshold(value: int) -> bool:
    return bool(_glibc("mallopt", M_MMAP_THRESHOLD, value))


def trim_heap() -> bool:
    """Give the free memory of this process's heaps back to the system (glibc's ``malloc_trim(0)``): the pages of
    freed blocks that are still resident stop being so, and a later allocation that reuses those blocks touches
    fresh pages, so that it shows in the process's resident memory. Whether it was done: not on other C libraries."""
    return _glibc("malloc_trim", 0) is not None


def return_large_frees(threshold: int = LARGE_BYTES) -> bool:
    """Have this process's allocator (glibc's ``malloc``) map every block of ``threshold`` bytes or more on its own
    and give it back to the system when it is freed, from now on: what the process holds (:func:`held_bytes`) then
    follows the large objects it keeps. By default glibc raises that threshold as blocks are freed (up to 32 MiB on
    64-bit), and later blocks come from its heap, whose freed memory it may keep: a process that keeps nothing
    can look as if it grew by a whole block. Setting it turns that off (``mallopt(3)``). It has a price: every
    large block is mapped afresh, its pages zeroed by the kernel on first touch, so code that allocates large
    tensors on every call runs slower; the grading worker sets it only for an exercise that checks memory. Whether
    it was set: not on other C libraries."""
    return _mmap_threshold(threshold)


@contextlib.contextmanager
def large_frees_returned(threshold: int = LARGE_BYTES):
    """:func:`return_large_frees` (blocks of ``threshold`` bytes or more) inside the block; after it, large blocks below :data:`DYNAMIC_MAX_BYTES` come from
    the heap again, as glibc's dynamic threshold lets them at most (its dynamic adjustment, once turned off, stays
    off)."""
    set_here = return_large_frees(threshold)
    try:
        yield set_here
    finally:
        if set_here:
            _mmap_threshold(DYNAMIC_MAX_BYTES)


#: The lines of ``/proc/PID/status`` that :func:`held_bytes` adds: resident anonymous memory (what a process
#: allocated: arrays, tensors on the host, Python objects) and resident shared memory (``memfd``, ``tmpfs`` files it
#: mapped). Not ``RssFile``: pages of the libraries and files it maps come and go with what the kernel reclaims.
HELD_LINES = ("RssAnon:", "RssShmem:")


def _status_sum(pids: list[int], prefixes: tuple[str, ...]) -> int | None:
    """The ``/proc/PID/status`` lines starting with ``prefixes`` (in kB), summed over ``pids``, in bytes: None where
    none could be read (a process gone meanwhile is left out)."""
    total, read = 0, False
    for member in pids:
        try:
            lines = Path(f"/proc/{member}/status").read_text().splitlines()
        except OSError:
            continue
        for line in lines:
            if line.startswith(prefixes):
                total, read = total + int(line.split()[1]) * 1024, True
    return total if read else None


def _clear_refs(pids: list[int]) -> bool:
    """Reset the peak resident memory (``VmHWM``) of ``pids`` to their resident memory now, by writing 5 to their
    ``/proc/PID/clear_refs`` (proc(5), Linux 4.0 and later): whether every one could be reset."""
    done = True
    for member in pids:
        try:
            Path(f"/proc/{member}/clear_refs").write_text("5")
        except OSError:
            done = False
    return done


def held_bytes(pid: int) -> int | None:
    """The memory the objects of process ``pid`` and every process below it hold now (:data:`HELD_LINES`), read
    from outside them in ``/proc``: None where none can be read."""
    return _status_sum(tree(pid), HELD_LINES)


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


def data_bytes() -> int | None:
    """This process's data segment and private writable mappings (``VmData``, what ``RLIMIT_DATA`` caps), in
    bytes; None where it cannot be read."""
    return _status_sum([os.getpid()], ("VmData:",))


def resident_and_peak() -> tuple[int, int] | None:
    """This process's resident memory now and at its peak (``VmRSS``, ``VmHWM``), in bytes; None where they cannot
    be read."""
    now, peak = _status_sum([os.getpid()], ("VmRSS:",)), _status_sum([os.getpid()], ("VmHWM:",))
    return None if now is None or peak is None else (now, peak)


def reset_peak() -> bool:
    """Make this process's peak resident memory (``VmHWM``) its resident memory now: whether it could."""
    return _clear_refs([os.getpid()])


def resident_bytes(pid: int) -> int | None:
    """The resident memory of process ``pid`` and every process below it now (``VmRSS``: anonymous, file and shared
    pages), in bytes."""
    return _status_sum(tree(pid), ("VmRSS:",))


def peak_bytes(pid: int) -> int | None:
    """The peak resident memory of process ``pid`` and of every process below it (``VmHWM``, each its own peak since
    it started or since :func:`reset_peaks`), summed, in bytes."""
    return _status_sum(tree(pid), ("VmHWM:",))


def reset_peaks(pid: int) -> bool:
    """:func:`reset_peak` for process ``pid`` and every process below it (from outside: a process that is not
    dumpable, as the fork server's workers, cannot be reset): whether every one could be."""
    return _clear_refs(tree(pid))


def _files_on_one_device(top: str) -> int:
    """Bytes of the regular files under ``top``, not descending into another file system (a bind mount)."""
    try:
        device = os.stat(top).st_dev
    except OSError:
        return 0
    total = 0
    for folder, subfolders, files in os.walk(top):
        subfolders[:] = [d for d in subfolders if _same_device(os.path.join(folder, d), device)]
        for name in files:
            try:
                stat = os.lstat(os.path.join(folder, name))
            except OSError:
                continue
            if stat.st_dev == device and not os.path.islink(os.path.join(folder, name)):
                total += stat.st_size
    return total


def _same_device(path: str, device: int) -> bool:
    try:
        return os.lstat(path).st_dev == device
    except OSError:
        return False


def written_bytes(pid: int, folders: tuple[str, ...] = ()) -> int:
    """Bytes of the files that process ``pid`` can keep beside its memory: its own ``/tmp`` and ``/dev/shm`` as it
    sees them (``/proc/PID/root``: a sandbox's private ones; only their own file systems), and ``folders`` (its
    working folder, as this process sees it)."""
    root = f"/proc/{pid}/root"
    try:  # not in a mount namespace of its own (a sandbox's): its /tmp is everyone's, not its own
        own = os.readlink(f"/proc/{pid}/ns/mnt") == os.readlink("/proc/self/ns/mnt")
    except OSError:
        own = True
    places = () if own else ("/tmp", "/dev/shm")
    return sum(_files_on_one_device(f"{root}{place}") for place in places) + sum(
        _files_on_one_device(folder) for folder in folders
    )
