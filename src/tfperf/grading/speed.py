"""Checks of speed: a speedup over the unfixed code, and epochs that do not slow down; and the speed check kind.

:func:`assert_speedup` is what the notebooks' test cells call: in the learner's kernel it times both sides itself
(:func:`tfperf.grading.speed_trial.trial`); while grading, in the answer's worker, it compares two untimed results and
leaves the timing to the grading process. There, as a kind of :mod:`tfperf.autograding.check_kinds`, this module
reads each call from the test cell's text (:func:`speed_checks`, :class:`SpeedCheck`, the assertion's own defaults)
and times it with the same trial, the clock in the grading process (:func:`decide`, :func:`timed_outside`).
"""

from __future__ import annotations

import ast
import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from tfperf.grading import guard, speed_trial, targets
from tfperf.grading.calls import GradingFailure, call, is_marked_wrong, reread, wrong_result
from tfperf.grading.messages import NotRunnable
from tfperf.grading.remote import CALLED_BACK, positional
from tfperf.grading.results import as_array, call_numbers, calls_differ, check_same_result
from tfperf.grading.specs import arguments, default, is_test, literal, nbgrader_of
from tfperf.measure import op_counts, timing, traces
from tfperf.runtime import device, logs

#: When set, every :func:`assert_speedup` appends what it measured to this JSON-lines
#: file (``python -m tfperf calibrate`` uses it).
RECORD_ENV_VAR = "TFPERF_RECORD"
#: Set (to 1) by the grading process in an exercise's worker (``tfperf.autograding.outside``): it times the
#: speed checks itself, from out of the worker, so :func:`assert_speedup` checks the results only.
TIMED_OUTSIDE_ENV_VAR = "TFPERF_TIMED_OUTSIDE"
#: Set (to 1) by ``python -m tfperf calibrate``: every pair is timed, none left out once the verdict is settled
#: (a target is derived from the smallest ratio of them all).
ALL_PAIRS_ENV_VAR = "TFPERF_ALL_PAIRS"


def cores() -> int:
    """The cores this process may run on: its CPU affinity (a grading lane's or a container's cpuset), not the
    machine's count."""
    return len(os.sched_getaffinity(0))


def enough_cores(needed: int) -> bool:
    """Whether this process may run on at least ``needed`` cores: the gate of a speed check whose gain needs them
    (chapter 7's tf.data service: two pinned workers and the reader). The grading process decides it again in the
    unfixed code's worker, where no learner code ran."""
    return cores() >= needed


def _epoch_work(runs, elements) -> str:
    top = sorted(runs, key=lambda op: -elements[op])[:3]
    return ", ".join(f"{op} x{runs[op]} ({elements[op]} input elements)" for op in top) or "nothing"


@guard.checked
def assert_steady_epochs(
    fn: Callable[..., Any],
    args: Sequence[Any],
    *,
    what: str,
    section: str | None = None,
    growth: float = 3.0,
    slack: float = 0.02,
) -> Any:
    """Call ``fn(*args, on_epoch_end)`` and fail if its epochs trace or grow as they go.

    ``fn`` must call ``on_epoch_end(epoch)`` after every epoch (at least 4). Counted, not
    timed: after the first epoch no ``tf.function`` may trace, and every later epoch must
    run the same TensorFlow operations on as many input elements as the second
    (:mod:`tfperf.measure.op_counts`), so work that grows with the steps done so far fails on any
    machine, however loaded. As a back-stop for growth the counters cannot see, the median
    time of the last third of the epochs may exceed that of the early ones by at most
    ``growth`` times (plus ``slack`` seconds). Returns what ``fn`` returned.
    """
    marks = []

    def on_epoch_end(epoch: int = -1) -> None:
        ops.mark()
        marks.append((timing.now(), counted.count))

    guard.assert_nothing_competes("The epoch check")
    with traces.counting() as counted, op_counts.counting() as ops:
        start = (timing.now(), 0)
        result = call(fn, (*args, on_epoch_end), who=what, section=section)
        undone = traces.tampered() + ([] if op_counts.still_counting(ops) else ["TensorFlow's op callbacks"])
    if undone:
        guard.verify("The epoch check")
        raise GradingFailure(
            f"The epoch check cannot grade: the grading environment was modified "
            f"({', '.join(undone)}). Remove the code that does it and run the notebook again."
        )
    if len(marks) < 4:
        raise GradingFailure(
            f"{what} called on_epoch_end {len(marks)} times; expected once per epoch "
            f"(at least 4 here).{reread(section)}"
        )
    points = [start, *marks]
    seconds = [b[0] - a[0] for a, b in zip(points, points[1:])]
    new_traces = [b[1] - a[1] for a, b in zip(points, points[1:])]
    if sum(new_traces[1:]):
        shown = ", ".join(str(n) for n in new_traces)
        raise GradingFailure(
            f"{what} kept tracing after the first epoch: traces per epoch {shown}; expected none after the first. "
            f"Each trace builds and keeps a new graph: look for arguments of a tf.function that change on every "
            f"call (Python numbers, lists that grow) and for tf.functions created inside the loop.{reread(section)}"
        )
    segments = ops.segments()
    idle = [i + 1 for i, (runs, _) in enumerate(segments) if not runs]
    if idle:
        raise GradingFailure(
            f"{what} ran no TensorFlow operations in epoch(s) {idle}: every epoch must train.{reread(section)}"
        )
    second = segments[1]
    for epoch, (runs, elements) in enumerate(segments[2:], start=3):
        if runs != second[0] or elements != second[1]:
            grown = sorted(
                op
                for op in runs.keys() | second[0].keys()
                if runs[op] != second[0][op] or elements[op] != second[1][op]
            )
            raise GradingFailure(
                f"{what} does different work in different epochs: epoch 2 ran {_epoch_work(*second)}; epoch {epoch} "
                f"ran {_epoch_work(runs, elements)} (different: {', '.join(grown[:4])}). Look for work that grows "
                f"with the number of steps done so far (a list of every loss, a sum over all past values)."
                f"{reread(section)}"
            )
    third = max(1, len(seconds) // 3)
    early, late = sorted(seconds[1 : 1 + third])[third // 2], sorted(seconds[-third:])[third // 2]
    if late > growth * early + slack:
        raise GradingFailure(
            f"{what} slows down from epoch to epoch: {early * 1e3:.1f} ms per epoch early on, {late * 1e3:.1f} ms "
            f"at the end (at most {growth:g}x allowed). Look for work that grows with the number of steps "
            f"done so far.{reread(section)}"
        )
    return result


def _record(device_class: str, verdict: speed_trial.Verdict, record: str | Path | None = None, **more) -> None:
    """Append the check's row for the instructor's report to ``record`` (default ``$TFPERF_RECORD``; none: no row),
    with ``more`` fields (where it was timed)."""
    path = record if record is not None else os.environ.get(RECORD_ENV_VAR)
    if not path:
        return
    with open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps({**verdict.row(device_class), **more}) + "\n")


def _leaves(value: Any) -> list[Any]:
    if isinstance(value, (tuple, list)):
        return [leaf for item in value for leaf in _leaves(item)]
    return [value]


def _same_content(a: Any, b: Any) -> bool:
    """Whether two sets of inputs hold the same numbers (callables and other objects are ignored)."""
    for x, y in zip(_leaves(a), _leaves(b)):
        if x is not y and not callable(x) and not isinstance(x, (int, float, str)) and not hasattr(x, "shape"):
            return False  # a new object of another kind (a data store, say): it may well hold new content
        if isinstance(x, (int, float)) or hasattr(x, "shape"):
            try:
                xa, ya = as_array(x, "input"), as_array(y, "input")
            except GradingFailure:
                continue
            if xa.shape != ya.shape or not np.array_equal(xa, ya):
                return False
    return True


def recording(args: Sequence[Any], calls: list) -> tuple:
    """``args`` with each function among them (:data:`CALLED_BACK`) replaced by one that calls it and appends the
    call's arguments to ``calls`` (:func:`tfperf.grading.results.call_numbers`), in the function's order whether
    passed by position or by name (:func:`tfperf.grading.remote.positional`)."""

    def recorder(function: Callable[..., Any]) -> Callable[..., Any]:
        def called_back(*values: Any, **keywords: Any) -> Any:
            calls.append(call_numbers(positional(function, values, keywords)))
            return function(*values, **keywords)

        return called_back

    return tuple(recorder(a) if type(a) in CALLED_BACK else a for a in args)


def calls_due(calls_back: Callable[..., list] | None, unfixed_calls: list, args: Sequence[Any]) -> list:
    """The calls an answer must make of the functions among ``args``, from those the unfixed code made on them:
    ``calls_back(unfixed_calls, *args)`` where the check names it, else the same calls."""
    return list(unfixed_calls) if calls_back is None else list(calls_back(unfixed_calls, *args))


def _trial(
    candidate: Callable[..., Any],
    baseline: Callable[..., Any],
    make_inputs: Callable[[], Sequence[Any]],
    *,
    exercise: str,
    target: float,
    pairs: int,
    rtol: float,
    atol: float,
    calls_back: Callable[..., list] | None,
    limits: speed_trial.CallLimits | None = None,
    work: Callable[[int], Any] | None = None,
) -> speed_trial.Verdict:
    """The course's one speed trial (:func:`tfperf.grading.speed_trial.trial`) in this process: interleaved pairs
    on new inputs, both sides' results compared, the kernel checked between pairs and nothing else running."""
    draws = speed_trial.Draws(make_inputs)
    quiet = logs.captured_stderr
    answer = speed_trial.LocalSide(candidate, draws, who="Your function", record=recording, quiet=quiet, work=work)
    unfixed = speed_trial.LocalSide(
        baseline,
        draws,
        who="The unfixed code",
        record=recording,
        due=lambda calls, args: calls_due(calls_back, calls, args),
        quiet=quiet,
        work=work,
    )
    guard.assert_nothing_competes("The speed check")
    verdict = speed_trial.trial(
        unfixed,
        answer,
        exercise=exercise,
        target=target,
        close=speed_trial.Closeness(rtol, atol),
        pairs=pairs,
        every_pair=os.environ.get(ALL_PAIRS_ENV_VAR) == "1",
        between_pairs=lambda: guard.verify("The speed check"),
        limits=limits,
        work=work is not None,
    )
    guard.assert_nothing_competes("The speed check")
    return verdict


@guard.checked
def assert_speedup(
    candidate: Callable[..., Any],
    baseline: Callable[..., Any],
    *,
    exercise: str,
    make_inputs: Callable[[], Sequence[Any]],
    section: str | None = None,
    rtol: float = 1e-5,
    atol: float = 1e-6,
    pairs: int = 7,
    target: float | None = None,
    hint: str | None = None,
    calls_back: Callable[..., list] | None = None,
    host_syncs_at_most: int | None = None,
    uploads_at_most: int | None = None,
    work: Callable[[int], Any] | None = None,
) -> None:
    """Fail unless ``candidate`` computes what ``baseline`` computes and is fast enough.

    ``make_inputs()`` returns the positional arguments of both functions; its content must
    differ on every call (an unseeded random generator). Two untimed calls are compared with the unfixed code's
    first; then the course's speed trial (:func:`tfperf.grading.speed_trial.trial`, the one the grading process runs
    on its workers) times both as interleaved pairs, every timed call on new inputs made before the clock starts
    (an answer that remembers earlier results gains nothing; costs paid once whatever the content, tracing for a
    shape, stay allowed), and after each pair one of the candidate's calls, drawn at random, is compared with the
    unfixed code's result on the same inputs. A median between the square root of the target and the target
    is not judged on ``pairs`` pairs alone: twice as many more are taken, and the median of
    all decides (fewer honest answers rejected by a noisy moment, no wrong answer let through). The pairs stop
    once those to come could not change the verdict (every pair where ``$TFPERF_ALL_PAIRS`` is 1, as ``tfperf
    calibrate`` sets it). The speedup must reach ``target`` (default:
    :func:`tfperf.grading.targets.target_for`, fixed when the notebook's setup cell ran). ``hint``
    says what to try next when the speed falls short.

    Where the inputs hold functions (a report function), the candidate must call them as the unfixed code does
    on the same inputs, or as ``calls_back(unfixed_calls, *inputs)`` says (each call a list of its arguments'
    numbers): compared on the untimed calls and on every timed call compared.

    ``host_syncs_at_most`` and ``uploads_at_most``: the host reads of tensor values and the uploads of host data
    that each of the candidate's calls may make, counted on every timed call (:class:`tfperf.grading.speed_trial.
    CallsCounted`, both sides counted alike), as :func:`tfperf.grading.assert_host_syncs_at_most` and
    :func:`tfperf.grading.assert_uploads_at_most` count one call: a rule the cell counts holds on the timed calls too.

    ``work``: a function of the course's that tallies the work done in a block, weighted from a seed the trial draws
    for each input (:func:`tfperf.experiments.gpu_sync.work_done`); each compared call must add what the unfixed
    code's call on the same inputs adds, on the untimed and the timed calls alike, so an answer that does the checked
    work only where it can tell it is checked fails (:class:`tfperf.grading.speed_trial.Samples`). The grading
    process's answer worker imports it by name (:func:`work_named`), never from the notebook's namespace.
    """
    device_class = device.device_class()
    target = targets.target_for(exercise, device_class) if target is None else target
    if not guard.is_given(baseline) and "<locals>" not in getattr(baseline, "__qualname__", ""):
        raise ValueError(
            f"The course's test passes a baseline that no locked cell registered with "
            f"grading.given(), and that the test did not build itself: "
            f"{getattr(baseline, '__name__', baseline)!r}."
        )

    inputs, other = tuple(make_inputs()), tuple(make_inputs())
    if _same_content(inputs, other):
        raise ValueError(
            "make_inputs() returned the same content twice: timed calls need new content every "
            "call (draw it from an unseeded random generator)."
        )
    for args in (inputs, other):
        unfixed_calls: list = []
        got_calls: list = []
        expected = call(baseline, recording(args, unfixed_calls), who="The unfixed code", section=section)
        got = call(candidate, recording(args, got_calls), who="Your function", section=section)
        check_same_result(got, expected, what="Your function's result", rtol=rtol, atol=atol, section=section)
        if problem := calls_differ(got_calls, calls_due(calls_back, unfixed_calls, args), rtol=rtol, atol=atol):
            raise wrong_result(f"Your function's calls on the speed check's inputs: {problem}.{reread(section)}")
    if os.environ.get(TIMED_OUTSIDE_ENV_VAR) == "1":
        guard.assert_nothing_competes("The speed check")
        print("Same results as the unfixed code; the grading process times the speed next, out of this process.")
        return

    verdict = _trial(
        candidate,
        baseline,
        make_inputs,
        exercise=exercise,
        target=target,
        pairs=pairs,
        rtol=rtol,
        atol=atol,
        calls_back=calls_back,
        limits=speed_trial.CallLimits(host_syncs_at_most, uploads_at_most),
        work=work,
    )
    if verdict.problem:
        raise GradingFailure(f"The speed check stopped at a timed call: {verdict.problem}.{reread(section)}")
    _record(device_class, verdict)
    measured = (
        ""
        if targets.is_measured(exercise, device_class)
        else (f" (this target for a {device_class.upper()} was reasoned, not measured)")
    )
    if not verdict.passed:
        advice = f" {hint}" if hint else ""
        raise GradingFailure(
            f"Same results as the unfixed code, but not fast enough: measured {verdict.measured}; "
            f"the target on a {device_class.upper()} is at least {target:.2f}x{measured}.{advice}{reread(section)}"
        )
    print(f"Passed: same results, {verdict.measured}; target {target:.2f}x on {device_class.upper()}{measured}.")


# ---------------------------------------------------------------- the check kind, timed by the grading process

# The speed check kind of :mod:`tfperf.autograding.check_kinds`: each ``assert_speedup`` of a test cell that passed
# in the answer's worker (:func:`speed_checks`, :func:`specs`) is timed again with the clock in the grading process
# (:func:`decide`, :func:`timed_outside`): the answer's function in the exercise's worker, the unfixed code in a
# worker that never ran learner code (:class:`tfperf.autograding.recheck.Worker`), the same trial as above.


@dataclass(frozen=True)
class SpeedCheck:
    """One ``grading.assert_speedup`` call of a test cell, as source text."""

    grade_id: str
    exercise: str
    candidate: str
    baseline: str
    make_inputs: str
    prelude: str  # the test cell's own definitions (functions, imports) before the call
    hidden: bool = False  # in the cell's hidden part
    rtol: float = field(default_factory=lambda: _default("rtol"))  # each as assert_speedup's own
    atol: float = field(default_factory=lambda: _default("atol"))
    pairs: int = field(default_factory=lambda: _default("pairs"))
    condition: str | None = None  # the test of the ``if`` the call is in (top level of the cell): timed where it holds
    calls_back: str | None = None  # its ``calls_back`` (source): evaluated in the unfixed code's worker only
    host_syncs_at_most: int | None = field(default_factory=lambda: _default("host_syncs_at_most"))
    uploads_at_most: int | None = field(default_factory=lambda: _default("uploads_at_most"))
    work: str | None = None  # its ``work`` (source): evaluated in the unfixed code's worker, which names it


def _default(name: str) -> object:
    return default(assert_speedup, name)


def speed_checks(source_nb) -> list[SpeedCheck]:
    """Every ``assert_speedup`` call in the test cells of the instructor's notebook (its arguments' defaults are
    ``assert_speedup``'s own)."""
    found = []
    for cell in source_nb.cells:
        if not is_test(cell):
            continue
        tree = ast.parse(cell.source)
        hidden_from = cell.source.find("### BEGIN HIDDEN TESTS")
        hidden_line = cell.source[:hidden_from].count("\n") + 1 if hidden_from >= 0 else None
        definitions = [
            node for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.ClassDef))
        ]
        prelude = "\n".join(ast.get_source_segment(cell.source, node) for node in definitions)
        conditions = {}  # a call in a top-level if's body: its test; in its else branch: the test negated
        for node in (n for n in tree.body if isinstance(n, ast.If)):
            test = ast.get_source_segment(cell.source, node.test)
            for branch, condition in ((node.body, test), (node.orelse, f"not ({test})")):
                conditions |= {id(inner): condition for statement in branch for inner in ast.walk(statement)}
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "assert_speedup"):
                continue
            given = arguments(node, assert_speedup)
            found.append(
                SpeedCheck(
                    grade_id=nbgrader_of(cell)["grade_id"],
                    exercise=literal(given["exercise"]),
                    candidate=ast.get_source_segment(cell.source, given["candidate"]),
                    baseline=ast.get_source_segment(cell.source, given["baseline"]),
                    make_inputs=ast.get_source_segment(cell.source, given["make_inputs"]),
                    prelude=prelude,
                    hidden=hidden_line is not None and node.lineno > hidden_line,
                    rtol=literal(given["rtol"]),
                    atol=literal(given["atol"]),
                    pairs=literal(given["pairs"]),
                    condition=conditions.get(id(node)),
                    calls_back=None
                    if given["calls_back"] is None
                    else ast.get_source_segment(cell.source, given["calls_back"]),
                    host_syncs_at_most=literal(given["host_syncs_at_most"]),
                    uploads_at_most=literal(given["uploads_at_most"]),
                    work=None if given["work"] is None else ast.get_source_segment(cell.source, given["work"]),
                )
            )
    return found


def target_of(exercise: str) -> dict:
    """The target of ``exercise`` on this machine, as the unfixed code's worker reports it."""
    device_class = device.device_class()
    return {
        "target": targets.target_for(exercise, device_class),
        "device_class": device_class,
        "measured": targets.is_measured(exercise, device_class),
    }


def timed_outside(
    check: SpeedCheck,
    baseline,
    answer,
    *,
    pairs: int = 7,
    target: float | None = None,
    time_limit: float | None = None,
) -> speed_trial.Verdict:
    """Time ``answer`` against ``baseline`` (workers) with the course's one speed trial
    (:func:`tfperf.grading.speed_trial.trial`), the clock in this process; waits for a CPU that other processes held
    are read from ``/proc`` (:func:`tfperf.runtime.processes.reading`). ``target``: default, the one the baseline worker
    reported, else this machine's."""
    if target is None:
        target = getattr(baseline, "ready", {}).get("target")
    if target is None:
        target = target_of(check.exercise)["target"]
    return speed_trial.trial(
        baseline,
        answer,
        exercise=check.exercise,
        target=target,
        close=check,
        pairs=pairs,
        time_limit=time_limit,
        from_proc=True,
        limits=speed_trial.CallLimits(check.host_syncs_at_most, check.uploads_at_most),
        work=check.work is not None,
    )


def work_name(work: Callable[[int], Any]) -> str:
    """The name a worker imports a check's ``work`` by (:func:`work_named`): ``module:qualified name``. In the unfixed
    code's worker, which evaluated the test cell's source; only a function of the course's has one."""
    module, name = getattr(work, "__module__", "") or "", getattr(work, "__qualname__", "")
    if not module.startswith("tfperf.") or not name or "<" in name:
        raise ValueError(f"a speed check's work must be a function of the course's, not {work!r}")
    return f"{module}:{name}"


def work_named(name: str) -> Callable[[int], Any]:
    """The course's function :func:`work_name` named, imported here: in the answer's worker, not read from the
    namespace where the answer ran (which could have bound the name to something else)."""
    import importlib

    module, _, qualified = str(name).partition(":")
    if not module.startswith("tfperf.") or not qualified:
        raise ValueError(f"not a function of the course's: {name!r}")
    found: Any = importlib.import_module(module)
    for part in qualified.split("."):
        found = getattr(found, part)
    return found


#: A cell the judge ran is timed here too: the judge checks results only, never a clock (it would time the pipes).
AFTER_THE_JUDGE = True


def specs(grading, grade_id: str, source: str) -> list[SpeedCheck]:
    """The speed checks of a test cell that the grading process times once the cell passed in the answer's
    worker (those of the notebook's :func:`speed_checks` in that cell; none where nothing is timed outside)."""
    return [check for check in grading.speed_checks if check.grade_id == grade_id]


def decide(grading, check: SpeedCheck, outcome) -> None:
    """Time ``check`` with the clock in this process: the answer's function in its exercise's worker
    (``grading.answer``), the unfixed code in a worker that never ran learner code (``grading.clean_worker``).
    The outcome of its test cell passes only if the speedup reaches the target, every result compared. A prints
    check of the same cell on the same function watches every timed call too (its limit holds for each), and the
    functions of the cell's trace checks may not trace during the timed calls (:mod:`tfperf.grading.tracing`)."""
    from tfperf.grading import printing, tracing

    answer, said = grading.answer, "Timed by the grading process, out of the notebook's reach"
    source = grading.source(check.grade_id)
    prints = next((p for p in printing.prints_checks(check.grade_id, source) if p.function == check.candidate), None)
    traces = tracing.traces_checks(check.grade_id, source)
    try:
        baseline = grading.clean_worker(check)
        if not baseline.ready.get("condition", True):  # decided in the unfixed code's worker, as the cell decides it
            outcome.printed += f"{said}: not timed on this machine ({check.condition} is false there).\n"
            return
        before = [tracing.counted(answer, t) for t in traces]
        answer.ask(do="speed", function=check.candidate, make_inputs=check.make_inputs, work=baseline.ready.get("work"))
    except NotRunnable as problem:
        outcome.fail(f"{said}: {problem}")
        return
    answer.timed_calls = 0
    answer.watched = [] if prints is not None else None
    try:
        verdict = timed_outside(check, baseline, answer, pairs=check.pairs, time_limit=answer.timeout)
    except NotRunnable as problem:
        outcome.fail(f"{said}: {problem}")
        if is_marked_wrong(problem):  # the answer raised on a timed call, or never returned (not the unfixed code)
            outcome.wrong_result = str(problem)
        return
    finally:
        watched, answer.watched = answer.watched, None
        answer.end()
    if verdict.wrong:  # a call computed something else: held against the other cells where work is tallied
        outcome.wrong_result = verdict.problem
    if prints is not None and watched:
        if problem := printing.while_timed(answer.output, watched, prints):
            outcome.fail(f"{said}: {problem}")
            return
    for check_traces, counted_before in zip(traces, before):
        after = tracing.counted(answer, check_traces)
        if problem := tracing.retraced(check_traces, counted_before, after, answer.timed_calls):
            outcome.fail(f"{said}: {problem}")
            return
    device_class = str(getattr(baseline, "ready", {}).get("device_class", "")).upper()
    if verdict.problem:
        outcome.fail(f"{said}: {verdict.problem}.")
        return
    if grading.record is not None:
        _record(
            device_class.lower(),
            verdict,
            grading.record,
            timed="outside",
            preparing_share=verdict.preparing,
            preparing_waited=verdict.waited,
        )
    if not verdict.passed:
        outcome.fail(
            f"{said}: same results as the unfixed code, but not fast enough: {verdict.measured}; "
            f"the target on a {device_class} is at least {verdict.target:.2f}x."
        )
        return
    outcome.printed += f"{said}: {verdict.measured}; target {verdict.target:.2f}x on {device_class}.\n"


#: Pairs of a speed check timed only for what its calls compute (:func:`marks`): the trial's untimed calls, one pair
#: and the calls compared with it are enough to find an answer wrong on the check's sizes.
MARKS_PAIRS = 1


def marks(grading, check: SpeedCheck, outcome) -> None:
    """Where ``outcome``'s cell failed before ``check`` was timed, and ``check`` tallies the exercise's work (chapter
    5's ``train``, whose every call must train as the exercise says): make the check's calls all the same, for what
    they compute only (:data:`MARKS_PAIRS`), and mark the cell wrong (:attr:`Outcome.wrong_result`) where one was. An
    answer that fails a check on purpose early in the cell (it prints, or reads the host, on that check's call) is
    so still called on the sizes of the cell's later checks, where it may raise or compute something else; the cell's
    own failure stands, and a right answer's other cells stand too."""
    if check.work is None or outcome.wrong_result is not None or grading.clean_worker is None:
        return
    found = type(outcome)()
    decide(replace(grading, record=None), replace(check, pairs=MARKS_PAIRS), found)  # no row: not a speed verdict
    if found.wrong_result is not None:
        outcome.wrong_result = found.wrong_result
        outcome.printed += (
            "Its speed check's calls were made too, for their results only, and one was wrong: "
            f"{found.wrong_result.rstrip('.')}.\n"
        )
