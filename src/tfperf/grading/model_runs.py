"""Checks of how many times a model runs to answer a request."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from tfperf.grading import guard
from tfperf.grading.calls import GradingFailure, call, reread


def _read(runs: Callable[[], int], section: str | None) -> int:
    try:
        return int(runs())
    except Exception as err:
        raise GradingFailure(
            f"The model's run counter could not be read ({err}). Do not change the model's "
            f"layers; restart the kernel and run all cells.{reread(section)}"
        ) from err


@guard.checked
def assert_model_runs(
    fn: Callable[..., Any],
    args: Sequence[Any],
    *,
    runs: Callable[[], int],
    at_most: int,
    at_least: int = 1,
    what: str,
    section: str | None = None,
) -> Any:
    """Call ``fn(*args)`` quietly; fail unless the model ran between ``at_least`` and ``at_most`` times.

    ``runs()`` reads the model's run counter (e.g. from
    :func:`tfperf.experiments.keras_fit.build_predictor`): one run per batch the model
    computes, eager or compiled. Returns what ``fn`` returned.
    """
    before = _read(runs, section)
    result = call(fn, tuple(args), who=what, section=section)
    ran = _read(runs, section) - before
    if ran < at_least:
        raise GradingFailure(
            f"{what} ran the model {ran} times; at least {at_least} expected: the predictions "
            f"must come from running the model.{reread(section)}"
        )
    if ran > at_most:
        raise GradingFailure(
            f"{what} ran the model {ran} times; at most {at_most} expected. Every run has a fixed cost "
            f"(on a GPU, launching its kernels), whatever the number of samples in it: give the model "
            f"many samples at once.{reread(section)}"
        )
    return result
