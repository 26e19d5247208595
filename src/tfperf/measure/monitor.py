"""How busy the compute device is, sampled in the background while an experiment runs.

On an NVIDIA GPU the samples come from NVML (the ``pynvml`` module of the
``nvidia-ml-py`` package): the GPU's own utilization, the percentage of time in which a
kernel was running. Elsewhere they come from :mod:`psutil`: the CPU time this process
used, as a percentage of all cores. Either way the result is a timeline, a list of
records ``{"t": seconds since start, "busy": percent, "source": "nvml" | "cpu"}``::

    with monitor.Monitor() as m:
        train()
    plot(m.timeline)

NVML averages utilization over its own sampling period (from 1/6 s to 1 s, depending on
the GPU), so a run should last a few seconds for a readable timeline.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import Any

from tfperf.measure import timing

Record = dict[str, Any]
SOURCES = ("nvml", "cpu")


class _CpuSource:
    """This process's CPU time per second of wall time, as a percentage of all cores."""

    name = "cpu"

    def __init__(self) -> None:
        import psutil

        self._process = psutil.Process()
        self._cores = psutil.cpu_count() or os.cpu_count() or 1
        self._last = (timing.now(), self._cpu_seconds())

    def _cpu_seconds(self) -> float:
        times = self._process.cpu_times()
        return times.user + times.system

    def read(self) -> float:
        now, cpu = timing.now(), self._cpu_seconds()
        then, cpu_then = self._last
        self._last = (now, cpu)
        return min(100.0, max(0.0, 100.0 * (cpu - cpu_then) / max(now - then, 1e-9) / self._cores))

    def close(self) -> None:
        pass


class _NvmlSource:
    """Utilization of one NVIDIA GPU, as NVML reports it."""

    name = "nvml"

    def __init__(self, index: int = 0) -> None:
        import pynvml

        self._nvml = pynvml
        pynvml.nvmlInit()
        try:
            self._handle = pynvml.nvmlDeviceGetHandleByIndex(index)
        except Exception:
            pynvml.nvmlShutdown()
            raise

    def read(self) -> float:
        return float(self._nvml.nvmlDeviceGetUtilizationRates(self._handle).gpu)

    def close(self) -> None:
        self._nvml.nvmlShutdown()


def nvml_available() -> bool:
    """Whether NVML can be loaded and reports at least one GPU."""
    try:
        import pynvml

        pynvml.nvmlInit()
    except Exception:  # no package, no driver, no GPU
        return False
    try:
        return pynvml.nvmlDeviceGetCount() > 0
    except Exception:
        return False
    finally:
        pynvml.nvmlShutdown()


def _open(source: str, gpu_index: int):
    if source == "auto":
        source = "nvml" if nvml_available() else "cpu"
    if source == "nvml":
        return _NvmlSource(gpu_index)
    if source == "cpu":
        return _CpuSource()
    raise ValueError(f"Unknown source {source!r}; choose from auto, {', '.join(SOURCES)}.")


class Monitor:
    """Sample device utilization every ``interval`` seconds while a ``with`` block runs.

    ``source`` is ``"auto"`` (NVML when it sees a GPU, else the process's CPU use),
    ``"nvml"`` or ``"cpu"``. After the block, :attr:`timeline` holds the records.
    """

    def __init__(self, *, interval: float = 0.05, source: str = "auto", gpu_index: int = 0):
        if interval <= 0:
            raise ValueError("interval must be positive")
        self.interval = interval
        self._source_name = source
        self._gpu_index = gpu_index
        self.timeline: list[Record] = []
        self.source: str | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def __enter__(self) -> Monitor:
        self._source = _open(self._source_name, self._gpu_index)
        self.source = self._source.name
        self.timeline = []
        self._stop.clear()
        self._start = timing.now()
        self._thread = threading.Thread(target=self._run, name="tfperf-monitor", daemon=True)
        self._thread.start()
        return self

    def _sample(self) -> None:
        busy = self._source.read()
        self.timeline.append({"t": timing.now() - self._start, "busy": busy, "source": self.source})

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self._sample()

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        try:
            self._sample()  # the last stretch, so even a short block has one record
        finally:
            self._source.close()


def busy_while(fn: Callable[[], Any], *, interval: float = 0.05, source: str = "auto") -> tuple[Any, list[Record]]:
    """Run ``fn()`` under a :class:`Monitor`; return its result and the timeline."""
    with Monitor(interval=interval, source=source) as m:
        result = fn()
    return result, m.timeline


def mean_busy(timeline: list[Record]) -> float:
    """The average utilization of a timeline, in percent (0 for an empty one)."""
    return sum(r["busy"] for r in timeline) / len(timeline) if timeline else 0.0
