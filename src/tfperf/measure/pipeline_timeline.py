"""A timeline of an input pipeline: when each element was produced, and when it was consumed.

TensorFlow's data performance guide draws such timelines for an artificial pipeline;
:class:`Recorder` draws them for yours::

    recorder = pipeline_timeline.Recorder()
    timeline = recorder.run(dataset, step=train_step, epochs=2)
    timeline.summary()                                  # seconds waiting vs seconds training
    pipeline_timeline.plot(ax, timeline)

For every element the loop receives (a batch, usually) it records:

- ``ready``: when the pipeline had finished producing it. A ``map`` appended to the
  pipeline stamps it with the graph's clock (:func:`tfperf.measure.timing.graph_now`); when the
  pipeline ends with ``prefetch``, the stamp goes just before it, so ``ready`` is the
  moment the element entered the prefetch buffer;
- ``requested`` and ``delivered``: when the loop asked for it and got it (the gap is
  time the loop waited for input);
- ``step_end``: when ``step(element)`` returned.

Python code that runs inside the pipeline (``tf.py_function``) can also be drawn, one
lane per thread, by wrapping it with :meth:`Recorder.timed`: this shows how many calls
overlap. Every time is in seconds since :meth:`Recorder.run` started.
"""

from __future__ import annotations

import contextlib
import functools
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from tfperf.measure import timing
from tfperf.runtime import logs


@dataclass
class Timeline:
    """What :meth:`Recorder.run` saw: one record per element, Python spans, epoch bounds."""

    elements: list[dict] = field(default_factory=list)  #: epoch, index, requested, delivered, ready, step_end
    spans: list[dict] = field(default_factory=list)  #: name, start, end, lane
    epochs: list[tuple[float, float]] = field(default_factory=list)

    @property
    def seconds(self) -> float:
        """From the start of the run to the end of the last epoch."""
        return self.epochs[-1][1] if self.epochs else 0.0

    @property
    def waiting(self) -> float:
        """Seconds the loop spent waiting for the pipeline (requested -> delivered)."""
        return sum(e["delivered"] - e["requested"] for e in self.elements)

    @property
    def stepping(self) -> float:
        """Seconds the loop spent in its step (delivered -> step_end)."""
        return sum(e["step_end"] - e["delivered"] for e in self.elements)

    @property
    def ahead(self) -> float:
        """Median seconds by which elements were ready before the loop asked for them (0 if none)."""
        leads = sorted(max(0.0, e["requested"] - e["ready"]) for e in self.elements)
        return leads[len(leads) // 2] if leads else 0.0

    def threads(self) -> int:
        """How many threads ran the recorded Python spans."""
        return len({s["lane"] for s in self.spans})

    def max_overlap(self, name: str | None = None) -> int:
        """The largest number of recorded spans (named ``name``, or all) running at the same moment."""
        events = sorted(
            [(s["start"], 1) for s in self.spans if name in (None, s["name"])]
            + [(s["end"], -1) for s in self.spans if name in (None, s["name"])]
        )
        running = best = 0
        for _, delta in events:
            running += delta
            best = max(best, running)
        return best

    def summary(self) -> str:
        """E.g. ``"12 elements in 0.84 s: waiting for input 0.60 s, in the step 0.22 s"``."""
        return (
            f"{len(self.elements)} elements in {self.seconds:.3f} s: waiting for input {self.waiting:.3f} s, "
            f"in the step {self.stepping:.3f} s"
        )


class Recorder:
    """Records the timeline of a pipeline consumed by a loop (see the module's docstring)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._spans: list[dict] = []
        self._lanes: dict[int, int] = {}
        self._origin = timing.now()

    def _lane(self) -> int:
        ident = threading.get_ident()
        with self._lock:
            return self._lanes.setdefault(ident, len(self._lanes))

    @contextlib.contextmanager
    def span(self, name: str) -> Iterator[None]:
        """Record the Python code in the block as one span of ``name`` on this thread's lane."""
        lane = self._lane()
        start = timing.now()
        try:
            yield
        finally:
            end = timing.now()
            with self._lock:
                self._spans.append({"name": name, "start": start, "end": end, "lane": lane})

    def timed(self, fn: Callable, name: str | None = None) -> Callable:
        """``fn`` wrapped so that every call is recorded as a span (for Python run by ``tf.py_function``)."""
        label = name or getattr(fn, "__name__", "python")

        @functools.wraps(fn)
        def recorded(*args, **kwargs):
            with self.span(label):
                return fn(*args, **kwargs)

        return recorded

    def watch(self, dataset):
        """``dataset`` with every element paired with the time it was ready: ``(element, ready)``.

        A final ``prefetch`` (and the dataset's options) are kept, after the stamp.
        """
        tf = logs.tensorflow()
        options = dataset.options()
        inner, buffer_size = _without_final_prefetch(dataset)

        @tf.autograph.experimental.do_not_convert
        def stamp(*element):
            return (element[0] if len(element) == 1 else element), timing.graph_now()

        watched = inner.map(stamp)
        if buffer_size is not None:
            watched = watched.prefetch(buffer_size)
        return watched.with_options(options) if options != tf.data.Options() else watched

    def run(
        self,
        dataset,
        step: Callable[[Any], Any] | None = None,
        *,
        epochs: int = 1,
        before_epoch: Callable[[int], Any] | None = None,
    ) -> Timeline:
        """Iterate ``epochs`` epochs of ``dataset``, calling ``step(element)`` on each element.

        ``before_epoch(epoch)`` runs before each epoch's iterator is created. Returns the
        :class:`Timeline`; spans recorded by :meth:`timed` during the run are included.
        """
        watched = self.watch(dataset)
        with self._lock:
            self._spans.clear()
        start = timing.now()
        timeline = Timeline()
        for epoch in range(epochs):
            if before_epoch is not None:
                before_epoch(epoch)
            epoch_start = timing.now()
            iterator = iter(watched)
            index = 0
            while True:
                requested = timing.now()
                try:
                    element, ready = next(iterator)
                except StopIteration:
                    break
                delivered = timing.now()
                if step is not None:
                    step(element)
                step_end = timing.now()
                timeline.elements.append(
                    {
                        "epoch": epoch,
                        "index": index,
                        "requested": requested - start,
                        "delivered": delivered - start,
                        "ready": float(ready) - start,
                        "step_end": step_end - start,
                    }
                )
                index += 1
            timeline.epochs.append((epoch_start - start, timing.now() - start))
        with self._lock:
            timeline.spans = [
                {**s, "start": s["start"] - start, "end": s["end"] - start} for s in self._spans if s["end"] >= start
            ]
        return timeline


def _without_final_prefetch(dataset):
    """``(dataset without its final prefetch and options wrappers, that prefetch's buffer size or None)``."""
    buffer_size = None
    inner = dataset
    while True:
        name = type(inner).__name__
        if name == "_OptionsDataset":
            inner = inner._input_dataset  # noqa: SLF001 (options are re-applied by the caller)
        elif name == "_PrefetchDataset" and buffer_size is None:
            buffer_size = int(inner._buffer_size.numpy())  # noqa: SLF001
            inner = inner._input_dataset  # noqa: SLF001
        else:
            return inner, buffer_size


def _pack(spans: list[dict]) -> list[int]:
    """A row for each span such that spans on one row never overlap (lowest free row first)."""
    order = sorted(range(len(spans)), key=lambda i: spans[i]["start"])
    rows, ends = [0] * len(spans), []
    for i in order:
        free = next((r for r, end in enumerate(ends) if end <= spans[i]["start"]), None)
        if free is None:
            free = len(ends)
            ends.append(0.0)
        ends[free] = spans[i]["end"]
        rows[i] = free
    return rows


COLORS = {"waiting": "#d62728", "step": "#1f77b4", "ready": "#2ca02c"}


def plot(ax, timeline: Timeline, *, title: str | None = None, span_colors: dict[str, str] | None = None) -> None:
    """Draw a :class:`Timeline` on ``ax``.

    Bottom row: the loop, red while it waits for input, blue while its step runs. Row
    above: a green mark when each element was ready, joined by a grey line to the moment
    the loop received it (the longer the line, the further ahead the pipeline was).
    Rows above that: the recorded Python spans, stacked so that spans running at the same
    time are on different rows (as many rows as calls overlapped).
    """
    span_colors = dict(span_colors or {})
    palette = ["#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf", "#ff7f0e"]
    for e in timeline.elements:
        ax.broken_barh(
            [(e["requested"], max(e["delivered"] - e["requested"], 1e-5))], (-0.35, 0.7), color=COLORS["waiting"]
        )
        ax.broken_barh(
            [(e["delivered"], max(e["step_end"] - e["delivered"], 1e-5))], (-0.35, 0.7), color=COLORS["step"]
        )
        ax.plot([e["ready"], e["delivered"]], [1, 0.35], color="0.6", linewidth=0.6)
    if timeline.elements:
        ax.plot(
            [e["ready"] for e in timeline.elements],
            [1] * len(timeline.elements),
            "|",
            markersize=12,
            color=COLORS["ready"],
            markeredgewidth=2,
        )
    rows = _pack(timeline.spans)
    for s, row in zip(timeline.spans, rows):
        color = span_colors.setdefault(s["name"], palette[len(span_colors) % len(palette)])
        ax.broken_barh([(s["start"], max(s["end"] - s["start"], 1e-5))], (2 + row - 0.35, 0.7), color=color)
    lanes = max(rows, default=-1) + 1
    for start, _ in timeline.epochs[1:]:
        ax.axvline(start, color="0.3", linestyle=":", linewidth=1)
    ax.set_yticks(range(2 + lanes), ["loop", "ready", *(f"Python call {i + 1}" for i in range(lanes))])
    ax.set_ylim(-0.8, 1.8 + lanes)
    ax.set_xlabel("time (s)")
    ax.set_xlim(left=0)
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    handles = [
        Patch(color=COLORS["waiting"], label="loop waits for input"),
        Patch(color=COLORS["step"], label="training step"),
        Patch(color=COLORS["ready"], label="element ready"),
    ]
    if timeline.elements:
        handles.append(Line2D([], [], color="0.6", linewidth=0.6, label="ready until received"))
    if timeline.epochs[1:]:
        handles.append(Line2D([], [], color="0.3", linestyle=":", linewidth=1, label="a new epoch starts"))
    handles += [Patch(color=c, label=n) for n, c in span_colors.items()]
    ax.legend(handles=handles, fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    ax.set_title(title or timeline.summary(), fontsize=9)
    ax.grid(True, axis="x", alpha=0.3)
