"""Checks of a learner's diagnosis procedure, on training scripts it has never seen (chapter 8).

``diagnose_codes(train)`` is given the ``train(steps)`` of a script made by
:func:`tfperf.experiments.capstone.variant`, with one pitfall or none, and returns the codes of what slows it (the
codes of ``tfperf diagnose``). It is right when it names the script's pitfall and no other pitfall the script could
have had (:data:`~tfperf.experiments.capstone.PITFALLS`); findings that are not among them (``per-batch-upload``,
``small-batch``, ...) may be named or not: whether they cost anything depends on the device. Every check also gives
it a script with no pitfall, so that an answer that names a pitfall whatever the script is wrong.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tfperf.grading import guard
from tfperf.grading.calls import GradingFailure, call, reread


def _codes(result: Any, who: str, section: str | None) -> set[str]:
    """The codes in what ``diagnose_codes`` returned: a set, list or tuple of plain strings."""
    if type(result) not in (set, frozenset, list, tuple):
        raise GradingFailure(
            f"{who} returned {type(result).__name__}; expected a set of finding codes such as "
            f"{{'retracing'}} (a set, list or tuple of str).{reread(section)}"
        )
    codes = set()
    for item in result:
        if type(item) is not str:  # exactly str: a subclass could compare equal to anything
            raise GradingFailure(f"{who} returned {item!r} among its codes; each code is a plain str.{reread(section)}")
        codes.add(item)
    return codes


@guard.checked
def check_diagnosis(
    diagnose_codes: Callable[[Callable[[int], Any]], Any],
    pitfall: str,
    *,
    seed: int | None,
    section: str | None = None,
) -> None:
    """Fail unless ``diagnose_codes`` names ``pitfall`` in a script that has it, and no pitfall at all in a script
    that has none; both scripts drawn from ``seed`` (None: afresh, which no table of answers holds)."""
    from tfperf.experiments import capstone  # imports TensorFlow: only when a check runs

    if pitfall not in capstone.PITFALLS:
        raise ValueError(f"unknown pitfall {pitfall!r}")
    second = None if seed is None else seed + 1
    for planted, script in ((pitfall, capstone.variant(pitfall, seed)), (None, capstone.variant(None, second))):
        shown = (
            f"diagnose_codes on a script you have not seen (batch {script.batch}, "
            f"{'one pitfall' if planted else 'no pitfall'})"
        )
        codes = _codes(call(diagnose_codes, (script.train,), who=shown, section=section), shown, section)
        named = codes & set(capstone.PITFALLS)
        if planted and planted not in named:
            raise GradingFailure(
                f"{shown} returned {sorted(codes)}: it missed what slows that script. Diagnose with enough warm-up "
                f"steps, the counted steps, and the Profiler on (profile_dir) for input-bound.{reread(section)}"
            )
        wrong = named - {planted}
        if wrong:
            raise GradingFailure(
                f"{shown} named {sorted(wrong)}, which that script does not have. A first call traces: leave it "
                f"out as warm-up; name what the measurement shows, not a guess.{reread(section)}"
            )
