"""The TensorFlow Profiler's own analysis of a capture, read with XProf's converter (the ``xprof`` package).

``tf.profiler.experimental`` writes a capture (``<logdir>/plugins/profile/<run>/<host>.xplane.pb``); XProf turns it
into the data of its tools (``xprof.convert.raw_to_tool_data.xspace_to_tool_data``: the same data its web pages
show). This module reads the input-pipeline analyzer's table of tf.data's iterators: ``Iterator::Root`` is the
outermost iterator of a pipeline, so its inclusive time is the time the training spent inside ``GetNext``, waiting
for the next batch, whatever the pipeline's stages did meanwhile. That time over the capture's wall time is the
share of the run spent waiting for input; it needs no step markers (the step-time breakdown of XProf's overview page
does, and Keras 3's ``fit`` sets none).

XProf calls a program "HIGHLY input-bound" from 20% of its step time waiting for input, "MODERATELY" from 5%
(``kHighlyInfeedBoundThresholdInPercent``, ``kModeratelyInfeedBoundThresholdInPercent`` in its
``xprof/convert/op_stats_to_input_pipeline_analysis.cc``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

#: XProf's thresholds (fractions of the time) for a program that is highly and moderately input-bound.
HIGHLY_INPUT_BOUND = 0.20
MODERATELY_INPUT_BOUND = 0.05
#: tf.data's name for the outermost iterator of a pipeline (its ``GetNext`` is what the consumer waits in).
ROOT = "Iterator::Root"


class ProfilerAnalysisUnavailable(RuntimeError):
    """XProf is not installed, or could not convert the capture."""


@dataclass
class InputWait:
    """How long a profiled run waited for its tf.data input, from the Profiler's input-pipeline analyzer."""

    seconds: float  #: time inside the pipelines' ``Iterator::Root`` (the consumer's ``GetNext``), all pipelines
    calls: int  #: batches taken from the pipelines
    wall_seconds: float  #: the profiled run's wall time
    stages: dict[str, float] = field(default_factory=dict)  #: each iterator's self time in seconds, by its name

    @property
    def share(self) -> float:
        """The share of the run spent waiting for input (at most 1: two pipelines read at once could sum past it)."""
        return min(1.0, self.seconds / self.wall_seconds) if self.wall_seconds > 0 else 0.0

    def slowest_stage(self) -> tuple[str, float] | None:
        """The iterator (below the root) with the most self time, and that time in seconds."""
        below = {name: s for name, s in self.stages.items() if name != ROOT}
        return max(below.items(), key=lambda kv: kv[1]) if below else None

    def prefetches(self) -> bool:
        """Whether some pipeline of the run has a prefetch stage (``Prefetch`` in an iterator's name)."""
        return any("Prefetch" in name for name in self.stages)


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


def input_wait(capture: str | Path, wall_seconds: float) -> InputWait:
    """The input wait of a capture whose profiled run took ``wall_seconds``: tf.data's iterators as XProf's
    input-pipeline analyzer tables them (no pipeline: no wait)."""
    tables = tool_data(capture, "input_pipeline_analyzer")
    ops = next((t for t in tables if any(c.get("id") == "opName" for c in t.get("cols", []))), None)
    rows = _table_rows(ops) if ops else []
    stages: dict[str, float] = {}
    seconds, calls = 0.0, 0
    for row in rows:
        name = str(row["opName"])
        stages[name] = stages.get(name, 0.0) + float(row["selfTimeInMs"]) / 1e3
        if name == ROOT:
            seconds += float(row["timeInMs"]) / 1e3
            calls += int(row["count"])
    return InputWait(seconds=seconds, calls=calls, wall_seconds=wall_seconds, stages=stages)
