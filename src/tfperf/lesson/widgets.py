"""One reusable experiment panel: controls -> Run -> progress bar -> plot of every run so far.

Each run is a :class:`tfperf.lesson.plots.Run`; the figure is drawn by :func:`tfperf.lesson.plots.show`.

The panel only wires widgets to two plain functions that the notebook passes in:
``experiment(**settings, progress=...) -> records`` and ``plot(figure, runs)``. It never
imports an experiment itself.
"""

from __future__ import annotations

import contextlib
import io
import traceback
from collections.abc import Callable
from typing import Any

import ipywidgets as widgets
from IPython.display import clear_output, display

from tfperf.lesson import plots
from tfperf.lesson.plots import Run  # also importable from here, as before


def _describe(value: Any) -> str:
    if isinstance(value, (tuple, list)):
        return "/".join(_describe(v) for v in value) if len(value) <= 3 else f"{len(value)} values"
    if isinstance(value, float):
        return f"{value:.3g}"
    return str(value)


class ExperimentPanel:
    """Controls for an experiment's settings, a Run button, a progress bar and a live plot.

    Every run is kept and plotted together with the earlier ones, so a learner can change
    a setting and compare. ``Clear`` forgets the runs.
    """

    def __init__(
        self,
        experiment: Callable[..., list[dict]],
        controls: dict[str, widgets.Widget],
        plot: Callable[[Any, list[Run]], None],
        *,
        title: str = "",
        figsize: tuple[float, float] = plots.FIGSIZE,
    ):
        self.experiment = experiment
        self.controls = controls
        self.plot = plot
        self.figsize = figsize
        self.runs: list[Run] = []
        self.printed = ""  #: what the latest run's experiment printed
        self.run_button = widgets.Button(description="Run", button_style="primary", icon="play")
        self.clear_button = widgets.Button(description="Clear", icon="trash")
        self.progress = widgets.IntProgress(value=0, min=0, max=1, description="", layout=widgets.Layout(width="50%"))
        self.status = widgets.HTML(value="Choose settings, then press Run.")
        self.output = widgets.Output()
        self.run_button.on_click(lambda _: self.run())
        self.clear_button.on_click(lambda _: self.clear())
        header = [widgets.HTML(f"<b>{title}</b>")] if title else []
        self.widget = widgets.VBox(
            [
                *header,
                *controls.values(),
                widgets.HBox([self.run_button, self.clear_button, self.progress]),
                self.status,
                self.output,
            ]
        )

    def settings(self) -> dict[str, Any]:
        return {name: control.value for name, control in self.controls.items()}

    def describe(self, settings: dict[str, Any]) -> str:
        """The settings as the learner sees them: each control's label (its description), then its value."""
        parts = []
        for name, value in settings.items():
            control = self.controls.get(name)
            label = (getattr(control, "description", "") or name).rstrip(": ")
            if isinstance(control, widgets.Checkbox):
                parts.append(f"{label} {'on' if value else 'off'}")
            else:
                parts.append(f"{label}={_describe(value)}")
        return ", ".join(parts)

    def _on_progress(self, done: int, total: int) -> None:
        self.progress.max = max(total, 1)
        self.progress.value = done
        self.status.value = f"Running... {done} of {total} measurements done."

    def run(self, **overrides: Any) -> Run | None:
        """Run the experiment with the controls' settings (``overrides`` win) and redraw.

        Errors are shown in the panel instead of escaping; the return value is then None.
        """
        settings = {**self.settings(), **overrides}
        label = f"run {len(self.runs) + 1}"
        self.run_button.disabled = True
        self.progress.value = 0
        # What the experiment prints is shown under the plot: printed from a button's callback it
        # would go to JupyterLab's log console, where a learner never sees it.
        printed = io.StringIO()
        try:
            with contextlib.redirect_stdout(printed):
                records = self.experiment(**settings, progress=self._on_progress)
        except Exception as err:  # shown to the learner, who can fix the setting and retry
            self.status.value = f"<span style='color:#b00'>The experiment failed: {type(err).__name__}: {err}</span>"
            with self.output:
                print(printed.getvalue(), end="")
                traceback.print_exc()
            return None
        finally:
            self.run_button.disabled = False
        self.printed = printed.getvalue()
        run = Run(label=label, settings=settings, records=records)
        self.runs.append(run)
        self.status.value = f"Done: {label} ({self.describe(settings)}). Change a setting and run again to compare."
        self.redraw()
        return run

    def clear(self) -> None:
        self.runs.clear()
        self.printed = ""
        self.status.value = "Cleared. Press Run."
        with self.output:
            clear_output()

    def redraw(self) -> None:
        with self.output:
            clear_output(wait=True)
            plots.show(self.plot, self.runs, figsize=self.figsize)
            if self.runs and self.printed:
                print(f"{self.runs[-1].label}: {self.printed}", end="")

    def _ipython_display_(self) -> None:
        display(self.widget)
