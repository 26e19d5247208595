"""Matplotlib helpers shared by the chapters: records in, a readable figure out.

An experiment returns *records* (one dict per measurement); a :class:`Run` keeps the
records of one run with its settings; a chapter's plot function ``draw(figure, runs)``
draws any number of runs; :func:`show` makes the figure and shows it (and, when
``TFPERF_RECORD_RUNS`` names a file, appends the runs it drew to it: ``python -m tfperf report``).
"""

from __future__ import annotations

import json
import math
import os
import weakref
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import matplotlib.pyplot as plt
from matplotlib import ticker

Record = dict[str, Any]

#: When set, every :func:`show` appends the runs it drew (settings and records) to this
#: JSON-lines file, one line per figure (``python -m tfperf report`` uses it).
RUNS_RECORD_ENV_VAR = "TFPERF_RECORD_RUNS"

LINESTYLES = ("-", "--", ":", "-.", (0, (5, 1, 1, 1, 1, 1)))  # five runs, five styles
FIGSIZE = (11.0, 4.0)


@dataclass
class Run:
    """One run of an experiment: a label, the settings used, and the records it returned."""

    label: str
    settings: dict[str, Any] = field(default_factory=dict)
    records: list[Record] = field(default_factory=list)


def show(
    draw: Callable[[Any, Sequence[Run]], None], runs: Run | Sequence[Run], *, figsize: tuple[float, float] = FIGSIZE
) -> None:
    """Draw ``runs`` (one :class:`Run` or several) with ``draw(figure, runs)`` on a new figure, and show it."""
    runs = [runs] if isinstance(runs, Run) else list(runs)
    fig = plt.figure(figsize=figsize, layout="constrained")
    draw(fig, runs)
    _record(draw, runs)
    plt.show()


def _as_json(value: Any) -> Any:
    """What ``json`` cannot write itself: NumPy scalars and arrays as numbers and lists, an object
    with a ``summary()`` (a pipeline timeline) as its summary, anything else as text."""
    if hasattr(value, "tolist"):
        return value.tolist()
    if callable(getattr(value, "summary", None)):
        return value.summary()
    return str(value)


def _record(draw: Callable[..., Any], runs: Sequence[Run]) -> None:
    path = os.environ.get(RUNS_RECORD_ENV_VAR)
    if not path:
        return
    row = {
        "plot": getattr(draw, "__name__", str(draw)),
        "runs": [{"label": r.label, "settings": r.settings, "records": r.records} for r in runs],
    }
    with open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps(row, default=_as_json) + "\n")


def each_run(runs: Sequence[Run]) -> Iterator[tuple[Run, str, str]]:
    """``(run, label prefix, line style)`` for each run of an experiment panel.

    Runs are told apart by line style, and by a label prefix once there are several.
    """
    for i, run in enumerate(runs):
        yield run, (f"{run.label}: " if len(runs) > 1 else ""), LINESTYLES[i % len(LINESTYLES)]


def new_figure(ncols: int = 1, *, width: float = 5.5, height: float = 3.6):
    """A figure with ``ncols`` side-by-side axes, sized for a notebook."""
    fig, axes = plt.subplots(1, ncols, figsize=(width * ncols, height), squeeze=False)
    return fig, list(axes[0])


def plot_lines(
    ax,
    records: Iterable[Record],
    *,
    x: str,
    y: str,
    group: str,
    label_prefix: str = "",
    logx: bool = False,
    logy: bool = False,
    integer_x: bool = False,
    linestyle: str = "-",
    xlabel: str | None = None,
    ylabel: str | None = None,
) -> None:
    """One line per value of ``group``: ``y`` against ``x``, points in ``x`` order (``integer_x``: ``x`` is a count)."""
    lines: dict[Any, list[tuple[float, float]]] = {}
    for r in records:
        lines.setdefault(r[group], []).append((r[x], r[y]))
    for name, points in lines.items():
        points.sort()
        xs, ys = zip(*points)
        ax.plot(xs, ys, marker="o", linestyle=linestyle, color=group_color(ax, name), label=f"{label_prefix}{name}")
    if logx:
        ax.set_xscale("log")
        _plain_numbers(ax.xaxis, integer=integer_x)
    if logy:
        ax.set_yscale("log")
        _plain_numbers(ax.yaxis)
    ax.set_xlabel(xlabel or x)
    ax.set_ylabel(ylabel or y)
    ax.grid(True, which="both", alpha=0.3)


_group_colors: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def group_color(ax, name: Any) -> str:
    """The colour of group ``name`` in ``ax``'s figure: the same in every panel and every run of it."""
    colors = _group_colors.setdefault(ax.figure, {})
    if name not in colors:
        cycle = plt.rcParams["axes.prop_cycle"].by_key()["color"]
        colors[name] = cycle[len(colors) % len(cycle)]
    return colors[name]


def legend(ax, runs: Sequence[Run], **kwargs: Any) -> None:
    """``ax``'s legend. With several runs, one entry per group (its colour) and one per run (its line
    style) instead of one per line, so that it stays short however many runs are drawn."""
    if len(runs) <= 1:
        ax.legend(**kwargs)
        return
    from matplotlib.lines import Line2D

    colors = _group_colors.get(ax.figure, {})
    handles = [Line2D([], [], color=color, marker="o", label=str(name)) for name, color in colors.items()]
    handles += [Line2D([], [], color="0.3", linestyle=style, label=run.label) for run, _, style in each_run(runs)]
    ax.legend(handles=handles, **kwargs)


#: Labelled ticks per decade, sparsest first: a log axis takes the densest that keeps its labels few.
_LOG_TICK_STEPS = (
    (1.0,),
    (1.0, 3.0),
    (1.0, 2.0, 5.0),
    (1.0, 1.5, 2.0, 3.0, 5.0, 7.0),
    (1.0, 1.2, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0),
)


class _ReadableLogLocator(ticker.Locator):
    """Ticks of a log axis at 1, 2, 5 (or fewer, or more) times powers of ten: always at least two labelled
    values inside the axis, however little it spans, and at most ``most`` of them. On an ``integer`` axis
    (a count), only whole numbers."""

    def __init__(self, *, most: int = 6, integer: bool = False):
        self.most, self.integer = most, integer

    def __call__(self):
        return self.tick_values(*self.axis.get_view_interval())

    def tick_values(self, vmin, vmax):
        vmin, vmax = sorted((vmin, vmax))
        if not vmax > 0:
            return []
        vmin = max(vmin, vmax * 1e-12)
        first, last = math.floor(math.log10(vmin)), math.ceil(math.log10(vmax))
        best: list[float] = []
        for subs in _LOG_TICK_STEPS:
            ticks = [
                float(f"{m * 10.0**e:.12g}")
                for e in range(first, last + 1)
                for m in subs
                if vmin <= m * 10.0**e <= vmax * (1 + 1e-9)
            ]
            if self.integer:
                ticks = [t for t in ticks if t >= 1 and t == round(t)]
            if len(ticks) > self.most and len(best) >= 2:
                break
            best = ticks
            if len(ticks) > self.most:  # even one tick a decade is too many: every n-th decade
                stride = math.ceil(len(ticks) / self.most)
                best = ticks[::stride]
                break
        return best


def _plain_number(x: float, _pos: Any = None) -> str:
    """0.06, 1.5, 20, 3,000, 100,000: never 6e-02 or 10^5."""
    return f"{x:,.0f}" if abs(x) >= 1000 else f"{x:g}"


def _plain_numbers(axis, *, integer: bool = False) -> None:
    """Label a log axis with plain numbers at readable places (:class:`_ReadableLogLocator`), other ticks unlabelled."""
    axis.set_major_locator(_ReadableLogLocator(integer=integer))
    axis.set_major_formatter(ticker.FuncFormatter(_plain_number))
    axis.set_minor_locator(ticker.LogLocator(subs="all"))
    axis.set_minor_formatter(ticker.NullFormatter())


def plot_bars(ax, labels: Sequence[str], values: Sequence[float], *, ylabel: str, annotate: str = "{:.3g}") -> None:
    """Labelled bars, each annotated with its value."""
    bars = ax.bar(range(len(values)), values, color=plt.rcParams["axes.prop_cycle"].by_key()["color"][: len(values)])
    ax.set_xticks(range(len(values)), labels, rotation=15, ha="right")
    ax.set_ylabel(ylabel)
    for bar, value in zip(bars, values):
        ax.annotate(
            annotate.format(value),
            (bar.get_x() + bar.get_width() / 2, bar.get_height()),
            ha="center",
            va="bottom",
            fontsize=9,
        )
    ax.grid(True, axis="y", alpha=0.3)


def plot_grouped_barh(
    ax, groups: Sequence[str], series: Sequence[tuple[str, Sequence[float | None], Sequence[str]]], *, xlabel: str
) -> None:
    """Horizontal bars, one group per row label and one bar per series in each group, each annotated.

    ``series`` is ``[(name, values, notes)]``: one value (None: not measured) and one note per group.
    Stays readable with many series (runs): group labels are written once, series are told apart by
    colour and the legend, and notes sit right of the bars inside the axes.
    """
    n = max(len(series), 1)
    height = 0.8 / n
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    largest = max((v for _, values, _ in series for v in values if v is not None), default=1.0) or 1.0
    for i, (name, values, notes) in enumerate(series):
        ys = [g + (i - (n - 1) / 2) * height for g in range(len(groups))]
        shown = [(y, v, note) for y, v, note in zip(ys, values, notes) if v is not None]
        if not shown:
            continue
        ax.barh(
            [y for y, _, _ in shown],
            [v for _, v, _ in shown],
            height=height * 0.9,
            color=colors[i % len(colors)],
            label=name,
        )
        for y, v, note in shown:
            ax.annotate(
                note,
                (v, y),
                xytext=(3, 0),
                textcoords="offset points",
                va="center",
                ha="left",
                fontsize=8 if n <= 3 else 7,
            )
    ax.set_yticks(range(len(groups)), groups)
    ax.invert_yaxis()  # first group on top
    ax.set_xlim(0, largest * 1.45)  # room for the notes
    ax.set_xlabel(xlabel)
    ax.grid(True, axis="x", alpha=0.3)
    if n > 1:  # below the axis, never over a bar's note
        ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.12), ncols=n, frameon=False)


def plot_busy_timeline(
    ax, records: Sequence[Record], *, label: str, xlabel: str = "time (s)", title: str = "Device busy"
) -> None:
    """How busy the device was over time (``tfperf.measure.monitor`` samples in each record's ``timeline``),
    one line per record, named by its ``label`` field, with the mean in the legend."""
    source = "cpu"
    for r in records:
        ax.plot(
            [p["t"] for p in r["timeline"]],
            [p["busy"] for p in r["timeline"]],
            marker=".",
            label=f"{r[label]} (mean {r['busy']:.0f}%)",
        )
        source = r["source"]
    ax.set_ylim(0, 105)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("GPU busy (%), NVML" if source == "nvml" else "process CPU use (% of all cores)")
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
