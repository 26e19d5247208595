"""Checks of memory: a training run whose memory stays flat from epoch to epoch.

Memory is read from outside the objects that hold it: the process's resident anonymous and shared memory in
``/proc`` (:func:`tfperf.runtime.processes.held_bytes`), and on a GPU what NVML says the process holds
(:func:`tfperf.runtime.processes.gpu_bytes`). In the judge (:mod:`tfperf.autograding.judge`), the grading process
reads them for the answer's process (:meth:`tfperf.grading.remote.Remote.probe` ``"memory"``), which reports nothing:
it also read them before the answer cell ran (``before_answer``), so memory the answer set aside early to free as
it leaks counts against it.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Sequence
from typing import Any

from tfperf.grading import guard
from tfperf.grading.calls import GradingFailure, call, reread
from tfperf.runtime import processes

MB = 1e6


def _read_here() -> dict:
    """This process's memory (the learner's own kernel: a check the learner runs, not a grade)."""
    return {"held": processes.held_bytes(os.getpid()), "gpu": processes.gpu_bytes([os.getpid()])}


def _total(reading: dict) -> float | None:
    held = reading.get("held")
    if not isinstance(held, (int, float)):
        return None
    gpu = reading.get("gpu")
    return float(held) + (float(gpu) if isinstance(gpu, (int, float)) else 0.0)


@guard.checked
def assert_memory_flat(
    fn: Callable[..., Any],
    args: Sequence[Any],
    *,
    what: str,
    section: str | None = None,
    per_epoch_mb: float = 8.0,
    budget_mb: float = 170.0,
    peak_extra_mb: float = 60.0,
) -> Any:
    """Call ``fn(*args, on_epoch_end)`` and fail if the memory its process holds grows from epoch to epoch.

    ``fn`` must call ``on_epoch_end(epoch)`` after every epoch (at least 4). The memory is read before the call and
    at every ``on_epoch_end``, with freed large blocks given back to the system
    (:func:`tfperf.runtime.processes.large_frees_returned`); over the later half of the epochs (the first ones may set up
    what later ones reuse: a trace, TensorFlow's thread pools and caches) it may grow by at most ``per_epoch_mb`` an
    epoch on average. In the judge, where the grading process reads the answer's process (the files it wrote where
    it can write count as held), no reading may also exceed what it held before the answer cell ran by more than
    ``budget_mb`` (what a first training run sets up), nor its peak resident memory during the call (at any moment,
    not only at the epochs' ends) what it had then by more than ``budget_mb + peak_extra_mb`` (with the pages of
    code a first run loads). Returns what ``fn`` returned.
    """
    from tfperf.grading.remote import Remote

    judged = isinstance(fn, Remote)
    read = (lambda **detail: fn.probe("memory", **detail)) if judged else (lambda **detail: _read_here())
    readings: list[dict] = []

    def on_epoch_end(epoch: int = -1) -> None:
        readings.append(read())

    # in the judge, the answer's process set it before any cell ran (the grading process told it to)
    with contextlib.nullcontext() if judged else processes.large_frees_returned():
        start = read(reset=True)  # in the judge: the peak counted from here
        result = call(fn, (*args, on_epoch_end), who=what, section=section)
        end = read()
    totals = [_total(r) for r in (start, *readings)]
    if any(t is None for t in totals):
        raise GradingFailure("The memory check cannot grade here: the process's memory could not be read (/proc).")
    if len(readings) < 4:
        raise GradingFailure(
            f"{what} called on_epoch_end {len(readings)} times; expected once per epoch "
            f"(at least 4 here).{reread(section)}"
        )
    epochs = len(readings)
    half = epochs // 2  # the later half: from the end of epoch ``epochs - half`` to the end of the last
    grown = (totals[-1] - totals[-1 - half]) / MB
    if grown > per_epoch_mb * half:
        steps = ", ".join(f"{(b - a) / MB:+.1f}" for a, b in zip(totals, totals[1:]))
        raise GradingFailure(
            f"{what} held {grown:.1f} MB more at the end of its last epoch than {half} epochs before: "
            f"{grown / half:.1f} MB an epoch; at most {per_epoch_mb:g} MB an epoch expected (MB added by each epoch: "
            f"{steps}). Something keeps each epoch's objects alive: look for lists, dicts or caches that grow with "
            f"the epochs, and keep only what the result needs.{reread(section)}"
        )
    before, resident = start.get("before_answer"), start.get("before_answer_resident")
    if isinstance(before, (int, float)):
        most = max(totals) - float(before)
        if most > budget_mb * MB:
            raise GradingFailure(
                f"The process running {what} held {most / MB:.0f} MB more than before the answer cell ran; at most "
                f"{budget_mb:g} MB expected (what a first training run sets up). Memory the answer holds beside the "
                f"training, or in files, counts too.{reread(section)}"
            )
    if isinstance(resident, (int, float)) and isinstance(end.get("peak"), (int, float)):
        peak = float(end["peak"]) - float(resident)  # at any moment of the call, not only at the epochs' ends
        if peak > (budget_mb + peak_extra_mb) * MB:
            raise GradingFailure(
                f"The process running {what} held, at its peak during the call, {peak / MB:.0f} MB more than before "
                f"the answer cell ran; at most {budget_mb + peak_extra_mb:g} MB expected. What it holds between the "
                f"epochs' ends counts too.{reread(section)}"
            )
    return result
