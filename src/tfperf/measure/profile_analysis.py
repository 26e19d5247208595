"""The TensorFlow Profiler's own analysis of a capture, read with XProf's converter (the ``xprof`` package).

:func:`capture` runs a block under ``tf.profiler.experimental`` as one marked step (a ``Trace`` with a ``step_num``:
without step markers, and Keras 3's ``fit`` sets none, XProf's step-time breakdown says "No step marker observed").
XProf turns the capture (``<logdir>/plugins/profile/<run>/<host>.xplane.pb``) into the data of its tools
(``xprof.convert.raw_to_tool_data.xspace_to_tool_data``: the data its web pages show); :func:`input_wait` reads its
input-pipeline analyzer's table of tf.data's iterators: ``Iterator::Root`` is a pipeline's outermost iterator, one
call a batch taken, and its inclusive time is the time the training spent waiting in ``GetNext`` for its batches,
whatever the stages below did meanwhile.

XProf calls a program "HIGHLY input-bound" from 20% of its step time waiting for input, "MODERATELY" from 5%
(``kHighlyInfeedBoundThresholdInPercent``, ``kModeratelyInfeedBoundThresholdInPercent`` in its
``xprof/convert/op_stats_to_input_pipeline_analysis.cc``).
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tfperf.measure import timing
from tfperf.runtime import processes

#: XProf's thresholds (fractions of the step time) for a program that is highly and moderately input-bound.
HIGHLY_INPUT_BOUND = 0.20
MODERATELY_INPUT_BOUND = 0.05
#: tf.data's name for the outermost iterator of a pipeline (one call a batch taken).
ROOT = "Iterator::Root"
#: The name of the step that :func:`capture` marks.
STEP_NAME = "train"
#: Iterators that hand elements on without doing the pipeline's work (the last part of a stage's name).
HANDING_ON = (
    "Prefetch",
    "Root",
    "ForeverRepeat",
    "Repeat",
    "Model",
    "Options",
    "MaxIntraOpParallelism",
    "PrivateThreadPool",
    "FiniteTake",
    "Take",
)


def _hands_on(name: str) -> bool:
    last = name.split("::")[-1].split("[")[0]
    return last in HANDING_ON


class ProfilerAnalysisUnavailable(RuntimeError):
    """XProf is not installed, or could not convert the capture."""


@dataclass
class CpuUse:
    """The machine's CPU time over a span, and the part of it that other processes used: where the cores were
    full and others held some, the pipeline's threads may have waited for a core rather than for their own work."""

    cores: int  #: the machine's cores (the ``cpuN`` lines of /proc/stat)
    busy: float  #: cores' worth busy over the span, every process and the kernel's work for them (/proc/stat)
    others: float  #: cores' worth the rest of the machine used: ``busy`` less this process's and its children's

    @property
    def contended(self) -> bool:
        """The cores nearly full (:data:`FULL`) and others holding at least :data:`ELSEWHERE` of a core's worth."""
        return self.busy >= FULL * self.cores and self.others >= ELSEWHERE


#: The share of the machine's cores busy from which a span counts as full, and the cores' worth of other processes'
#: time from which they count as competing (the tool's choices: a busy shell or editor stays under both).
FULL, ELSEWHERE = 0.9, 0.5
#: The shortest span read (seconds): the counters advance in clock ticks (10 ms where ``USER_HZ`` is 100), so a span
#: of seconds reads them to a few percent and one of a tenth of a second does not.
SHORTEST_SPAN = 0.5


def cpu_counters() -> tuple[float, float, float, int] | None:
    """Now: the machine's busy CPU seconds (/proc/stat's first line: user, nice, system, irq and softirq; not idle,
    iowait, nor steal, the time a hypervisor gave to other machines), the CPU seconds of this process and every process
    below it (:func:`tfperf.runtime.processes.busy_seconds`), the wall clock, and the cores; None where /proc/stat
    cannot be read (not Linux)."""
    tick = os.sysconf("SC_CLK_TCK")
    try:
        lines = Path("/proc/stat").read_text().splitlines()
        user, nice, system, _idle, _iowait, irq, softirq = (int(v) for v in lines[0].split()[1:8])
    except (OSError, ValueError, IndexError):
        return None
    cores = sum(1 for line in lines[1:] if line.startswith("cpu"))
    # this process's and its children's (a script's own worker processes are not other processes)
    own = processes.busy_seconds(os.getpid())
    return (user + nice + system + irq + softirq) / tick, own, timing.now(), max(cores, 1)


def cpu_use_since(start: tuple[float, float, float, int] | None) -> CpuUse | None:
    """The :class:`CpuUse` from ``start`` (what :func:`cpu_counters` returned then) to now; None where either could
    not be read or the span is shorter than :data:`SHORTEST_SPAN`."""
    end = cpu_counters()
    if start is None or end is None or end[2] - start[2] < SHORTEST_SPAN:
        return None
    wall = end[2] - start[2]
    busy = (end[0] - start[0]) / wall
    return CpuUse(cores=end[3], busy=busy, others=max(0.0, busy - (end[1] - start[1]) / wall))


@dataclass
class InputWait:
    """How long a profiled step waited for its input, from XProf's input-pipeline analyzer."""

    seconds: float  #: time inside tf.data's ``Iterator::Root`` (the training waiting for batches), all pipelines
    step_seconds: float  #: the wall time of the profiled step
    calls: int  #: batches taken from tf.data pipelines (calls of ``Iterator::Root``)
    conclusion: str = ""  #: XProf's own sentence about the input, where its step-time breakdown found the step
    stages: dict[str, float] = field(default_factory=dict)  #: each iterator's self time in seconds, by its name
    cpu: CpuUse | None = None  #: the machine's CPU over the diagnosed run, where it could be read

    @property
    def share(self) -> float:
        """The share of the step time spent waiting for input (at most 1: pipelines read at once could sum past it)."""
        return min(1.0, self.seconds / self.step_seconds) if self.step_seconds > 0 else 0.0

    def slowest_stage(self) -> tuple[str, float] | None:
        """The stage of the user's pipeline with the most self time, and that time in seconds: an iterator below
        the root that does the pipeline's work (a map, a generator, a batch, a read), not one that only hands
        elements on (:data:`HANDING_ON`: a prefetch that tf.data may have added itself waits there for the stage
        below it, which runs on another thread)."""
        below = {name: s for name, s in self.stages.items() if name != ROOT and not _hands_on(name)}
        return max(below.items(), key=lambda kv: kv[1]) if below else None

    def prefetches(self) -> bool:
        """Whether some pipeline of the run has a prefetch stage (``Prefetch`` in an iterator's name)."""
        return any("Prefetch" in name for name in self.stages)


class Capture:
    """A capture started now: the TensorFlow Profiler on, one marked step open, until :meth:`stop` (what
    :func:`capture` does around a call, for code whose steps start and end elsewhere, e.g. inside a script)."""

    def __init__(self, logdir: str | Path):
        import tensorflow as tf

        self.logdir = Path(logdir)
        self._before = {p: p.stat().st_mtime_ns for p in self.logdir.rglob("*.xplane.pb")}
        # The Profiler names a capture's folder by the second it started: a second capture in the same second would
        # overwrite the first, and XProf would read its analysis cached beside it (ALL_HOSTS.op_stats_v2.pb) for the
        # new one.
        wait = max(self._before.values(), default=0) / 1e9 + 1.05 - time.time()
        if wait > 0:
            time.sleep(wait)
        tf.profiler.experimental.start(str(self.logdir))
        self._step = tf.profiler.experimental.Trace(STEP_NAME, step_num=0, _r=1)
        self._step.__enter__()
        self._started = timing.now()

    def stop(self) -> tuple[Path, float]:
        """Close the step, stop the Profiler: the capture file written in ``logdir``, and the seconds the step took."""
        import tensorflow as tf

        from tfperf.runtime import device

        try:
            device.sync()
            seconds = timing.now() - self._started
            self._step.__exit__(None, None, None)
        finally:
            tf.profiler.experimental.stop()
        after = {p: p.stat().st_mtime_ns for p in self.logdir.rglob("*.xplane.pb")}
        written = sorted((p for p, mtime in after.items() if self._before.get(p) != mtime), key=after.get)
        if not written:
            raise RuntimeError(f"the TensorFlow Profiler wrote no capture in {self.logdir}")
        return written[-1], seconds


def capture(run: Callable[[], Any], logdir: str | Path) -> tuple[Path, float]:
    """Run ``run()`` under the TensorFlow Profiler as one marked step, its device work included: the capture file it
    wrote in ``logdir``, and the seconds the step took."""
    started = Capture(logdir)
    try:
        run()
    except BaseException:
        with contextlib.suppress(Exception):
            started.stop()
        raise
    return started.stop()


def tool_data(capture: str | Path, tool: str) -> list:
    """XProf's data for one of its tools (``overview_page``, ``input_pipeline_analyzer``, ...) from a capture."""
    try:
        from xprof.convert import raw_to_tool_data
    except ImportError as err:
        raise ProfilerAnalysisUnavailable("XProf is not installed (pip install xprof)") from err
    data, _ = raw_to_tool_data.xspace_to_tool_data([str(capture)], tool, {})
    if not data:
        raise ProfilerAnalysisUnavailable(f"XProf's {tool} found nothing in {capture}")
    return json.loads(data)


def _table_rows(table: dict) -> list[dict[str, object]]:
    """A Google DataTable (what XProf's tools return) as one dict a row, by column id."""
    ids = [column["id"] for column in table.get("cols", [])]
    return [{name: cell.get("v") if cell else None for name, cell in zip(ids, row["c"])} for row in table["rows"]]


def _table_with(tables: list[dict], column: str) -> dict | None:
    return next((t for t in tables if any(c.get("id") == column for c in t.get("cols", []))), None)


def step_summary(tables: list[dict]) -> dict[str, str]:
    """XProf's summary of the marked steps from its input-pipeline analyzer's tables (``steptime_ms_average``,
    ``infeed_time_ms_avg``, ``host_compute_time_ms_avg``, ``input_conclusion``, ...; its values are text), or an
    empty dict where XProf found no step."""
    summary = (_table_with(tables, "infeedTimeMs") or {}).get("p", {})
    return dict(summary) if float(summary.get("steptime_ms_average", 0) or 0) > 0 else {}


def input_wait(capture: str | Path, wall_seconds: float, cpu: CpuUse | None = None) -> InputWait:
    """The input wait of a capture whose marked step took ``wall_seconds`` (:func:`capture` returns both), read
    from XProf's input-pipeline analyzer: the inclusive time of tf.data's ``Iterator::Root``, where the training
    waits for each batch. XProf's own step-time breakdown would give the same where it finds the step, but it
    finds none in Keras's ``fit`` even when the step is marked (tested), so the wall time is the one measured here.
    ``cpu``: the machine's CPU over the run the capture ended (:func:`cpu_use_since`), kept with the wait."""
    tables = tool_data(capture, "input_pipeline_analyzer")
    ops = _table_with(tables, "opName")
    stages: dict[str, float] = {}
    seconds, calls = 0.0, 0
    for op in _table_rows(ops) if ops else []:
        name = str(op["opName"])
        stages[name] = stages.get(name, 0.0) + float(op["selfTimeInMs"]) / 1e3
        if name == ROOT:
            seconds += float(op["timeInMs"]) / 1e3
            calls += int(op["count"])
    conclusion = step_summary(tables).get("input_conclusion", "")
    return InputWait(
        seconds=seconds, step_seconds=wall_seconds, calls=calls, conclusion=conclusion, stages=stages, cpu=cpu
    )
