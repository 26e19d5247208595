"""Processes forked from one that imported TensorFlow once: the course's servers and cluster workers (``popen``).

A tf.data service's server (:mod:`tfperf.runtime.servers`) and a cluster's worker (:mod:`tfperf.runtime.cluster`) are
Python processes that import TensorFlow: about 2.5 s of a core each, and chapter 7 starts fourteen of them. The
*launcher* is one process per notebook that imports TensorFlow and Keras once, then forks a child for each process
asked of it; the child takes its standard streams, environment and working folder, then becomes the server or runs
the script. What makes a child what a fresh process would be:

- the launcher only imports: TensorFlow's runtime is not started (no eager context, no device, no Python thread;
  checked before it serves, as the grading's fork server checks), so each child starts it with its own environment
  (``CUDA_VISIBLE_DEVICES``, ``TF_CONFIG``, read when the runtime starts);
- environment variables that TensorFlow reads while it is imported (``TF_CPP_MIN_LOG_LEVEL``) are the launcher's:
  it is started with the notebook's, and 3 where unset, as both callers ask of their children;
- a child is a copy: what it changes in memory dies with it; its exit status reaches the parent through the launcher.

The launcher ends when its parent does (its control socket closes), and so do the children that asked to die with
their parent (``die_with_parent``: the cluster's workers); the servers watch their standard input as before. Where no
launcher can start (another system, an import that started TensorFlow's runtime), ``popen`` starts a fresh process.
"""

from __future__ import annotations

import contextlib
import ctypes
import importlib
import json
import os
import select
import signal
import socket
import subprocess
import sys
import threading
import time
import traceback

#: Imported by the launcher before it forks: what a server or a cluster's worker imports.
PRELOADED = ("numpy", "tensorflow", "keras", "tfperf.runtime.logs", "tfperf.runtime.servers")
#: Seconds the parent waits for the launcher to be ready (its imports), and for the answer to a fork.
START_SECONDS = 60.0
ANSWER_SECONDS = 10.0
_PR_SET_PDEATHSIG = 1


# ---------------------------------------------------------------- the launcher


def runtime_started() -> str | None:
    """Why a fork of this process would not be a fresh one, or None: TensorFlow's eager context made (its thread
    pools, its devices) or a Python thread running beside the main one. (The grading's fork server asks too.)"""
    if threading.active_count() != 1:
        return f"{threading.active_count() - 1} Python threads run beside the main one"
    context = sys.modules.get("tensorflow.python.eager.context")
    if context is not None and getattr(context.context(), "_context_handle", None) is not None:
        return "TensorFlow's runtime was started while importing"
    return None


def take_over(fds: list[int], cwd: str, env: dict) -> None:
    """In a forked child: the descriptors ``fds`` as its standard streams (closed under their other numbers),
    ``cwd`` as its folder, ``env`` as its whole environment, and NumPy's global generator drawn from fresh entropy,
    not the parent's. (The grading's fork server's children start so too.)"""
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
    for fd in fds:
        if fd > 2:
            os.close(fd)
    os.chdir(cwd)
    os.environ.clear()
    os.environ.update({str(k): str(v) for k, v in dict(env).items()})
    import numpy as np

    np.random.seed()


def _become(control: socket.socket, wakeup: tuple[int, int], fds: list[int], request: dict) -> None:
    """In the child: take the streams, folder and environment asked for, run the target; never returns."""
    code = 1
    try:
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        control.close()
        for fd in wakeup:
            os.close(fd)
        take_over(fds, request["cwd"], request["env"])
        if request.get("new_session"):
            os.setsid()
        if request.get("die_with_parent"):
            _die_with_parent()
        sys.stdout.reconfigure(line_buffering=True, write_through=True)
        sys.stderr.reconfigure(line_buffering=True, write_through=True)
        if "script" in request:
            import runpy

            sys.argv = [request["script"], *request["args"]]
            sys.path[0] = os.path.dirname(os.path.abspath(request["script"]))
            runpy.run_path(request["script"], run_name="__main__")
        else:
            sys.argv = [request["module"], *request["args"]]
            importlib.import_module(request["module"]).main(request["args"])
        code = 0
    except SystemExit as stop:
        code = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
        if not isinstance(stop.code, int | None):
            print(stop.code, file=sys.stderr)
    except BaseException:  # noqa: BLE001 (printed, as a fresh interpreter would)
        traceback.print_exc()
    finally:
        with contextlib.suppress(Exception):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(code)


def serve(control: socket.socket) -> None:
    """The launcher: import :data:`PRELOADED`, say whether it can fork fresh processes, then fork one per request and
    report each one's exit status; return when the parent is gone."""
    from tfperf.runtime import logs

    logs.quiet_tensorflow()
    failed = []
    for name in PRELOADED:
        try:
            importlib.import_module(name)
        except Exception as err:  # noqa: BLE001 (the child imports it again, and fails there as a fresh one would)
            failed.append(f"{name}: {type(err).__name__}")
    problem = runtime_started()
    control.send(json.dumps({"ready": problem is None, "problem": problem, "not_imported": failed}).encode())
    if problem is not None:
        return
    wakeup = os.pipe()
    for fd in wakeup:
        os.set_blocking(fd, False)
    signal.set_wakeup_fd(wakeup[1])
    signal.signal(signal.SIGCHLD, lambda *_: None)  # wakes the select below through the wakeup pipe
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    while True:
        readable, _, _ = select.select([control, wakeup[0]], [], [])
        if wakeup[0] in readable:
            with contextlib.suppress(BlockingIOError):
                os.read(wakeup[0], 4096)
        while True:  # every child that ended: its status to the parent
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            control.send(json.dumps({"exited": pid, "code": os.waitstatus_to_exitcode(status)}).encode())
        if control in readable and fork_on_request(control, lambda fds, r: _become(control, wakeup, fds, r)) is None:
            return


def fork_on_request(control: socket.socket, become) -> int | None:
    """Take a request and the descriptors sent with it on ``control``, fork a child that calls ``become(fds,
    request)`` (which never returns), and tell the parent the child's pid: that pid, or None where the parent is gone.
    (The grading's fork server forks so too.)"""
    message, fds, _, _ = socket.recv_fds(control, 1 << 20, 3)
    if not message:
        return None
    request = json.loads(message)
    sys.stdout.flush()
    sys.stderr.flush()
    child = os.fork()
    if child == 0:
        become(fds, request)
    for fd in fds:
        os.close(fd)
    control.send(json.dumps({"forked": child}).encode())
    return child


def main() -> None:
    control = socket.socket(fileno=int(sys.argv[1]))
    try:
        serve(control)
    except (OSError, ValueError):
        pass  # the parent went away, or sent what it never sends
    finally:
        os._exit(0)  # nothing imported may run at exit


# ---------------------------------------------------------------- the parent's side


class LauncherStopped(RuntimeError):
    """The launcher is gone, did not answer in time, or cannot fork fresh processes."""


class Child:
    """A process forked by the launcher: the parts of ``subprocess.Popen`` that the servers and the cluster use
    (``pid``, ``stdin``, ``stdout``, ``poll``, ``wait``, ``kill``, ``terminate``, ``send_signal``, ``returncode``)."""

    def __init__(self, launcher: Launcher, pid: int, stdin, stdout):
        self.launcher, self.pid, self.stdin, self.stdout = launcher, pid, stdin, stdout
        self.args = [f"<forked by the launcher {launcher.process.pid}>"]

    @property
    def returncode(self) -> int | None:
        return self.launcher.exit_code(self.pid)

    def poll(self) -> int | None:
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        code = self.launcher.wait_for(self.pid, timeout)
        if code is None:
            raise subprocess.TimeoutExpired(self.args, timeout)
        return code

    def send_signal(self, sig: int) -> None:
        if self.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, sig)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


class Launcher:
    """The parent's end of a launcher process (see the module's docstring)."""

    def __init__(self, start_seconds: float = START_SECONDS):
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.control = ours
        env = dict(os.environ)
        env.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tfperf.runtime.preloaded", str(theirs.fileno())],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=env,
            pass_fds=(theirs.fileno(),),
            start_new_session=True,  # an interrupt of the notebook's kernel is not sent to it
        )
        theirs.close()
        self.lock = threading.Lock()  # one fork asked at a time
        self.changed = threading.Condition()
        self.codes: dict[int, int] = {}
        self.answers: list[dict] = []
        self.gone = False
        self.control.settimeout(start_seconds)
        try:
            ready = json.loads(self.control.recv(1 << 16) or b"{}")
        except (OSError, ValueError) as err:
            self.close()
            raise LauncherStopped(f"the launcher did not start ({err})") from err
        self.control.settimeout(None)
        if not ready.get("ready"):
            self.close()
            raise LauncherStopped(f"the launcher cannot fork fresh processes: {ready.get('problem')}")
        threading.Thread(target=self._read, daemon=True, name="tfperf-launcher").start()

    def _read(self) -> None:
        while True:
            try:
                message = self.control.recv(1 << 16)
                answer = json.loads(message) if message else None
            except (OSError, ValueError):
                answer = None
            with self.changed:
                if not isinstance(answer, dict):
                    self.gone = True
                    self.changed.notify_all()
                    return
                if "exited" in answer:
                    self.codes[int(answer["exited"])] = int(answer["code"])
                else:
                    self.answers.append(answer)
                self.changed.notify_all()

    def alive(self) -> bool:
        return not self.gone and self.process.poll() is None

    def exit_code(self, pid: int) -> int | None:
        """The child's exit status once it ended (negative: the signal that ended it), else None."""
        with self.changed:
            if pid in self.codes:
                return self.codes[pid]
            if self.gone:  # its statuses can no longer come: ended, as far as this process can tell
                try:
                    os.kill(pid, 0)
                except ProcessLookupError:
                    self.codes[pid] = -signal.SIGKILL
                    return self.codes[pid]
            return None

    def wait_for(self, pid: int, timeout: float | None) -> int | None:
        with self.changed:
            self.changed.wait_for(lambda: pid in self.codes or self.gone, timeout)
        code = self.exit_code(pid)
        while code is None and self.gone and (timeout is None):  # the launcher died: wait for the pid to go
            time.sleep(0.05)
            code = self.exit_code(pid)
        return code

    def spawn(self, target: dict, *, env: dict, cwd: str, stdin_fd: int, new_session: bool, die_with_parent: bool):
        """Fork a child that runs ``target`` (``{"module": name, "args": [...]}``, whose ``main(args)`` it calls, or
        ``{"script": path, "args": [...]}``), its stdin ``stdin_fd``, stdout and stderr one pipe: a :class:`Child`."""
        out_read, out_write = os.pipe()
        request = {**target, "env": env, "cwd": cwd, "new_session": new_session, "die_with_parent": die_with_parent}
        with self.lock:
            try:
                socket.send_fds(self.control, [json.dumps(request).encode()], [stdin_fd, out_write, out_write])
                with self.changed:
                    if not self.changed.wait_for(lambda: self.answers or self.gone, ANSWER_SECONDS) or self.gone:
                        raise LauncherStopped("the launcher did not fork")
                    answer = self.answers.pop(0)
            except (OSError, LauncherStopped) as err:
                os.close(out_read)
                raise LauncherStopped(f"the launcher did not fork ({err})") from err
            finally:
                os.close(out_write)
        return int(answer["forked"]), out_read

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.control.close()
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()


_launcher: Launcher | None = None
_launcher_lock = threading.Lock()
_refused = False


def launcher() -> Launcher | None:
    """This process's launcher, started on first use (and again where it stopped); None where none can start."""
    global _launcher, _refused
    with _launcher_lock:
        if _refused or sys.platform != "linux":
            return None
        if _launcher is None or not _launcher.alive():
            try:
                _launcher = Launcher()
            except (OSError, LauncherStopped):
                _refused = True
                return None
        return _launcher


def launcher_pid() -> int | None:
    """The launcher's process id while it runs (a process of the library, which speed checks tolerate)."""
    current = _launcher
    return current.process.pid if current is not None and current.alive() else None


def popen(
    target: dict,
    fallback_argv: list[str],
    *,
    env: dict,
    stdin: int | None = subprocess.DEVNULL,
    new_session: bool = False,
    die_with_parent: bool = False,
):
    """A process running ``target`` (see :meth:`Launcher.spawn`), forked by the launcher, its stdout and stderr one
    text pipe and its stdin a pipe (``stdin=subprocess.PIPE``) or /dev/null; where no launcher serves, a fresh
    ``subprocess.Popen(fallback_argv)`` with the same streams."""
    found = launcher()
    if found is not None:
        theirs = ours = None
        if stdin == subprocess.PIPE:
            theirs, ours = os.pipe()
        else:
            theirs = os.open(os.devnull, os.O_RDONLY)
        try:
            pid, out_read = found.spawn(
                target,
                env=env,
                cwd=os.getcwd(),
                stdin_fd=theirs,
                new_session=new_session,
                die_with_parent=die_with_parent,
            )
        except LauncherStopped:
            if ours is not None:
                os.close(ours)
        else:
            return Child(
                found,
                pid,
                os.fdopen(ours, "w", encoding="utf-8") if ours is not None else None,
                os.fdopen(out_read, "r", encoding="utf-8", errors="replace"),
            )
        finally:
            os.close(theirs)
    return subprocess.Popen(
        fallback_argv,
        stdin=stdin,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
        start_new_session=new_session,
        preexec_fn=_die_with_parent if die_with_parent else None,
    )


def _die_with_parent() -> None:
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


if __name__ == "__main__":
    main()
