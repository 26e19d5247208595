"""Predict, then measure: the learner commits a prediction before an experiment, then sees it beside
the measurement, and :func:`summary` shows how far off the predictions were, chapter by chapter.

A prediction is a range (``Choice``: a label, a low and a high bound). :func:`ask` shows the choices and
a *Commit* button (or call :func:`commit`); :func:`reveal`, in the cell that measures, prints the
prediction beside the measured value and saves both. Skipping a prediction is fine: :func:`reveal` then
says so and saves nothing. Predictions are not graded: what is right depends on the learner's device.

Saved as JSON lines in the learner's workspace (:func:`store`): ``TFPERF_PREDICTIONS`` if set, else
``predictions.jsonl`` in the ``my-work`` folder the notebook runs in (``make lab``), else in the
notebook's folder.

Shared with the class, unless the learner opts out: :func:`reveal`'s line is a display output whose
metadata (:data:`OUTPUT_KEY`) holds the prediction and the measurement, so a submitted notebook carries
them to the instructor's class report (``tfperf.classgrading.beliefs``: counted without names, never
graded). :func:`share` ``(False)`` (saved in the store, so it holds after a restart) or
``TFPERF_SHARE_PREDICTIONS=0`` keeps them out of the notebook; the line then prints as before.
"""

from __future__ import annotations

import json
import math
import os
import time
from dataclasses import dataclass
from pathlib import Path

STORE_ENV_VAR = "TFPERF_PREDICTIONS"
STORE_NAME = "predictions.jsonl"
SHARE_ENV_VAR = "TFPERF_SHARE_PREDICTIONS"
#: The key of a shared prediction in a display output's metadata.
OUTPUT_KEY = "tfperf_prediction"
#: What the learner is told where they predict (the opt-out).
SHARING_NOTE = (
    "If you submit this notebook, it carries your prediction and your measurement to your instructor's "
    "class report, counted without names and never graded; <code>predictions.share(False)</code> keeps them out."
)


@dataclass(frozen=True)
class Choice:
    label: str
    low: float
    high: float = math.inf

    def error_decades(self, measured: float) -> float:
        """0 if ``measured`` is in the range, else how many powers of ten it lies outside."""
        if measured <= 0:
            return math.inf
        if measured < self.low:
            return math.log10(self.low / measured)
        if measured >= self.high:
            return math.log10(measured / self.high)
        return 0.0

    def verdict(self, measured: float, unit: str = "x") -> str:
        """Where ``measured`` lies against the range, in the quantity's own terms: for a ratio (``unit`` "x"), as a
        multiple of the range's nearer end; for any other quantity, how far beyond that end, in its unit."""
        if self.low <= measured < self.high:
            return "inside your range"
        above = measured >= self.high
        edge = self.high if above else self.low
        if unit == "x":
            return f"{measured / edge:.2g} times the {'top' if above else 'bottom'} of your range ({edge:g}x)"
        return f"{abs(measured - edge):.2g}{unit} {'above' if above else 'below'} your range"


#: Ranges for "how many times faster": the default choices.
SPEEDUPS = (
    Choice("about the same (under 1.5x)", 0.0, 1.5),
    Choice("1.5x to 3x", 1.5, 3.0),
    Choice("3x to 10x", 3.0, 10.0),
    Choice("10x to 100x", 10.0, 100.0),
    Choice("more than 100x", 100.0),
)


def store() -> Path:
    """Where predictions are saved (see the module's docstring)."""
    if os.environ.get(STORE_ENV_VAR):
        return Path(os.environ[STORE_ENV_VAR])
    here = Path.cwd()
    for folder in (here, *here.parents):
        if folder.name == "my-work":
            return folder / STORE_NAME
    return here / STORE_NAME


def _append(row: dict) -> None:
    path = store()
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as f:
        f.write(json.dumps(row) + "\n")


def rows() -> list[dict]:
    """Everything saved so far (lines that are not JSON are skipped)."""
    path = store()
    if not path.exists():
        return []
    found = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            found.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return found


def chapter_of(key: str) -> str:
    return key.split(".", 1)[0]


def commit(key: str, choice: Choice) -> None:
    """Save ``choice`` as the prediction for experiment ``key`` (``"02_eager_vs_graph.function_speedup"``)."""
    _append(
        {
            "kind": "prediction",
            "key": key,
            "label": choice.label,
            "low": choice.low,
            "high": _finite(choice.high),
            "time": time.time(),
        }
    )


def _finite(value: float) -> float | None:
    return None if math.isinf(value) else value


def latest_prediction(key: str) -> Choice | None:
    """The last prediction committed for ``key``, or None."""
    found = [r for r in rows() if r.get("kind") == "prediction" and r.get("key") == key]
    if not found:
        return None
    last = found[-1]
    return Choice(last["label"], last["low"], math.inf if last.get("high") is None else last["high"])


def share(on: bool = True) -> None:
    """Whether :func:`reveal` puts the prediction and the measurement into the notebook's output (see the
    module's docstring); saved in the store, so that it holds after a restart."""
    _append({"kind": "sharing", "on": bool(on), "time": time.time()})
    print("Your predictions go with this notebook to the class report." if on else "Your predictions stay here.")


def sharing() -> bool:
    """The learner's last :func:`share` (sharing unless they opted out); ``TFPERF_SHARE_PREDICTIONS=0`` overrides."""
    if os.environ.get(SHARE_ENV_VAR, "").strip() == "0":
        return False
    said = [r for r in rows() if r.get("kind") == "sharing"]
    return bool(said[-1].get("on", True)) if said else True


def reveal(key: str, measured: float, *, what: str = "speedup", unit: str = "x") -> None:
    """Print the prediction for ``key`` beside ``measured``, and save both (nothing if there is none)."""
    choice = latest_prediction(key)
    if choice is None:
        print(f"Measured {what}: {measured:.3g}{unit}. (No prediction was committed for it: nothing saved.)")
        return
    error = choice.error_decades(measured)
    line = f"You predicted {choice.label}; measured here: {measured:.3g}{unit}, {choice.verdict(measured, unit)}."
    row = {
        "kind": "measured",
        "key": key,
        "label": choice.label,
        "low": choice.low,
        "high": _finite(choice.high),
        "measured": measured,
        "unit": unit,
        "error_decades": _finite(error),
        "time": time.time(),
    }
    _append(row)
    _say(line, row if sharing() else None)


def _say(line: str, shared: dict | None) -> None:
    """``line`` as the cell's output; in a notebook with ``shared``, a display output carrying it."""
    try:
        from IPython import get_ipython
        from IPython.display import display
    except ImportError:
        get_ipython = None
    if shared is None or get_ipython is None or get_ipython() is None:
        print(line)
        return
    import sys

    sys.stdout.flush()  # the lines printed before it stay before it
    shared = {k: v for k, v in shared.items() if k not in ("kind", "time")}
    display({"text/plain": line}, metadata={OUTPUT_KEY: shared}, raw=True)


def ask(key: str, question: str, choices: tuple[Choice, ...] = SPEEDUPS):
    """A widget: the question, the choices and a *Commit* button that saves the one chosen."""
    import ipywidgets as widgets

    options = widgets.RadioButtons(options=[(c.label, c) for c in choices], index=None, layout={"width": "auto"})
    button = widgets.Button(
        description="Commit my prediction", icon="check", button_style="info", layout={"width": "max-content"}
    )
    note = f"<br><small>{SHARING_NOTE}</small>" if sharing() else ""
    status = widgets.HTML(f"Choose, then commit, before you run the experiment below.{note}")

    def committed(_):
        if options.value is None:
            status.value = "Choose one of the ranges first."
            return
        commit(key, options.value)
        status.value = f"Saved: <b>{options.value.label}</b>. Now run the experiment."

    button.on_click(committed)
    return widgets.VBox([widgets.HTML(f"<b>Predict:</b> {question}"), options, button, status])


def summary(*, show: bool = True):
    """How far off the predictions were, per chapter, in the order they were measured: a table and a
    plot (0: the measurement fell inside the predicted range). Shows the plot and returns None (a notebook
    would otherwise draw the returned figure a second time); with ``show=False``, returns the figure instead.
    Prints that nothing was measured yet when nothing was."""
    measured = [r for r in rows() if r.get("kind") == "measured"]
    if not measured:
        print(f"No prediction has met its measurement yet ({store()}).")
        return None
    import matplotlib.pyplot as plt

    by_chapter: dict[str, list[dict]] = {}
    for row in measured:
        by_chapter.setdefault(chapter_of(row["key"]), []).append(row)
    print(f"{'chapter':<22}{'predictions':>12}{'inside range':>14}{'mean error (powers of ten)':>28}")
    fig, ax = plt.subplots(figsize=(8, 3.2), layout="constrained")
    for order, (chapter, found) in enumerate(sorted(by_chapter.items())):
        errors = [math.inf if r.get("error_decades") is None else r["error_decades"] for r in found]
        finite = [e for e in errors if math.isfinite(e)]
        inside = sum(1 for e in errors if e == 0)
        mean = sum(finite) / len(finite) if finite else math.nan
        print(f"{chapter:<22}{len(found):>12}{inside:>14}{mean:>28.2f}")
        places = [order + (i + 1) / (len(finite) + 1) - 0.5 for i in range(len(finite))]  # in the order measured
        ax.plot(places, finite, "o-", label=chapter)
    ax.set_xticks(range(len(by_chapter)), sorted(by_chapter), rotation=20)
    ax.set_ylabel("off by (powers of ten)")
    ax.set_title("Your predictions against your measurements (0: inside the range you chose)")
    ax.axhline(0, color="grey", linewidth=0.8)
    if not show:
        return fig
    plt.show()
    return None
