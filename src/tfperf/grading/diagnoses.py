"""Checks of a learner's diagnosis procedure, on training scripts it has never seen, and of a learner's fixed
script (chapter 8).

``diagnose_codes(train)`` is given the ``train(steps)`` of a script made by
:func:`tfperf.experiments.capstone.variant`, with one pitfall or none, and returns the codes of what slows it (the
codes of ``tfperf diagnose``). It is right when it names the script's pitfall and no other pitfall the script could
have had (:data:`~tfperf.experiments.capstone.PITFALLS`); findings that are not among them (``per-batch-upload``,
``small-batch``, ...) may be named or not: whether they cost anything depends on the device. Every check also gives
it a script with no pitfall, so that an answer that names a pitfall whatever the script is wrong.

``make_fixed_training(x, y, *, batch, width, seed)`` returns the ``(train, model)`` of the learner's script with every
pitfall fixed: :func:`check_fixed_script` runs the course's own diagnosis on it (the Profiler on) and fails where
one of the pitfalls is still found; its speed and results are checked against the script as written by the
chapter's ``assert_speedup``.
"""

from __future__ import annotations

import contextlib
import random
import sys
from collections.abc import Callable, Iterator
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


#: Draws the order in which :func:`check_diagnosis` hands its two scripts to the procedure, at every check: in a fixed
#: order (the script with the pitfall first), a procedure that never ran the Profiler passed every diagnosis cell by
#: naming ``input-bound`` on every other call where it counted nothing.
_ORDER = random.SystemRandom()


@guard.checked
def check_diagnosis(
    diagnose_codes: Callable[[Callable[[int], Any]], Any],
    pitfall: str,
    *,
    seed: int | None,
    section: str | None = None,
) -> None:
    """Fail unless ``diagnose_codes`` names ``pitfall`` in a script that has it, and no pitfall at all in a script
    that has none; both scripts drawn from ``seed`` (None: afresh, which no table of answers holds), handed over in an
    order drawn at every check (:data:`_ORDER`)."""
    from tfperf.experiments import capstone  # imports TensorFlow: only when a check runs

    if pitfall not in capstone.PITFALLS:
        raise ValueError(f"unknown pitfall {pitfall!r}")
    second = None if seed is None else seed + 1
    scripts = [(pitfall, capstone.variant(pitfall, seed)), (None, capstone.variant(None, second))]
    _ORDER.shuffle(scripts)  # a procedure cannot tell the script with the pitfall by its place
    for planted, script in scripts:
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


#: The fixed script's size in :func:`check_fixed_script`: the batches of :func:`~tfperf.experiments.capstone.variant`,
#: large enough that the Profiler's steps are not a few milliseconds, where one time slice of the scheduler decides.
FIXED_RECORDS, FIXED_BATCH, FIXED_WIDTH = 4096, 512, 256


#: How many diagnoses of the fixed script :func:`check_fixed_script` runs at most while ``input-bound`` is the only
#: pitfall found, failing only if each finds it: the input wait is timed over the Profiler's ten steps, a window of a
#: few tens of milliseconds where one time slice lost to another process (a class graded in parallel) can decide,
#: while an unfixed pipeline waits most of every step (docs/measurements-08_capstone.md). The pitfalls read from
#: counts (retraces, host reads, prints, eager steps) are counted the same every time and are not diagnosed again.
INPUT_WAIT_DIAGNOSES = 3


#: The capstone's functions that make or run a whole script: a fixed script written by the learner calls none.
WHOLE_SCRIPTS = ("make_training", "pipeline", "fix_ladder", "variant")


@contextlib.contextmanager
def _calls_into(module_file: str, names: tuple[str, ...]) -> Iterator[list[str]]:
    """The names of the functions of ``module_file`` among ``names`` that Python code calls in the block, in this
    thread and the threads it starts (read with a profile hook; code that removes the hook fails the check)."""
    import threading

    entered: list[str] = []

    def hook(frame, event, arg):
        if event == "call" and frame.f_code.co_filename == module_file and frame.f_code.co_name in names:
            entered.append(frame.f_code.co_name)

    before, before_threads = sys.getprofile(), threading.getprofile()
    sys.setprofile(hook)
    threading.setprofile(hook)
    try:
        yield entered
        if sys.getprofile() is not hook or threading.getprofile() is not hook:
            raise GradingFailure(
                "Your code changed Python's profile hook while it was checked: answers leave it alone."
            )
    finally:
        sys.setprofile(before)
        threading.setprofile(before_threads)


@guard.checked
def check_fixed_script(
    make_fixed_training: Callable[..., Any], *, seed: int | None = None, section: str | None = None
) -> None:
    """Fail unless ``make_fixed_training`` makes a ``(train, model)`` pair of its own (neither made nor run by the
    capstone's :data:`WHOLE_SCRIPTS`) in which ``tfperf.diagnose`` (ten counted steps after three of warm-up, the
    Profiler on ten more) finds none of the capstone's pitfalls (where ``input-bound`` is the only one found, it fails
    only if each of :data:`INPUT_WAIT_DIAGNOSES` diagnoses finds it); records and seed drawn from ``seed`` (None:
    afresh)."""
    import tempfile

    import numpy as np

    from tfperf.diagnosis.run import diagnose
    from tfperf.experiments import capstone  # imports TensorFlow: only when a check runs

    rng = np.random.default_rng(seed)
    x, y = capstone.make_data(FIXED_RECORDS, seed=int(rng.integers(0, 2**31 - 1)))
    who = f"make_fixed_training(x, y, batch={FIXED_BATCH}, width={FIXED_WIDTH}, seed=...)"
    model_seed = int(rng.integers(0, 2**31 - 1))
    with _calls_into(capstone.__file__, WHOLE_SCRIPTS) as entered:
        made = call(
            lambda: make_fixed_training(x, y, batch=FIXED_BATCH, width=FIXED_WIDTH, seed=model_seed),
            (),
            who=who,
            section=section,
        )
        if type(made) is not tuple or len(made) != 2 or not callable(made[0]):
            raise GradingFailure(
                f"{who} returned {type(made).__name__}; expected a pair (train, model), train(steps) running that "
                f"many steps.{reread(section)}"
            )
        train = made[0]
        call(train, (2,), who="Your fixed script's train(2)", section=section)
    if entered:
        raise GradingFailure(
            f"Your fixed script calls cs.{entered[0]}, which makes or runs the chapter's own script: write the fixed "
            f"script yourself, from the code section 1 shows, each pitfall fixed as section 4 fixes it."
            f"{reread(section)}"
        )
    for _ in range(INPUT_WAIT_DIAGNOSES):
        with tempfile.TemporaryDirectory(prefix="tfperf-fixed-script-") as logdir:
            found = call(
                lambda: diagnose(train, steps=10, warmup=3, card=None, profile_dir=logdir),
                (),
                who="Your fixed script's train(steps), under tfperf.diagnose",
                section=section,
            )
        left = [f for f in found.findings if f.code in capstone.PITFALLS]
        if {f.code for f in left} != {"input-bound"}:
            break  # none left, or a pitfall read from counts, which another diagnosis would count again
    if left:
        evidence = "; ".join(f.summary or f.code for f in left)
        raise GradingFailure(
            f"tfperf.diagnose still finds {', '.join(f.code for f in left)} in your fixed script ({evidence}). "
            f"Fix each cause the way section 4 fixes it, and diagnose again after every fix.{reread(section)}"
        )
