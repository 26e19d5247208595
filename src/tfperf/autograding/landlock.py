"""What a grading worker's process may open once the answer runs: Linux Landlock, through its three system calls.

An answer that got past the restriction it runs under (:mod:`tfperf.autograding.restricted`) could still open files
by path through the libraries it may use (``pathlib``, NumPy's and TensorFlow's file functions), and one path of its
own process reaches everything in it: ``/proc/self/mem`` (its memory: the report key, every check's code). So just
before the answer cell, the worker's thread confines itself (:func:`confine`): from then on, it and every thread and
process it starts may read and write files anywhere the sandbox lets it, except under ``/proc``, where it may read
only what TensorFlow, psutil and the course read of it (:data:`PROC_FILES`, :data:`PROC_TREES`); descriptors it
already holds are unchanged. Landlock (Linux 5.13 and later, `docs.kernel.org/userspace-api/landlock.html`) needs no
privilege, and a confinement cannot be undone or widened.

Why the answer's thread and not the whole worker from its start: a process started under the confinement cannot read
its own ``/proc/self`` (its folder there is new, outside every rule), and the tf.data service's servers that a given
cell starts (chapter 7) then never served (a pipeline's iterator waited for them for good). So the given cells run
unconfined, and what they started stays so. What that leaves: TensorFlow's own threads started before the answer
(its thread pools) are not confined, so an answer's Python run on one of them (a ``tf.py_function`` in a
``tf.data`` pipeline) could still open ``/proc/self/mem``.

Where the kernel has no Landlock (or it is turned off), :func:`confine` says so and the worker goes on without it:
the sandbox and the restriction still hold the rest (``python -m tfperf.autograding.sandbox check`` reports it).
"""

from __future__ import annotations

import ctypes
import os
import struct

#: System call numbers (the same on every architecture Linux added them to: x86-64, arm64, ...).
CREATE_RULESET, ADD_RULE, RESTRICT_SELF = 444, 445, 446
CREATE_RULESET_VERSION = 1
RULE_PATH_BENEATH = 1
PR_SET_NO_NEW_PRIVS = 38
#: The two kinds of access confined (``LANDLOCK_ACCESS_FS_WRITE_FILE`` and ``READ_FILE``): opening a file to write
#: or to read. Everything else (listing folders, making files) is left as the sandbox has it.
WRITE_FILE, READ_FILE = 1 << 1, 1 << 2

#: Files under ``/proc`` the worker may still read (``self`` is the worker itself, resolved when it confines itself).
PROC_FILES = (
    "cpuinfo", "meminfo", "stat", "loadavg", "uptime", "version", "filesystems", "mounts",
    "self/status", "self/stat", "self/statm", "self/cgroup", "self/limits", "self/io", "self/maps", "self/mountinfo",
    "self/cmdline", "self/sched", "self/smaps_rollup", "self/cpuset",
)  # fmt: skip
#: Folders under ``/proc`` the worker may read everything of.
PROC_TREES = ("sys", "pressure", "driver")


class LandlockUnavailable(OSError):
    """This kernel has no Landlock (too old, or turned off)."""


def abi_version() -> int:
    """The Landlock ABI version of the running kernel; :class:`LandlockUnavailable` where there is none."""
    libc = ctypes.CDLL(None, use_errno=True)
    version = libc.syscall(CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(CREATE_RULESET_VERSION))
    if version < 1:
        raise LandlockUnavailable(ctypes.get_errno(), "Landlock is not available on this kernel")
    return version


def _rules() -> list[tuple[str, int]]:
    """(path, access) of every rule: each top-level folder but ``/proc`` whole, and the listed parts of ``/proc``."""
    rules = [(os.path.join("/", name), READ_FILE | WRITE_FILE) for name in sorted(os.listdir("/")) if name != "proc"]
    rules += [(os.path.join("/proc", name), READ_FILE) for name in (*PROC_FILES, *PROC_TREES)]
    return rules


def confine() -> bool:
    """Confine the calling thread (and the threads and processes it starts from now on) as the module's docstring
    says: True; False where the kernel has no Landlock."""
    try:
        abi_version()
    except LandlockUnavailable:
        return False
    libc = ctypes.CDLL(None, use_errno=True)
    handled = WRITE_FILE | READ_FILE
    attr = struct.pack("=Q", handled)  # struct landlock_ruleset_attr: handled_access_fs (the ABI 1 size)
    ruleset = libc.syscall(CREATE_RULESET, ctypes.c_char_p(attr), ctypes.c_size_t(len(attr)), ctypes.c_uint32(0))
    if ruleset < 0:
        raise OSError(ctypes.get_errno(), "landlock_create_ruleset failed")
    try:
        for path, access in _rules():
            try:
                fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:  # not there on this machine (or this process's /proc)
                continue
            try:
                rule = struct.pack("=Qi", access, fd)  # struct landlock_path_beneath_attr, packed
                if libc.syscall(ADD_RULE, ruleset, RULE_PATH_BENEATH, ctypes.c_char_p(rule), ctypes.c_uint32(0)):
                    raise OSError(ctypes.get_errno(), f"landlock_add_rule failed for {path}")
            finally:
                os.close(fd)
        if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0):
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")
        if libc.syscall(RESTRICT_SELF, ruleset, ctypes.c_uint32(0)):
            raise OSError(ctypes.get_errno(), "landlock_restrict_self failed")
    finally:
        os.close(ruleset)
    return True
