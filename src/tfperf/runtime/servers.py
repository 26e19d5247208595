"""TensorFlow servers in processes of their own, on loopback: the tf.data service (a dispatcher and its workers).

:class:`DataService` starts a dispatcher and ``workers`` workers, each a child process (``python -m
tfperf.runtime.servers``, forked by :mod:`tfperf.runtime.preloaded`'s launcher where it can) that binds a port the system chooses (``port=0``: never a port already taken) on this
machine and says which one on its first line. The parent gives the dispatcher's address
(``grpc://localhost:PORT``) to ``tf.data.experimental.service.distribute``. Nothing is left running: leaving the
``with`` block, :meth:`DataService.stop`, the garbage collector and the interpreter's exit stop every child, and a
child whose parent dies (a kernel restarted or killed) ends too: it watches its standard input, which only the
parent holds open.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
import weakref
from dataclasses import dataclass, field

#: Seconds a server may take to start (import TensorFlow, bind its port) before the start is given up.
START_SECONDS = 60.0


class ServerFailed(RuntimeError):
    """A server did not start (or stopped): its own last lines say why."""


@dataclass
class _Child:
    role: str
    process: subprocess.Popen
    address: str = ""
    lines: list[str] = field(default_factory=list)


def _argv(role: str, dispatcher: str | None = None, core: int | None = None) -> list[str]:
    argv = [sys.executable, "-m", "tfperf.runtime.servers", role, dispatcher or "-"]
    return argv + ([str(core)] if core is not None else [])


def _target(role: str, dispatcher: str | None = None, core: int | None = None) -> dict:
    """What the launcher's child runs (:func:`tfperf.runtime.preloaded.popen`): this module's :func:`main`."""
    return {"module": "tfperf.runtime.servers", "args": _argv(role, dispatcher, core)[3:]}


def worker_cores(workers: int) -> list[int]:
    """The core each of ``workers`` pinned workers runs on: this process's own cores in turn (a worker of one core each,
    as long as there are as many cores as workers)."""
    cores = sorted(os.sched_getaffinity(0))
    return [cores[i % len(cores)] for i in range(workers)]


def server_environment(base: dict[str, str] | None = None) -> dict[str, str]:
    """A server's environment: its parent's, TensorFlow's C++ log quieted, and no GPU. A server runs the pipeline's
    ops on its CPU; a process that saw the GPU could take GPU memory the notebook needs."""
    env = dict(os.environ if base is None else base)
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    env.update(PYTHONUNBUFFERED="1", CUDA_VISIBLE_DEVICES="-1")
    return env


def _start(role: str, dispatcher: str | None, timeout: float, core: int | None = None) -> _Child:
    from tfperf.runtime import preloaded

    process = preloaded.popen(  # forked by the launcher, which imported TensorFlow once; else a fresh process
        _target(role, dispatcher, core),
        _argv(role, dispatcher, core),
        env=server_environment(),
        stdin=subprocess.PIPE,
        new_session=True,  # an interrupt of the notebook's kernel is not sent to its servers
    )
    child = _Child(role, process)
    ready = threading.Event()

    def read() -> None:
        for line in process.stdout:
            child.lines = (child.lines + [line.rstrip()])[-20:]
            if line.startswith("ready ") and not child.address:
                child.address = line.split()[1]
                ready.set()
        ready.set()

    threading.Thread(target=read, daemon=True, name=f"tfperf-{role}-output").start()
    if not ready.wait(timeout) or not child.address:
        _stop([child])
        said = "\n".join(child.lines[-5:]) or "(nothing)"
        raise ServerFailed(f"The tf.data service's {role} did not start within {timeout:.0f} s. It said:\n{said}")
    return child


def _stop(children: list[_Child], grace: float = 5.0) -> None:
    for child in children:
        if child.process.poll() is None:
            try:
                child.process.stdin.close()  # the child's watcher ends it
            except OSError:
                pass
            child.process.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + grace
    for child in children:
        try:
            child.process.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            child.process.kill()
            child.process.wait()


_services: weakref.WeakSet = weakref.WeakSet()


def library_pids() -> set[int]:
    """The process ids of every server that a :class:`DataService` of this process runs now: the library's own
    processes, which a speed check tolerates beside the code it times (:mod:`tfperf.grading.guard`)."""
    return {pid for service in list(_services) for pid in service.pids()}


class DataService:
    """A tf.data service on this machine: one dispatcher and ``workers`` workers, each a process of its own.

    Use it as a context manager (or call :meth:`stop`); ``target`` is what ``distribute(service=...)`` takes.
    ``pinned``: each worker runs on one core of its own (:func:`worker_cores`), every thread of it: a worker is then
    what a machine of one core would be, and the workers' number is the only thing that adds cores.
    """

    def __init__(self, workers: int = 1, *, pinned: bool = False, timeout: float = START_SECONDS):
        if workers < 1:
            raise ValueError("a tf.data service needs at least one worker")
        self.pinned = pinned
        self._children: list[_Child] = []
        _services.add(self)
        self._finalizer = weakref.finalize(self, _stop, self._children)  # also runs at the interpreter's exit
        try:
            dispatcher = _start("dispatcher", None, timeout)
            self._children.append(dispatcher)
            self.target = dispatcher.address  # grpc://localhost:PORT
            for _ in range(workers):
                self.add_worker(timeout=timeout)
        except BaseException:
            self.stop()
            raise

    @property
    def workers(self) -> int:
        """How many workers are running now."""
        return sum(1 for c in self._children if c.role == "worker" and c.process.poll() is None)

    def add_worker(self, *, timeout: float = START_SECONDS) -> None:
        """Start one more worker (it registers with the dispatcher, which sends it work from then on)."""
        core = worker_cores(self.workers + 1)[-1] if self.pinned else None
        self._children.append(_start("worker", self.target.removeprefix("grpc://"), timeout, core))

    def cores(self) -> list[set[int]]:
        """The cores each running worker may use (read from the system)."""
        running = [c for c in self._children if c.role == "worker" and c.process.poll() is None]
        return [os.sched_getaffinity(c.process.pid) for c in running]

    def stop_worker(self) -> None:
        """Stop the last worker started (as if its machine failed)."""
        running = [c for c in self._children if c.role == "worker" and c.process.poll() is None]
        if running:
            _stop([running[-1]])

    def pids(self) -> list[int]:
        """The process ids of the servers still running."""
        return [c.process.pid for c in self._children if c.process.poll() is None]

    def stop(self) -> None:
        """Stop every server (workers first); safe to call more than once."""
        _stop(sorted(self._children, key=lambda c: c.role == "dispatcher"))

    def __enter__(self) -> DataService:
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


def _serve(role: str, dispatcher: str | None, core: int | None = None) -> None:
    """A child: start the server, say its address, serve until told to stop or the parent is gone. ``core``: pinned
    to it before TensorFlow starts a thread (threads inherit the affinity of the thread that made them)."""
    if core is not None:
        os.sched_setaffinity(0, {core})

    def watch_parent() -> None:
        sys.stdin.read()  # returns when the parent closes it or dies
        os._exit(0)

    threading.Thread(target=watch_parent, daemon=True).start()
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    from tfperf.runtime import logs

    service = logs.tensorflow().data.experimental.service
    if role == "dispatcher":
        server = service.DispatchServer(service.DispatcherConfig(port=0))
        print("ready", server.target, flush=True)
    else:
        server = service.WorkerServer(service.WorkerConfig(dispatcher_address=dispatcher, port=0))
        print("ready", f"worker-of-{dispatcher}", flush=True)
    server.join()


def main(args: list[str]) -> None:
    """``ROLE DISPATCHER|- [CORE]``: serve as :func:`_serve` does."""
    _serve(args[0], None if args[1] == "-" else args[1], int(args[2]) if len(args) > 2 else None)


if __name__ == "__main__":
    main(sys.argv[1:])
