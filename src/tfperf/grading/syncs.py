"""Checks of how often learner code reads tensor values on the host or uploads NumPy arrays, and of whether a training
loop reports while it trains."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from tfperf.grading import guard
from tfperf.grading.calls import GradingFailure, call, reread
from tfperf.measure import host_syncs


def _call_counting(fn: Callable[..., Any], args: Sequence[Any], what: str, section: str | None):
    """Call learner code quietly inside a host-sync counting block; return its result and the counts."""
    from tfperf.grading.remote import Remote, SeenSyncs

    if isinstance(fn, Remote):  # in the judge: counted in the answer's process over the call
        with fn.counted(("host_syncs",)) as seen:
            result = call(fn, args, who=what, section=section)
        if seen.get("tampered") or "host_syncs" not in seen:
            raise GradingFailure(
                f"The host-sync check cannot grade: the grading environment was modified "
                f"({', '.join(map(str, seen.get('tampered') or ['the counters']))}). Remove the code that does it."
            )
        return result, SeenSyncs(seen["host_syncs"])
    with host_syncs.counting() as syncs:
        host_syncs.give(list(args))  # their shapes came with the call: reading them is not a sync
        result = call(fn, args, who=what, section=section)
        undone = host_syncs.tampered()
    if undone:
        guard.verify("The host-sync check")
        raise GradingFailure(
            f"The host-sync check cannot grade: the grading environment was modified "
            f"({', '.join(undone)}). Remove the code that does it and run the notebook again."
        )
    return result, syncs


@guard.checked
def assert_host_syncs_at_most(
    fn: Callable[..., Any], args: Sequence[Any], limit: int, *, what: str, section: str | None = None
) -> Any:
    """Call ``fn(*args)`` quietly, counting host reads of tensor values; fail above ``limit``.

    Returns what ``fn`` returned. See :mod:`tfperf.measure.host_syncs` for what counts as a read.
    """
    result, syncs = _call_counting(fn, args, what, section)
    if syncs.count > limit:
        raise GradingFailure(
            f"{what} made {syncs.describe()}; at most {limit} expected. Each read of a tensor's value "
            f"waits for the device (a sync point).{reread(section)}"
        )
    return result


@guard.checked
def assert_uploads_at_most(
    fn: Callable[..., Any], args: Sequence[Any], limit: int, *, what: str, section: str | None = None
) -> Any:
    """Call ``fn(*args)`` quietly, counting NumPy arrays copied into tensors; fail above ``limit``.

    Returns what ``fn`` returned.
    """
    result, syncs = _call_counting(fn, args, what, section)
    if syncs.uploads > limit:
        raise GradingFailure(
            f"{what} copied {syncs.uploads} NumPy arrays into tensors; at most {limit} expected. On a GPU each "
            f"copy crosses from host memory to the device while the device waits.{reread(section)}"
        )
    return result


def _reports_recorded(args: Sequence[Any], reported: list, runs: Callable[[], int] | None = None) -> tuple:
    """``args`` with each function among them recording, at each call, its first argument (the step a report is
    for) in ``reported``, and with ``runs``, ``(step, runs())`` instead: the steps run when the report was made."""
    from tfperf.grading.remote import CALLED_BACK

    def recording(report: Callable[..., Any]) -> Callable[..., Any]:
        def recorded(*values: Any, **keywords: Any) -> Any:
            first = values[0] if values else next(iter(keywords.values()), None)
            try:
                step = int(np.asarray(first))
            except (TypeError, ValueError):
                step = None
            reported.append(step if runs is None else (step, runs()))
            return report(*values, **keywords)

        return recorded

    return tuple(recording(a) if type(a) in CALLED_BACK else a for a in args)


@guard.checked
def assert_reports_while_training(
    fn: Callable[..., Any],
    args: Sequence[Any],
    *,
    steps: int,
    every: int,
    what: str,
    section: str | None = None,
) -> Any:
    """Call ``fn(*args)`` quietly, counting chapter 5's training steps (the runs of
    :func:`tfperf.experiments.gpu_sync.train_step`, eagerly or inside graphs); fail unless it ran ``steps`` of them,
    and called each function among ``args`` (a report, its first argument the step it reports) for step ``s`` before
    training had run more than one block of ``every`` steps past it (by step ``s + every + 1``): a loop that
    queues the next block before it reads the last one passes, a loop that holds its reports back to the end does not.

    Returns what ``fn`` returned. In the judge the steps are counted in the answer's process, each time the answer
    calls back (:func:`tfperf.autograding.judged_calls.callback_stub`).
    """
    from tfperf.experiments import gpu_sync
    from tfperf.grading.remote import Remote

    if isinstance(fn, Remote):  # in the judge: counted in the answer's process over the call
        reported: list = []
        with fn.counted(("steps",)) as seen:
            result = call(fn, _reports_recorded(args, reported), who=what, section=section)
        if seen.get("tampered") or "steps" not in seen:
            raise GradingFailure(
                "The reports check cannot grade: the grading environment was modified. Remove the code that does it."
            )
        ran, at_calls = int(seen["steps"]["run"]), [int(n) for n in seen["steps"]["at_calls"]]
        if len(at_calls) != len(reported):
            raise GradingFailure(f"The reports check cannot grade: {len(reported)} reports, {len(at_calls)} counted.")
        made = list(zip(reported, at_calls))
    else:
        start, made = gpu_sync.steps_run(), []
        result = call(
            fn, _reports_recorded(args, made, lambda: gpu_sync.steps_run() - start), who=what, section=section
        )
        ran = gpu_sync.steps_run() - start
    if ran != steps:
        raise GradingFailure(
            f"{what} ran gpu_sync.train_step {ran} times; expected {steps}, once per step (the check counts its "
            f"runs to see when each report is made: train with it).{reread(section)}"
        )
    for step, run in made:
        if step is not None and run > step + every + 1:
            raise GradingFailure(
                f"{what}: the report for step {step} was made after {run} training steps had run; it is due before "
                f"step {step + every + 1} runs (at most one block of {every} step{'s' if every != 1 else ''} after it). Report while the "
                f"loop trains, not after it: a report that comes at the end cannot warn of a loss that went wrong."
                f"{reread(section)}"
            )
    return result
