"""A cluster of TensorFlow worker processes on this machine, for ``tf.distribute.MultiWorkerMirroredStrategy``.

:func:`run_workers` starts ``workers`` copies of a Python script, each with the ``TF_CONFIG`` that tells it the
cluster (every worker's ``localhost:PORT``) and its own index, waits for all of them, and returns what each printed
and how it ended. The ports are ones the system just handed out (bound to port 0, then released): taken ports are
never chosen. Nothing outlives the call: on a timeout, an error or an interrupt every worker is killed, and a worker
whose parent dies is killed by the kernel (``PR_SET_PDEATHSIG``). Each worker is forked by the notebook's launcher
(:mod:`tfperf.runtime.preloaded`: TensorFlow imported once, not once a worker); its parent is then the launcher,
which ends with the notebook.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from tfperf.runtime import preloaded


@dataclass(frozen=True)
class WorkerRun:
    """One worker's run: its index, exit status (None: killed at the timeout) and everything it printed."""

    index: int
    returncode: int | None
    output: str

    @property
    def ok(self) -> bool:
        return self.returncode == 0


def free_ports(count: int) -> list[int]:
    """``count`` distinct ports of this machine that were free a moment ago (the system's choice for port 0)."""
    sockets = []
    try:
        for _ in range(count):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind(("127.0.0.1", 0))
            sockets.append(s)
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def tf_config(ports: Sequence[int], index: int) -> str:
    """The ``TF_CONFIG`` of worker ``index`` in a cluster of workers on ``localhost`` at ``ports``."""
    cluster = {"worker": [f"localhost:{port}" for port in ports]}
    return json.dumps({"cluster": cluster, "task": {"type": "worker", "index": index}})


def visible_gpus(index: int, workers: int, gpus: int) -> str:
    """``CUDA_VISIBLE_DEVICES`` for worker ``index``: a GPU of its own where the machine has one for every worker,
    else none (``-1``). Workers that shared a GPU would each map most of its memory, and a cluster whose workers
    mixed GPUs and CPUs would put both device types in one collective group (within one process, on an H100,
    that failed: "joining a group with incompatible device type")."""
    return str(index) if gpus >= workers else "-1"


def run_workers(
    script: str | Path,
    workers: int = 2,
    *,
    args: Sequence[str] = (),
    timeout: float = 300.0,
    env: dict[str, str] | None = None,
    stop: dict[int, float] | None = None,
    stop_after: str | None = None,
    gpus: int | None = None,
) -> list[WorkerRun]:
    """Run ``script`` as ``workers`` worker processes of one cluster; each one's :class:`WorkerRun`.

    ``stop`` maps a worker's index to seconds after the start at which it is killed (SIGKILL), as a machine that
    fails would stop; the others see what TensorFlow does about it. With ``stop_after``, those seconds count from the
    first line that worker prints containing that text (its first step, say), however long it took to start. Every worker still running after ``timeout``
    seconds is killed (its ``returncode`` is then None). Each worker sees the GPUs :func:`visible_gpus` gives it,
    of the ``gpus`` this machine has (default: those TensorFlow sees here).
    """
    if workers < 1:
        raise ValueError("a cluster needs at least one worker")
    ports = free_ports(workers)
    if gpus is None:
        from tfperf.runtime import device

        gpus = len(device.gpu_names())
    base = dict(os.environ if env is None else env)
    base.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    base["PYTHONUNBUFFERED"] = "1"
    processes = []
    try:
        for index in range(workers):
            processes.append(
                preloaded.popen(  # forked by the launcher, which imported TensorFlow once; else a fresh process
                    {"script": str(script), "args": [str(a) for a in args]},
                    [sys.executable, str(script), *args],
                    env=dict(
                        base, TF_CONFIG=tf_config(ports, index), CUDA_VISIBLE_DEVICES=visible_gpus(index, workers, gpus)
                    ),
                    stdin=subprocess.DEVNULL,
                    die_with_parent=True,
                )
            )
        return _wait(processes, timeout, stop or {}, stop_after)
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()
            process.wait()


def _wait(
    processes: list[subprocess.Popen], timeout: float, stop: dict[int, float], stop_after: str | None = None
) -> list[WorkerRun]:
    import threading

    outputs = [""] * len(processes)
    start = time.monotonic()
    clocks = {index: None if stop_after else start for index in stop}  # when each stop's seconds start

    def read(index: int, process: subprocess.Popen) -> None:
        for line in process.stdout:
            outputs[index] += line
            if stop_after and stop_after in line and index in clocks and clocks[index] is None:
                clocks[index] = time.monotonic()

    readers = [threading.Thread(target=read, args=(i, p), daemon=True) for i, p in enumerate(processes)]
    for reader in readers:
        reader.start()
    killed_at_timeout = set()
    while any(p.poll() is None for p in processes):
        now = time.monotonic()
        for index, after in stop.items():
            since = clocks.get(index)
            if since is not None and now - since >= after and processes[index].poll() is None:
                processes[index].kill()
        if now - start >= timeout:
            for index, process in enumerate(processes):
                if process.poll() is None:
                    process.kill()
                    killed_at_timeout.add(index)
            break
        time.sleep(0.05)
    for process in processes:
        process.wait()
    for reader in readers:
        reader.join(5)
    return [WorkerRun(i, None if i in killed_at_timeout else p.returncode, outputs[i]) for i, p in enumerate(processes)]
