"""The sandboxed kernel that nbgrader grades in: ``python -m tfperf.autograding.sandbox install | check``.

``install`` writes the Jupyter kernelspec ``tfperf-grading``. Its command starts this
module's ``launch``, which runs this interpreter's ``ipykernel_launcher`` under Debian's
bubblewrap (``bwrap``) with:

- the whole file system read-only (the course included), except the notebook's own folder
  (the kernel's working directory) and a private, size-limited ``/tmp``; the gradebook, the
  other submissions and the instructor's source hidden altogether (``TFPERF_SANDBOX_HIDE``);
- every namespace unshared: no network at all (not even the host's loopback), its own
  process tree (everything it started dies with it), no capabilities, no nested sandboxes;
- resource limits: CPU seconds (``RLIMIT_CPU``, summed over threads) and private writable
  memory (``RLIMIT_DATA``; ``RLIMIT_AS`` would count the address space TensorFlow and CUDA
  reserve without using it).

Without a network the kernel cannot use Jupyter's TCP transport, so it talks to nbgrader over
ZeroMQ ``ipc`` sockets (Unix sockets) in the folder of the connection's ``ip`` (a path prefix
for ipc), the one other folder the sandbox can write to. The kernel manager must use
``transport = "ipc"`` and an ``ip`` in a folder of its own (``autograde/nbgrader_config.py``
sets both); the launcher refuses a TCP connection file with a message that says so. The learner's own JupyterLab keeps its ordinary ``python3`` kernel.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import re
import resource
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from tfperf.runtime.logs import NOISE_PATTERN, quiet_tensorflow

KERNEL_NAME = "tfperf-grading"
# Paths (os.pathsep-separated) the kernel must not even read: the gradebook, the other
# students' work, the instructor's source. Set by autograde/nbgrader_config.py.
HIDE_ENV = "TFPERF_SANDBOX_HIDE"
BWRAP = "/usr/bin/bwrap"
GIB = 1024**3


class SandboxUnavailable(RuntimeError):
    """bubblewrap is missing or cannot create a sandbox on this machine."""


@dataclass(frozen=True)
class Limits:
    """Resource limits of one grading kernel (the whole notebook's run, all its threads)."""

    cpu_seconds: int = 1800
    memory_bytes: int = 8 * GIB
    tmp_bytes: int = 1 * GIB

    def apply(self) -> None:
        """Set the limits on this process; the sandbox and the kernel inherit them."""
        # SIGXCPU at the soft limit, SIGKILL 10 s later for a process that ignores it
        resource.setrlimit(resource.RLIMIT_CPU, (self.cpu_seconds, self.cpu_seconds + 10))
        resource.setrlimit(resource.RLIMIT_DATA, (self.memory_bytes, self.memory_bytes))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


#: The limits the grading kernel runs under unless told otherwise.
DEFAULT_LIMITS = Limits()


def find_bwrap(bwrap: str | None = None) -> str:
    """The bubblewrap executable, or SandboxUnavailable saying how to install it."""
    found = bwrap or shutil.which("bwrap") or (BWRAP if os.access(BWRAP, os.X_OK) else None)
    if not found or not os.access(found, os.X_OK):
        raise SandboxUnavailable(
            "bubblewrap (bwrap) is not installed, and the grading kernel runs learner code inside it. "
            "Install it (Debian/Ubuntu: `sudo apt-get install bubblewrap`), then "
            "`python -m tfperf.autograding.sandbox install`."
        )
    return found


def device_nodes() -> list[str]:
    """GPU device nodes to pass through (the sandbox's /dev holds only the basic devices)."""
    return sorted(str(p) for p in Path("/dev").glob("nvidia*")) + (["/dev/dri"] if Path("/dev/dri").exists() else [])


def code_folders_in_tmp() -> tuple[str, ...]:
    """The folders of this interpreter's code (its environment, ``sys.path``) that lie in ``/tmp``:
    the sandbox replaces ``/tmp`` by its own, so a checkout or an environment there would lose its
    modules. ``/tmp`` itself is never among them."""
    found = set()
    for path in (sys.prefix, sys.base_prefix, sys.exec_prefix, *sys.path):
        real = os.path.realpath(path) if path else ""
        if real.startswith("/tmp/") and os.path.isdir(real):
            found.add(real)
    return tuple(sorted(p for p in found if not any(p.startswith(q + "/") for q in found)))


def bwrap_argv(
    workdir: str,
    runtime_dir: str,
    command: list[str],
    *,
    limits: Limits = DEFAULT_LIMITS,
    bwrap: str = BWRAP,
    devices: list[str] | None = None,
    readable: tuple[str, ...] = (),
    hidden: tuple[str, ...] = (),
    visible: tuple[str, ...] | None = None,
) -> list[str]:
    """The bubblewrap command that runs ``command`` sandboxed, writable only in ``workdir``,
    ``runtime_dir`` (where the kernel's ipc sockets go) and a private ``/tmp``; the files in
    ``readable`` (the connection file) and the folders in ``visible`` (default: :func:`code_folders_in_tmp`)
    stay readable even where they lie in the hidden ``/tmp``; existing ``hidden`` folders look empty and
    ``hidden`` files cannot be read (``workdir`` may lie inside, and so may they in a ``visible`` folder)."""
    argv = [
        bwrap,
        "--ro-bind",
        "/",
        "/",
        "--dev",
        "/dev",
        "--proc",
        "/proc",
        "--size",
        str(limits.tmp_bytes),
        "--tmpfs",
        "/tmp",
    ]
    for folder in code_folders_in_tmp() if visible is None else visible:  # before what is hidden inside them
        argv += ["--ro-bind", folder, folder]
    for node in device_nodes() if devices is None else devices:
        argv += ["--dev-bind", node, node]
    hidden_folders = [p for p in hidden if os.path.isdir(p)]
    for path in hidden:
        if os.path.isdir(path):
            argv += ["--tmpfs", path]
        elif os.path.exists(path):
            argv += ["--ro-bind", "/dev/null", path]  # a device on a nodev mount: reading it is refused
    for folder in dict.fromkeys([runtime_dir, workdir]):  # after /tmp: they may lie inside it
        argv += ["--bind", folder, folder]
    for path in readable:
        argv += ["--ro-bind", path, path]
    for folder in hidden_folders:  # their empty stand-ins are read-only too
        argv += ["--remount-ro", folder]
    argv += [
        "--chdir",
        workdir,
        "--unshare-all",
        "--unshare-user",
        "--disable-userns",
        "--cap-drop",
        "ALL",
        "--die-with-parent",
        "--setenv",
        "HOME",
        "/tmp",
        "--setenv",
        "IPYTHONDIR",
        "/tmp/ipython",
        "--setenv",
        "MPLCONFIGDIR",
        "/tmp/matplotlib",
        # ipykernel exits when its parent looks gone, and in its own process tree its parent
        # is always pid 1; 1 tells it not to watch (--die-with-parent does that job).
        "--setenv",
        "JPY_PARENT_PID",
        "1",
        "--",
        *command,
    ]
    return argv


def hidden_paths() -> tuple[str, ...]:
    """The paths that sandboxed learner code must not even read (``TFPERF_SANDBOX_HIDE``, set by the nbgrader
    configuration: the gradebook, the other submissions, the instructor's source, the reports)."""
    return tuple(p for p in os.environ.get(HIDE_ENV, "").split(os.pathsep) if p)


def ipc_folder(connection_file: str) -> str:
    """The folder where the kernel must create its ipc sockets, from its connection file."""
    info = json.loads(Path(connection_file).read_text())
    if info.get("transport") != "ipc":
        raise SandboxUnavailable(
            f"The grading kernel has no network, so it needs Jupyter's ipc transport, but "
            f'{connection_file} asks for {info.get("transport")!r}. Set `c.KernelManager.transport = "ipc"` '
            "in the nbgrader configuration (autograde/nbgrader_config.py does)."
        )
    return str(Path(info["ip"]).resolve().parent)


def launch(
    connection_file: str, kernel_args: list[str], *, limits: Limits = DEFAULT_LIMITS, bwrap: str | None = None
) -> None:
    """Replace this process with the sandboxed ipykernel for ``connection_file`` (never returns)."""
    bwrap = find_bwrap(bwrap)
    connection_file = str(Path(connection_file).resolve())
    runtime_dir = ipc_folder(connection_file)
    command = [sys.executable, "-m", "ipykernel_launcher", "-f", connection_file, *kernel_args]
    hidden = hidden_paths()
    argv = bwrap_argv(
        os.getcwd(), runtime_dir, command, limits=limits, bwrap=bwrap, readable=(connection_file,), hidden=hidden
    )
    limits.apply()
    # Jupyter interrupts a kernel with SIGINT to its whole process group: bubblewrap must
    # ignore it (or it would exit and take the kernel with it); the kernel sets its own handler.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    os.execv(bwrap, argv)


def kernelspec(limits: Limits = DEFAULT_LIMITS) -> dict:
    """The kernel.json of the grading kernel: this interpreter, sandboxed by ``launch``."""
    return {
        "argv": [
            sys.executable,
            "-m",
            "tfperf.autograding.sandbox",
            "launch",
            "--cpu-seconds",
            str(limits.cpu_seconds),
            "--memory",
            str(limits.memory_bytes),
            "--tmp",
            str(limits.tmp_bytes),
            "{connection_file}",
        ],
        "display_name": "Python 3 (tfperf grading sandbox)",
        "language": "python",
        "interrupt_mode": "signal",
        "metadata": {"debugger": False},
    }


def install(prefix: str | Path | None = None, limits: Limits = DEFAULT_LIMITS) -> Path:
    """Write the kernelspec into ``<prefix>/share/jupyter/kernels/tfperf-grading`` (default prefix:
    this environment, ``sys.prefix``). Fails with SandboxUnavailable where bubblewrap is missing."""
    find_bwrap()
    folder = Path(prefix or sys.prefix) / "share" / "jupyter" / "kernels" / KERNEL_NAME
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "kernel.json").write_text(json.dumps(kernelspec(limits), indent=1) + "\n")
    return folder


def installed() -> Path | None:
    """Where Jupyter finds the grading kernelspec, or None."""
    from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel

    try:
        return Path(KernelSpecManager().get_kernel_spec(KERNEL_NAME).resource_dir)
    except NoSuchKernel:
        return None


def require() -> None:
    """Raise SandboxUnavailable, saying what to do, unless the grading kernel can start here."""
    find_bwrap()
    if installed() is None:
        raise SandboxUnavailable(
            f"The grading kernel {KERNEL_NAME!r} is not installed: run `python -m tfperf.autograding.sandbox install` "
            "in the course's environment (see docs/instructors.md)."
        )


def check(
    code: str = "import os; print('sandboxed', os.getcwd())",
    limits: Limits = DEFAULT_LIMITS,
    workdir: str | None = None,
    hidden: tuple[str, ...] = (),
) -> subprocess.CompletedProcess:
    """Run ``code`` with this interpreter in the sandbox, as the kernel would run (in ``workdir``,
    default a scratch folder); raise SandboxUnavailable if bubblewrap cannot create the sandbox."""
    bwrap = find_bwrap()
    with tempfile.TemporaryDirectory(prefix="tfperf-sandbox-check-") as scratch:
        work = workdir or scratch
        argv = bwrap_argv(work, work, [sys.executable, "-c", code], limits=limits, bwrap=bwrap, hidden=hidden)
        result = subprocess.run(argv, capture_output=True, text=True, preexec_fn=limits.apply, timeout=600)
    if result.returncode != 0 and result.stderr.startswith("bwrap:"):
        raise SandboxUnavailable(
            f"bubblewrap cannot create the sandbox here: {result.stderr.strip()} "
            "(it needs user namespaces; in a container, run it with them allowed)."
        )
    return result


# Memory growth first, as every notebook's setup cell sets it (tfperf.course.start) before the GPU's first use: without
# it this check aborted with std::bad_alloc under the kernel's 8 GiB memory limit on an NVIDIA H200 (143771 MiB), where
# the kernel itself, with growth, graded chapters 1 and 5 (docs/measurements-gpu-nvidia-h200.md).
TF_CHECK = """
import json
import tensorflow as tf
from tfperf.autograding import sandbox
for gpu in tf.config.list_physical_devices("GPU"):
    tf.config.experimental.set_memory_growth(gpu, True)
confined = sandbox.confine_thread()  # as an exercise's worker does before the answer, TensorFlow already started
same = {}
for device in tf.config.list_logical_devices():
    with tf.device(device.name):
        x = tf.random.normal([256, 256])
        same[device.name] = float(tf.reduce_sum(x @ x)) == float(tf.reduce_sum(x @ x))
print(json.dumps({"tensorflow": tf.__version__, "same_twice": same, "landlock": confined}))
"""


def check_verdict(result: subprocess.CompletedProcess) -> tuple[bool, str]:
    """Whether TF_CHECK ran in the sandbox, and one line that says so, or says what went wrong."""
    try:
        found = json.loads(result.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        found = None
    if result.returncode != 0 or not found:
        errors = [line for line in result.stderr.splitlines() if line.strip() and not re.match(NOISE_PATTERN, line)]
        why = errors[-1].strip() if errors else "no error message"
        return (
            False,
            f"The grading sandbox does not work: TensorFlow failed inside it (exit {result.returncode}): {why}",
        )
    devices = ", ".join(found["same_twice"])
    unequal = [name for name, same in found["same_twice"].items() if not same]
    if not found["same_twice"] or unequal:
        return False, (
            f"The grading sandbox does not work: TensorFlow {found['tensorflow']} ran, but "
            + (f"gave different results for the same product on {', '.join(unequal)}" if unequal else "saw no device")
        )
    confinement = (
        "confined by Landlock as the workers are"
        if found.get("landlock")
        else "but this kernel has no Landlock: the workers run without it (their memory readable through /proc)"
    )
    return True, (
        f"The grading sandbox works: TensorFlow {found['tensorflow']} ran a matrix product on every device "
        f"inside bubblewrap ({devices}), {confinement}."
    )


# ---------------------------------------------------------------- what the answer's thread may open: Landlock
#
# An answer that got past the restriction it runs under (:mod:`tfperf.autograding.restricted`) could still open files
# by path through the libraries it may use (``pathlib``, NumPy's and TensorFlow's file functions), and one path of its
# own process reaches everything in it: ``/proc/self/mem`` (its memory: the report key, every check's code). So just
# before the answer cell, the worker's thread confines itself (:func:`confine_thread`): from then on, it and every thread and
# process it starts may read and write files anywhere the sandbox lets it, except under ``/proc``, where it may read
# only what TensorFlow, psutil and the course read of it (:data:`PROC_FILES`, :data:`PROC_TREES`); descriptors it
# already holds are unchanged. Landlock (Linux 5.13 and later, `docs.kernel.org/userspace-api/landlock.html`) needs no
# privilege, and a confinement cannot be undone or widened.
#
# Why the answer's thread and not the whole worker from its start: a process started under the confinement cannot read
# its own ``/proc/self`` (its folder there is new, outside every rule), and the tf.data service's servers that a given
# cell starts (chapter 7) then never served (a pipeline's iterator waited for them for good). So the given cells run
# unconfined, and what they started stays so. What that leaves: TensorFlow's own threads started before the answer
# (its thread pools) are not confined, so an answer's Python run on one of them (a ``tf.py_function`` in a
# ``tf.data`` pipeline) could still open ``/proc/self/mem``.
#
# Where the kernel has no Landlock (or it is turned off), :func:`confine_thread` says so and the worker goes on without it:
# the sandbox and the restriction still hold the rest (``python -m tfperf.autograding.sandbox check`` reports it).

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


def landlock_abi() -> int:
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


def confine_thread() -> bool:
    """Confine the calling thread (and the threads and processes it starts from now on) as this section's comment
    says: True; False where the kernel has no Landlock."""
    try:
        landlock_abi()
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tfperf.autograding.sandbox", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)

    def with_limits(p):
        p.add_argument("--cpu-seconds", type=int, default=Limits.cpu_seconds, help="CPU time of one notebook's run")
        p.add_argument("--memory", type=int, default=Limits.memory_bytes, help="bytes of private writable memory")
        p.add_argument("--tmp", type=int, default=Limits.tmp_bytes, help="bytes of the private /tmp")
        return p

    p_install = with_limits(sub.add_parser("install", help="write the tfperf-grading kernelspec"))
    p_install.add_argument("--prefix", help="install under PREFIX/share/jupyter/kernels (default: this environment)")
    with_limits(sub.add_parser("check", help="import TensorFlow and run an op on every device, sandboxed"))
    p_launch = with_limits(sub.add_parser("launch", help="(the kernelspec's command) start the sandboxed kernel"))
    p_launch.add_argument("connection_file")
    p_launch.add_argument("kernel_args", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    limits = Limits(args.cpu_seconds, args.memory, args.tmp)
    try:
        if args.command == "install":
            print(f"Installed the {KERNEL_NAME} kernel in {install(args.prefix, limits)}")
        elif args.command == "check":
            quiet_tensorflow()  # the kernel's setting; TensorFlow's remaining start-up lines are not shown
            works, verdict = check_verdict(check(TF_CHECK, limits))
            print(verdict)
            return 0 if works else 1
        else:
            launch(args.connection_file, args.kernel_args, limits=limits)
    except SandboxUnavailable as problem:
        if args.command == "check":
            print(f"The grading sandbox does not work: {problem}")
        else:
            print(f"tfperf.autograding.sandbox: {problem}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
