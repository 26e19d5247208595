"""Exercise workers forked from one sandboxed process that imported TensorFlow once: ``ForkServer``.

A fresh worker (:mod:`tfperf.autograding.worker`) spends about 3 s of a core importing TensorFlow, Keras and
the course's library before its first cell, for every exercise of every submission. The fork server is one
sandbox (bubblewrap, as :func:`tfperf.autograding.outside.worker_argv` builds it) whose process imports them
once and never runs learner code; for each exercise it forks a child that becomes the worker, its standard
streams the pipes the grading process sent it (``SCM_RIGHTS`` over a Unix socket). What makes a child as
clean as a fresh worker:

- the server only imports: TensorFlow's runtime is not started (no eager context, no device, no thread
  pool), and it checks so before it serves; a child starts it on its own;
- a child is a copy: what it changes in memory dies with it; the server makes itself non-dumpable, so a
  child cannot read or write the server's memory or file descriptors through ``/proc`` or ``ptrace``;
- after each exercise the server kills every other process in the sandbox (``kill(-1, SIGKILL)``: the
  child and whatever it left running), and empties the sandbox's ``/tmp``, before it forks the next;
- the grading process gives every child a working folder of its own and reads the same replies, output and
  CPU time (the sandbox's process tree) as from a fresh worker.

A child that stops the server costs its own exercise only: the grading process starts a new server for the
next. A notebook whose instructor's cells never import TensorFlow, Keras or the course's library gets a server that
imports the worker's own modules only (:func:`needs_the_course`). Where the server cannot serve (bubblewrap refuses, an import started TensorFlow's runtime), the
grading process starts fresh workers as before.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tfperf.runtime import processes
from tfperf.runtime.preloaded import fork_on_request, runtime_started, take_over

#: Imported by the server before it forks: what the workers of the course's exercises import.
PRELOADED = (
    "numpy",
    "tensorflow",
    "keras",
    "matplotlib",
    "matplotlib.pyplot",
    "tfperf.grading",
    "tfperf.autograding.worker",
    "tfperf.autograding.sandbox",  # the answer's thread confined (Landlock) before it runs
    "tfperf.autograding.check_kinds",  # the readings a worker serves (PROBES), and the kinds they serve
    "tfperf.measure.timing",
    "tfperf.lesson",
    "tfperf.experiments.tensors_and_devices",
    "tfperf.experiments.eager_vs_graph",
    "tfperf.experiments.keras_fit",
    "tfperf.experiments.tf_data",
    "tfperf.experiments.gpu_sync",
    "tfperf.experiments.device_ceilings",
    "tfperf.experiments.beyond_one_device",
    "tfperf.experiments.capstone",
    "tfperf.runtime.replicas",
    "tfperf.runtime.servers",
    "tfperf.runtime.cluster",
)
#: What a server imports where the instructor's notebook never imports TensorFlow, Keras or the course's library
#: (:func:`needs_the_course`): the worker's own modules only (TensorFlow's import is about 5 s of a core, for a
#: notebook that would never use it).
BARE = ("numpy", "tfperf.autograding.worker")
#: The top-level packages whose import by a notebook makes its server preload :data:`PRELOADED`.
COURSE_PACKAGES = frozenset({"tensorflow", "keras", "tfperf"})
#: Environment variables that the grading process sets per exercise: the only ones in which the
#: environment a child asks for may differ from the server's (any other difference starts a new server).
PER_EXERCISE = ("TFPERF_RECORD", "TFPERF_TIMED_OUTSIDE")
#: Seconds the grading process waits for the server's answer to a fork or a stop (each takes milliseconds).
ANSWER_SECONDS = 10
PR_SET_DUMPABLE = 4


class ServerStopped(RuntimeError):
    """The fork server is gone, or did not answer in time."""


# ---------------------------------------------------------------- the server (in the sandbox)


def _not_dumpable() -> None:
    """No process of the same user may read or write this one's memory or file descriptors."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_DUMPABLE, 0) failed")


def _others() -> list[int]:
    """The processes of this sandbox but its init (1) and this one, zombies left out."""
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit() or int(entry.name) in (1, os.getpid()):
            continue
        try:
            state = Path(entry.path, "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if state != "Z":
            found.append(int(entry.name))
    return found


def _kill_the_rest(child: int) -> bool:
    """Kill every process of the sandbox but this one and its init; reap ``child``. False where some
    still ran after many rounds (the server is then not fit to fork again)."""
    for _ in range(200):
        with contextlib.suppress(ProcessLookupError):
            os.kill(-1, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            while os.waitpid(-1, os.WNOHANG)[0] > 0:
                pass
        if not _others():
            with contextlib.suppress(ChildProcessError):
                os.waitpid(child, 0)
            return True
        time.sleep(0.005)
    return False


def _empty(folder: str, keep: str = "") -> None:
    """Remove what ``folder`` holds, but ``keep`` and the folders above it."""
    for entry in os.scandir(folder):
        if keep and (keep + "/").startswith(entry.path.rstrip("/") + "/"):
            continue
        with contextlib.suppress(OSError):
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path, ignore_errors=True)
            else:
                os.unlink(entry.path)


def _become_worker(control: socket.socket, fds: list[int], request: dict) -> None:
    """In the child: take the pipes as standard streams, the working folder and environment, and serve as
    :mod:`tfperf.autograding.worker` does. Never returns."""
    code = 1
    try:
        control.close()
        workdir = str(request["workdir"])
        take_over(fds, workdir, request["env"])  # NumPy reseeded there; Python's ``random`` reseeds itself at a fork
        sys.path.insert(0, workdir)  # as for ``python -m`` started there
        sys.argv = [sys.modules["tfperf.autograding.worker"].__file__]
        from tfperf.autograding.worker import _worker_main

        _worker_main()
        code = 0
    except BaseException:  # noqa: BLE001 (the grading process sees the worker stop)
        import traceback

        traceback.print_exc()
    finally:
        with contextlib.suppress(Exception):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(code)


def needs_the_course(cells: list[str]) -> bool:
    """Whether code ``cells`` (the instructor's notebook) import TensorFlow, Keras or the course's library: then
    a server preloads them (:data:`PRELOADED`), else only the worker's own modules (:data:`BARE`). A cell that
    does not parse counts as importing them."""
    import ast

    for source in cells:
        try:
            tree = ast.parse(source)
        except SyntaxError:
            return True
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names = [node.module]
            else:
                continue
            if any(name.split(".")[0] in COURSE_PACKAGES for name in names):
                return True
    return False


def serve(control: socket.socket, root: str, course: bool = True) -> None:
    """The server: import (``course``: :data:`PRELOADED` and every course module, else :data:`BARE`), say whether
    it can fork clean workers, then fork one for each request (each child's working folder inside ``root``)."""
    _not_dumpable()
    os.chdir("/")
    failed = []
    for name in PRELOADED if course else BARE:
        try:
            importlib.import_module(name)
        except Exception as err:  # noqa: BLE001 (a child imports it again, and fails there as a fresh worker would)
            failed.append(f"{name}: {type(err).__name__}")
    if course:
        try:  # what the setup cell's guard.arm() imports: every course module
            from tfperf.grading import guard
            from tfperf.runtime import logs

            with logs.captured_stderr():
                guard.import_course_modules()
        except Exception as err:  # noqa: BLE001 (as above)
            failed.append(f"the course's modules: {type(err).__name__}")
    problem = runtime_started()
    control.send(json.dumps({"ready": problem is None, "problem": problem, "not_imported": failed}).encode())
    if problem is not None:
        return
    while True:
        child = fork_on_request(control, lambda fds, request: _become_worker(control, fds, request))
        if child is None:
            return
        message = control.recv(1 << 16)  # "stop", or nothing: the grading process is gone
        clean = _kill_the_rest(child)
        _empty("/tmp", keep=root)  # the children's folders may lie in it
        control.send(json.dumps({"stopped": True, "clean": clean}).encode())
        if not message or not clean:
            return


def main() -> None:
    control = socket.socket(fileno=int(sys.argv[1]))
    try:
        serve(control, os.path.realpath(sys.argv[2]), course=sys.argv[3:4] != ["bare"])
    except (OSError, ValueError):
        pass  # the grading process went away, or sent what it never sends
    finally:
        os._exit(0)  # nothing imported may run at exit


# ---------------------------------------------------------------- the grading process's side


class ForkedWorker:
    """One exercise's worker, forked by a :class:`ForkServer`: the parts of ``subprocess.Popen`` that
    :func:`tfperf.autograding.outside.grade_exercise` uses. ``pid`` is the server's sandbox: its process tree
    holds the worker and whatever the worker started."""

    def __init__(self, server: ForkServer, workdir: str, env: dict):
        self.server = server
        ends = [os.pipe() for _ in range(3)]  # stdin, stdout, stderr: (read, write) each
        theirs = [ends[0][0], ends[1][1], ends[2][1]]
        try:
            forked = server.ask({"workdir": workdir, "env": env}, theirs)
        finally:
            for fd in theirs:
                os.close(fd)
        self.stdin = os.fdopen(ends[0][1], "wb")
        self.stdout = os.fdopen(ends[1][0], "rb")
        self.stderr = os.fdopen(ends[2][0], "rb")
        self.pid = server.process.pid
        # the worker as seen from here, found before it runs anything but the worker's own code: the process
        # whose main thread serves the requests (tfperf.runtime.processes.reading)
        self.serving = processes.host_pid(self.pid, forked) if isinstance(forked, int) else None
        self.returncode: int | None = None

    def kill(self) -> None:
        """Stop the worker and everything it started (the server kills them); once only."""
        if self.returncode is None:
            self.returncode = -signal.SIGKILL
            with contextlib.suppress(OSError):
                self.stdin.close()
            self.server.stop_child()

    def wait(self, timeout: float | None = None) -> int:
        self.kill()
        return self.returncode

    def poll(self) -> int | None:
        return self.returncode


class ForkServer:
    """A sandboxed server that forks exercise workers (see the module's docstring)."""

    def __init__(self, env: dict, sandbox_argv, *, start_seconds: float = 60, course: bool = True):
        """``sandbox_argv(root, command)``: the bubblewrap command that runs ``command`` with ``root``
        writable (the children's working folders go inside it). ``course``: preload TensorFlow and the course's
        library (:data:`PRELOADED`), else the worker's modules only (:data:`BARE`)."""
        self.env = dict(env)
        self.course = course
        self.root = tempfile.mkdtemp(prefix="tfperf-forkserver-")
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.control = ours
        command = [sys.executable, "-P", "-m", "tfperf.autograding.forkserver", str(theirs.fileno()), self.root]
        command += [] if course else ["bare"]
        from tfperf.autograding import sandbox

        self.process = subprocess.Popen(
            sandbox_argv(self.root, command),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            cwd=self.root,
            env=self.env,
            pass_fds=(theirs.fileno(),),
            preexec_fn=sandbox.Limits().apply,
        )
        theirs.close()
        self.busy = False
        try:
            self.ready = self._answer(start_seconds)
        except ServerStopped:
            self.close()
            raise
        if not self.ready.get("ready"):
            self.close()
            raise ServerStopped(f"the fork server cannot fork clean workers: {self.ready.get('problem')}")

    def _answer(self, seconds: float) -> dict:
        self.control.settimeout(seconds)
        try:
            message = self.control.recv(1 << 16)
        except (OSError, TimeoutError) as err:
            raise ServerStopped(f"the fork server did not answer ({err})") from err
        if not message:
            raise ServerStopped("the fork server stopped")
        try:
            answer = json.loads(message)
        except ValueError as err:
            raise ServerStopped("the fork server sent what it never sends") from err
        if not isinstance(answer, dict):
            raise ServerStopped("the fork server sent what it never sends")
        return answer

    def alive(self) -> bool:
        return self.process.poll() is None and self.control.fileno() >= 0

    def serves(self, env: dict, course: bool = True) -> bool:
        """Whether a child forked here gets ``env`` (the server's own but for :data:`PER_EXERCISE`), with what
        ``course`` asks preloaded (a server that preloaded the course serves a notebook that does not need it)."""

        def without(e: dict) -> dict:
            return {k: v for k, v in e.items() if k not in PER_EXERCISE}

        return self.alive() and not self.busy and without(env) == without(self.env) and (self.course or not course)

    def ask(self, request: dict, fds: list[int]) -> object:
        """Have the server fork a worker for ``request`` with the descriptors ``fds``: its pid in the sandbox."""
        try:
            socket.send_fds(self.control, [json.dumps(request).encode()], fds)
            answer = self._answer(ANSWER_SECONDS)
        except (OSError, ServerStopped) as err:
            self.close()
            raise OSError(f"the fork server did not fork a worker ({err})") from err
        if "forked" not in answer:
            self.close()
            raise OSError("the fork server did not fork a worker")
        self.busy = True
        return answer["forked"]

    def stop_child(self) -> None:
        """Have the server kill the child and everything in the sandbox but itself; where it does not answer
        in time, or could not, stop the server (and with it the whole sandbox)."""
        try:
            self.control.send(b"stop")
            answer = self._answer(ANSWER_SECONDS)
            if not (answer.get("stopped") and answer.get("clean")):
                raise ServerStopped("the fork server could not stop everything the worker started")
        except (OSError, ServerStopped):
            self.close()
        self.busy = False

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.control.close()
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        shutil.rmtree(self.root, ignore_errors=True)


class ForkServers:
    """The grading process's fork server: one at a time, started on first use, replaced where the environment
    differs or the last one stopped; closed at exit. ``worker()`` gives None where no server can serve."""

    def __init__(self) -> None:
        self.server: ForkServer | None = None
        self.refused: set[str] = set()  # environments (as keys) for which a server could not start
        atexit.register(self.close)

    def worker(self, env_for, sandbox_argv, *, course: bool = True) -> tuple[ForkedWorker, str] | None:
        """A forked worker in a new working folder inside the server's root (both returned), its environment
        ``env_for(folder)``, from a server that preloaded the course where ``course`` (:func:`needs_the_course`);
        None where no server can serve it."""
        env = env_for("")
        key = json.dumps([course, sorted((k, v) for k, v in env.items() if k not in PER_EXERCISE)])
        for _ in range(2):  # a server that stopped since its last exercise is replaced once
            if key in self.refused:
                return None
            if self.server is None or not self.server.serves(env, course):
                self.close()
                try:
                    self.server = ForkServer(env, sandbox_argv, course=course)
                except (OSError, ServerStopped):
                    self.refused.add(key)
                    return None
            _empty(self.server.root)  # what an earlier child left beside its own folder
            workdir = tempfile.mkdtemp(prefix="exercise-", dir=self.server.root)
            try:
                return ForkedWorker(self.server, workdir, env_for(workdir)), workdir
            except OSError:
                self.close()
        return None

    def close(self) -> None:
        if self.server is not None:
            self.server.close()
            self.server = None


if __name__ == "__main__":
    main()
