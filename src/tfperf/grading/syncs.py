"""Checks of how often learner code reads tensor values on the host or uploads NumPy arrays."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

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
