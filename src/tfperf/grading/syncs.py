"""Checks of how often learner code reads tensor values on the host or uploads NumPy arrays, and of whether a training
loop reports while it trains."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from tfperf.grading import guard
from tfperf.grading.calls import GradingFailure, call, reread, wrong_result
from tfperf.measure import host_syncs


def _call_counting(
    fn: Callable[..., Any],
    args: Sequence[Any],
    what: str,
    section: str | None,
    reports: bool = False,
    marks: Any = None,
):
    """Call learner code quietly inside a host-sync counting block; return its result, the counts, and with
    ``reports`` the training steps run in the call and ``(step, steps run by then)`` of each call of a function among
    ``args`` (:func:`_reports_recorded`); with ``marks`` (a reference's :class:`tfperf.experiments.gpu_sync.Marked`),
    chapter 5's training steps marked by its seed over the call, and ``made`` ends with what they were given. A
    :class:`tfperf.grading.remote.Remote` (in the judge) is counted in the answer's process over the call."""
    from tfperf.experiments import gpu_sync
    from tfperf.grading.remote import Remote

    if isinstance(fn, Remote):
        return _counted_in_the_answers_process(fn, args, what, section, reports, marks)
    args, made = _steps_at_reports(args) if reports else (args, None)
    with host_syncs.counting() as syncs, gpu_sync.marked(None if marks is None else marks.seed) as block:
        host_syncs.give(list(args))  # their shapes came with the call: reading them is not a sync
        result = call(fn, args, who=what, section=section)
        undone = host_syncs.tampered()
    if undone:
        guard.verify("The host-sync check")
        raise GradingFailure(
            f"The host-sync check cannot grade: the grading environment was modified "
            f"({', '.join(undone)}). Remove the code that does it and run the notebook again."
        )
    return result, syncs, ((*made(), None if block is None else block.given) if reports else None)


def _steps_at_reports(args: Sequence[Any]) -> tuple[tuple, Callable[[], tuple[int, list]]]:
    """``args`` with their reports recorded, and what to call after the call: ``(training steps run since now,
    [(step, steps run by then) of each report])``, counted as the judge's calls count them (:class:`StepsCounted`)."""
    steps = StepsCounted()
    made: list = []
    recorded = _reports_recorded(args, made, steps.run)
    return recorded, lambda: (steps.run(), made)


def _counted_in_the_answers_process(fn, args: Sequence[Any], what: str, section: str | None, reports: bool, marks):
    """:func:`_call_counting` of a call the judge makes: the answer's process counts, the judge reads the counts."""
    from tfperf.grading.remote import SeenSyncs

    reported: list = []
    counted = ("host_syncs", "steps") if reports else ("host_syncs",)
    with fn.counted(counted, marks=None if marks is None else marks.seed) as seen:
        result = call(fn, _reports_recorded(args, reported) if reports else args, who=what, section=section)
    if seen.get("tampered") or any(kind not in seen for kind in counted):
        raise GradingFailure(
            f"The host-sync check cannot grade: the grading environment was modified "
            f"({', '.join(map(str, seen.get('tampered') or ['the counters']))}). Remove the code that does it."
        )
    if not reports:
        return result, SeenSyncs(seen["host_syncs"]), None
    at_calls = [int(n) for n in seen["steps"]["at_calls"]]
    if len(at_calls) != len(reported):
        raise GradingFailure(f"The reports check cannot grade: {len(reported)} reports, {len(at_calls)} counted.")
    given = seen["steps"].get("given")
    made = (int(seen["steps"]["run"]), list(zip(reported, at_calls)), None if given is None else float(given))
    return result, SeenSyncs(seen["host_syncs"]), made


def _reports_recorded(args: Sequence[Any], reported: list, runs: Callable[[], int] | None = None) -> tuple:
    """``args`` with each function among them recording, at each call, the step it reports (its first parameter,
    passed by position or by name; None where it is not a whole number) in ``reported``, and with ``runs``,
    ``(step, runs())`` instead: the training steps run when the report was made."""
    from tfperf.grading.remote import CALLED_BACK, positional

    def recording(report: Callable[..., Any]) -> Callable[..., Any]:
        def recorded(*values: Any, **keywords: Any) -> Any:
            given = positional(report, values, keywords)
            try:
                step = float(np.asarray(given[0]))
                step = int(step) if step.is_integer() else None
            except (TypeError, ValueError, OverflowError, IndexError):
                step = None
            reported.append(step if runs is None else (step, runs()))
            return report(*values, **keywords)

        return recorded

    return tuple(recording(a) if type(a) in CALLED_BACK else a for a in args)


def _check_made_while_training(made: tuple, steps: int, every: int, what: str, section: str | None, marks=None):
    """Fail unless the call ran chapter 5's training step ``steps`` times, made each report for step ``s`` before
    more than ``s + every + 1`` steps had run (at most one block of ``every`` steps after it), and with ``marks`` (the
    reference's :class:`tfperf.experiments.gpu_sync.Marked`), gave those runs what the reference's were given."""
    ran, reports, given = made
    if ran != steps:
        raise wrong_result(
            f"{what} ran gpu_sync.train_step {ran} times; expected {steps}, once per step (the check counts its "
            f"runs to see when each report is made: train with it).{reread(section)}"
        )
    for step, run in reports:
        if step is None:
            raise wrong_result(f"{what}: a report's step is not a whole number.{reread(section)}")
        if run > step + every + 1:
            raise wrong_result(
                f"{what}: the report for step {step} was made after {run} training steps had run; it is due before "
                f"step {step + every + 1} runs (at most one block of {every} step{'s' if every != 1 else ''} after "
                f"it). Report while the loop trains, not after it: a report that comes at the end cannot warn of a "
                f"loss that went wrong.{reread(section)}"
            )
    if marks is not None and not marks.same_given(given):
        raise wrong_result(
            f"{what}: gpu_sync.train_step's runs were not given the batches xs[i], ys[i] and the weights being "
            f"trained, in order, as train_unfixed's were (the check sums what each run is given). Train the weights "
            f"you return with train_step itself, one run per step.{reread(section)}"
        )


@guard.checked
def assert_host_syncs_at_most(
    fn: Callable[..., Any],
    args: Sequence[Any],
    limit: int,
    *,
    what: str,
    section: str | None = None,
    reports_every: int | None = None,
    steps: int | None = None,
    marks: Any = None,
) -> Any:
    """Call ``fn(*args)`` quietly, counting host reads of tensor values; fail above ``limit``.

    With ``reports_every`` and ``steps`` (chapter 5's training loops), the same call must also run
    :func:`tfperf.experiments.gpu_sync.train_step` ``steps`` times (counted eagerly and inside graphs) and make its
    reports while it trains: each call of a function among ``args`` (a report, its first parameter the step) for step
    ``s`` before training ran more than one block of ``reports_every`` steps past it (by step
    ``s + reports_every + 1``). A loop that queues the next block before it reads the last one passes; a loop that
    holds its reports back to the end does not. In the judge the steps are counted in the answer's process as each
    report is made (:func:`tfperf.autograding.worker.callback_stub`).

    With ``marks`` (what a reference run's :func:`tfperf.experiments.gpu_sync.marked` block yielded), the call's runs
    of ``train_step`` are marked by the same seed: what it returns matches the reference's only where its training was
    those runs, in that order (the check that compares them is the caller's), and they must have been given what the
    reference's runs were given (the batches, and the weights as each found them).

    Returns what ``fn`` returned. See :mod:`tfperf.measure.host_syncs` for what counts as a read.
    """
    reports = reports_every is not None and steps is not None
    result, syncs, made = _call_counting(fn, args, what, section, reports, marks)
    if syncs.count > limit:
        raise GradingFailure(
            f"{what} made {syncs.describe()}; at most {limit} expected. Each read of a tensor's value "
            f"waits for the device (a sync point).{reread(section)}"
        )
    if reports:
        _check_made_while_training(made, steps, reports_every, what, section, marks)
    return result


@guard.checked
def assert_uploads_at_most(
    fn: Callable[..., Any], args: Sequence[Any], limit: int, *, what: str, section: str | None = None
) -> Any:
    """Call ``fn(*args)`` quietly, counting NumPy arrays copied into tensors; fail above ``limit``.

    Returns what ``fn`` returned.
    """
    result, syncs, _ = _call_counting(fn, args, what, section)
    if syncs.uploads > limit:
        raise GradingFailure(
            f"{what} copied {syncs.uploads} NumPy arrays into tensors; at most {limit} expected. On a GPU each "
            f"copy crosses from host memory to the device while the device waits.{reread(section)}"
        )
    return result


# ---------------------------------------------------------------- the answer's process, over the judge's calls


class HostSyncsCounted:
    """In the subject (:func:`tfperf.autograding.worker.counting_started`): the host reads and uploads of every
    call until the judge stops counting, by the course's counter, installed by the worker out of the restricted
    answer's reach; the judge reads them as a :class:`tfperf.grading.remote.SeenSyncs`."""

    def __init__(self, stack) -> None:
        self.syncs = stack.enter_context(host_syncs.counting())

    def tampered(self) -> list[str]:
        return host_syncs.tampered()

    def seen(self, names: tuple[str, ...], namespace: dict) -> dict:  # noqa: ARG002 (every counter's signature)
        return {
            "host_syncs": {
                "reads": self.syncs.count,
                "reads_described": self.syncs.describe(),
                "uploads": self.syncs.uploads,
                "uploads_described": self.syncs.describe_uploads(),
            }
        }


class StepsCounted:
    """In the subject: the training steps (:func:`tfperf.experiments.gpu_sync.steps_run`) run since the judge started
    counting, and how many had run at each call of a function the check passed (:meth:`called_back`: a report)."""

    def __init__(self, stack=None) -> None:  # noqa: ARG002 (every counter's signature)
        from tfperf.experiments import gpu_sync

        self.start, self.at_calls = gpu_sync.steps_run(), []

    def run(self) -> int:
        """The training steps run since the count started."""
        from tfperf.experiments import gpu_sync

        return gpu_sync.steps_run() - self.start

    def called_back(self) -> None:
        self.at_calls.append(self.run())

    def tampered(self) -> list[str]:
        return []

    def seen(self, names: tuple[str, ...], namespace: dict) -> dict:  # noqa: ARG002
        return {"steps": {"run": self.run(), "at_calls": list(self.at_calls)}}
