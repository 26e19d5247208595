"""The assertions that the course's nbgrader tests (and visible checks) call.

Every failure is a :class:`GradingFailure` whose message says what was measured, what
was expected, and which section of the notebook to reread. The learner's code runs
inside :func:`tfperf.logs.captured_stderr`, so its warnings and TensorFlow's log lines
cannot reach the test cell's stderr (which nbgrader would score as a failure).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from tfperf import device, host_syncs, logs, targets, timing, traces

#: When set, every :func:`assert_speedup` appends what it measured to this JSON-lines
#: file (``python -m tfperf calibrate`` uses it).
RECORD_ENV_VAR = "TFPERF_RECORD"


class GradingFailure(AssertionError):
    """A check failed; the message is written for the learner."""


def _reread(section: str | None) -> str:
    return f"\nReread the section \"{section}\"." if section else ""


_SYMBOLIC_HINT = (
    " Inside a tf.function, tensors are symbolic while TensorFlow traces the Python code into a graph: "
    "they have no values yet, so .numpy(), float(), int() and Python ifs on them cannot work there. "
    "Return the tensor from the tf.function and read it outside, only as often as you need it "
    "(or print it inside the graph with tf.print)."
)


def _hint(err: BaseException) -> str:
    """An explanation for errors whose TensorFlow message does not say what went wrong."""
    text = f"{type(err).__name__}: {err}"
    if "SymbolicTensor" in text or "OperatorNotAllowedInGraphError" in text or "only available when eager" in text:
        return _SYMBOLIC_HINT
    return ""


def _call(fn: Callable[..., Any], args: Sequence[Any], *, who: str, section: str | None) -> Any:
    """Call learner code quietly, turning its exceptions into a clear failure."""
    return _call_capturing(fn, args, who=who, section=section, stdout=False)[0]


def _call_capturing(fn: Callable[..., Any], args: Sequence[Any], *, who: str, section: str | None,
                    stdout: bool) -> tuple[Any, logs.Captured]:
    """:func:`_call`, also returning what the call wrote (to stdout too if ``stdout``)."""
    try:
        with (logs.captured_output() if stdout else logs.captured_stderr()) as captured:
            result = fn(*args)
        return result, captured
    except GradingFailure:
        raise
    except Exception as err:  # the learner's bug, reported as a failure of this check
        hint = _hint(err)
        if isinstance(err, NotImplementedError) and not hint:
            raise GradingFailure(f"{who} is not written yet (it raises NotImplementedError).{_reread(section)}") from None
        raise GradingFailure(f"{who} raised {type(err).__name__}: {err}{hint}{_reread(section)}") from err


def _as_array(value: Any, what: str) -> np.ndarray:
    if hasattr(value, "numpy"):
        value = value.numpy()
    try:
        return np.asarray(value)
    except Exception as err:
        raise GradingFailure(f"{what} is a {type(value).__name__}, which is not an array of numbers.") from err


def check_same_result(got: Any, expected: Any, *, what: str = "The result", rtol: float = 1e-5,
                      atol: float = 1e-6, check_dtype: bool = True, section: str | None = None) -> None:
    """Fail unless ``got`` matches ``expected`` in type, shape, dtype and values."""
    if isinstance(expected, (tuple, list)):
        if not isinstance(got, (tuple, list)) or len(got) != len(expected):
            raise GradingFailure(f"{what} should be a sequence of {len(expected)} items; got {type(got).__name__}.{_reread(section)}")
        for i, (g, e) in enumerate(zip(got, expected)):
            check_same_result(g, e, what=f"{what}[{i}]", rtol=rtol, atol=atol, check_dtype=check_dtype, section=section)
        return
    if hasattr(expected, "numpy") and not hasattr(got, "numpy"):
        raise GradingFailure(
            f"{what} should be a TensorFlow tensor (like the unfixed code returns); got {type(got).__name__}.{_reread(section)}")
    g, e = _as_array(got, what), _as_array(expected, "The expected result")
    if g.shape != e.shape:
        raise GradingFailure(f"{what} has shape {g.shape}; expected {e.shape}.{_reread(section)}")
    if check_dtype and g.dtype != e.dtype:
        raise GradingFailure(f"{what} has dtype {g.dtype}; expected {e.dtype}.{_reread(section)}")
    if not np.allclose(g, e, rtol=rtol, atol=atol, equal_nan=True):
        worst = float(np.max(np.abs(g.astype(np.float64) - e.astype(np.float64)))) if g.size else 0.0
        raise GradingFailure(
            f"{what} differs from the expected values (largest difference {worst:.3g}; "
            f"allowed: rtol={rtol:g}, atol={atol:g}).{_reread(section)}")


def check_function(fn: Callable[..., Any], args: Sequence[Any], expected: Any, *, what: str,
                   rtol: float = 1e-5, atol: float = 1e-6, section: str | None = None) -> None:
    """Call learner code quietly and fail unless it returns ``expected``."""
    got = _call(fn, args, who=what, section=section)
    check_same_result(got, expected, what=what, rtol=rtol, atol=atol, section=section)


def check_same_as(fn: Callable[..., Any], reference: Callable[..., Any], args: Sequence[Any], *, what: str,
                  rtol: float = 1e-5, atol: float = 1e-6, section: str | None = None) -> None:
    """Call learner code and ``reference`` quietly with ``args``; fail unless the results match."""
    expected = _call(reference, tuple(args), who="The reference code", section=None)
    got = _call(fn, tuple(args), who=what, section=section)
    check_same_result(got, expected, what=what, rtol=rtol, atol=atol, section=section)


def assert_raises(fn: Callable[..., Any], args: Sequence[Any], error: type[BaseException], *,
                  what: str, section: str | None = None) -> None:
    """Fail unless ``fn(*args)`` raises ``error``."""
    try:
        with logs.captured_stderr():
            fn(*args)
    except error:
        return
    except Exception as err:
        raise GradingFailure(f"{what} should raise {error.__name__}; it raised {type(err).__name__}: {err}{_reread(section)}") from err
    raise GradingFailure(f"{what} should raise {error.__name__}, but it returned normally.{_reread(section)}")


def assert_host_syncs_at_most(fn: Callable[..., Any], args: Sequence[Any], limit: int, *, what: str,
                              section: str | None = None) -> Any:
    """Call ``fn(*args)`` quietly, counting host reads of tensor values; fail above ``limit``.

    Returns what ``fn`` returned. See :mod:`tfperf.host_syncs` for what counts as a read.
    """
    with host_syncs.counting() as syncs:
        result = _call(fn, args, who=what, section=section)
    if syncs.count > limit:
        raise GradingFailure(
            f"{what} made {syncs.describe()}; at most {limit} expected. Each read of a tensor's value "
            f"waits for the device (a sync point).{_reread(section)}")
    return result


def assert_uploads_at_most(fn: Callable[..., Any], args: Sequence[Any], limit: int, *, what: str,
                           section: str | None = None) -> Any:
    """Call ``fn(*args)`` quietly, counting NumPy arrays copied into tensors; fail above ``limit``.

    Returns what ``fn`` returned.
    """
    with host_syncs.counting() as syncs:
        result = _call(fn, args, who=what, section=section)
    if syncs.uploads > limit:
        raise GradingFailure(
            f"{what} copied {syncs.uploads} NumPy arrays into tensors; at most {limit} expected. On a GPU each "
            f"copy crosses from host memory to the device while the device waits.{_reread(section)}")
    return result


def assert_prints_at_most(fn: Callable[..., Any], args: Sequence[Any], limit: int, *, what: str,
                          section: str | None = None) -> Any:
    """Call ``fn(*args)`` capturing stdout and stderr; fail if it printed more than ``limit`` lines.

    ``print`` and ``tf.print`` both count; Python warnings and TensorFlow's own log noise
    do not. Returns what ``fn`` returned.
    """
    result, captured = _call_capturing(fn, args, who=what, section=section, stdout=True)
    printed = "\n".join((captured.stdout, captured.python, captured.native))
    lines = [line for line in printed.splitlines() if line.strip() and not logs.is_noise(line)]
    if len(lines) > limit:
        first = lines[0] if len(lines[0]) <= 60 else lines[0][:57] + "..."
        raise GradingFailure(
            f"{what} printed {len(lines)} lines (the first: {first!r}); at most {limit} expected. "
            f"Printing from a loop (print or tf.print) costs time on every step.{_reread(section)}")
    return result


def check_reports(got: Sequence[tuple[int, Any]], expected: Sequence[tuple[int, Any]], *,
                  what: str = "The reported losses", rtol: float = 1e-4, atol: float = 1e-5,
                  section: str | None = None) -> None:
    """Fail unless ``got``, a list of ``(step, value)`` reports, names the steps of ``expected``
    in order, each with a plain Python or NumPy number close to the expected value."""
    steps, expected_steps = [s for s, _ in got], [s for s, _ in expected]
    if steps != expected_steps:
        shown = steps if len(steps) <= 12 else steps[:12] + ["..."]
        raise GradingFailure(f"{what} were for steps {shown} ({len(steps)} reports); expected steps {expected_steps}.{_reread(section)}")
    for (step, value), (_, want) in zip(got, expected):
        if not isinstance(value, (int, float, np.number, np.ndarray)) or np.ndim(value) != 0:
            raise GradingFailure(
                f"{what}: the report for step {step} is a {type(value).__name__}; expected a number read "
                f"from the loss tensor (with float() or .numpy()).{_reread(section)}")
        if not np.isclose(float(value), float(want), rtol=rtol, atol=atol):
            raise GradingFailure(f"{what}: step {step} reported {float(value):.6g}; expected {float(want):.6g}.{_reread(section)}")


def assert_steady_epochs(fn: Callable[..., Any], args: Sequence[Any], *, what: str, section: str | None = None,
                         growth: float = 2.0, slack: float = 0.005) -> Any:
    """Call ``fn(*args, on_epoch_end)`` and fail if its epochs trace or slow down as they go.

    ``fn`` must call ``on_epoch_end(epoch)`` after every epoch. After the first epoch no
    ``tf.function`` may trace again, and the median time of the last third of the epochs
    may exceed that of the second to the third-plus-one epoch by at most ``growth`` times
    (plus ``slack`` seconds). Returns what ``fn`` returned.
    """
    marks = []

    def on_epoch_end(epoch: int = -1) -> None:
        marks.append((timing.now(), counted.count))

    with traces.counting() as counted:
        start = (timing.now(), 0)
        result = _call(fn, (*args, on_epoch_end), who=what, section=section)
    if len(marks) < 4:
        raise GradingFailure(f"{what} called on_epoch_end {len(marks)} times; expected once per epoch "
                             f"(at least 4 here).{_reread(section)}")
    points = [start, *marks]
    seconds = [b[0] - a[0] for a, b in zip(points, points[1:])]
    new_traces = [b[1] - a[1] for a, b in zip(points, points[1:])]
    if sum(new_traces[1:]):
        shown = ", ".join(str(n) for n in new_traces)
        raise GradingFailure(
            f"{what} kept tracing after the first epoch: traces per epoch {shown}; expected none after the first. "
            f"Each trace builds and keeps a new graph: look for arguments of a tf.function that change on every "
            f"call (Python numbers, lists that grow) and for tf.functions created inside the loop.{_reread(section)}")
    third = max(1, len(seconds) // 3)
    early, late = sorted(seconds[1:1 + third])[third // 2], sorted(seconds[-third:])[third // 2]
    if late > growth * early + slack:
        raise GradingFailure(
            f"{what} slows down from epoch to epoch: {early * 1e3:.1f} ms per epoch early on, {late * 1e3:.1f} ms "
            f"at the end (at most {growth:g}x allowed). Look for work that grows with the number of steps "
            f"done so far.{_reread(section)}")
    return result


def _record(exercise: str, device_class: str, target: float, comparison: timing.Comparison) -> None:
    path = os.environ.get(RECORD_ENV_VAR)
    if not path:
        return
    row = {"exercise": exercise, "device_class": device_class, "target": target,
           "ratios": list(comparison.ratios), "candidate_s": comparison.candidate.median,
           "baseline_s": comparison.baseline.median}
    with open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps(row) + "\n")


def assert_speedup(candidate: Callable[..., Any], baseline: Callable[..., Any], *, exercise: str,
                   make_inputs: Callable[[], Sequence[Any]], section: str | None = None,
                   rtol: float = 1e-5, atol: float = 1e-6, pairs: int = 7, min_time: float = 0.05,
                   target: float | None = None, vary_inputs: bool = False) -> None:
    """Fail unless ``candidate`` computes what ``baseline`` computes and is fast enough.

    ``make_inputs()`` returns the positional arguments of both functions. The results
    are compared on those inputs, then the two are timed in interleaved pairs, then
    compared again on fresh inputs (an answer that remembers its last result fails).
    The speedup must reach ``target`` (default: :func:`tfperf.targets.target_for`).
    With ``vary_inputs=True`` every timed call gets new inputs from ``make_inputs()``
    (for costs paid once per new value, such as tracing); keep ``make_inputs`` cheap.
    """
    device_class = device.device_class()
    target = targets.target_for(exercise, device_class) if target is None else target

    inputs = tuple(make_inputs())
    expected = _call(baseline, inputs, who="The unfixed code", section=section)
    got = _call(candidate, inputs, who="Your function", section=section)
    check_same_result(got, expected, what="Your function's result", rtol=rtol, atol=atol, section=section)

    try:
        with logs.captured_stderr():
            if vary_inputs:
                comparison = timing.compare(lambda: candidate(*make_inputs()), lambda: baseline(*make_inputs()),
                                            pairs=pairs, min_time=min_time)
            else:
                comparison = timing.compare(lambda: candidate(*inputs), lambda: baseline(*inputs),
                                            pairs=pairs, min_time=min_time)
    except Exception as err:
        raise GradingFailure(f"Your function raised {type(err).__name__} while being timed: {err}{_reread(section)}") from err

    fresh = tuple(make_inputs())
    check_same_result(_call(candidate, fresh, who="Your function", section=section),
                      _call(baseline, fresh, who="The unfixed code", section=section),
                      what="Your function's result on new inputs", rtol=rtol, atol=atol, section=section)

    _record(exercise, device_class, target, comparison)
    if comparison.median < target:
        raise GradingFailure(
            f"Same results as the unfixed code, but not fast enough: measured {comparison.describe()}; "
            f"the target on a {device_class.upper()} is at least {target:.2f}x.{_reread(section)}")
    print(f"Passed: same results, {comparison.describe()}; target {target:.2f}x on {device_class.upper()}.")


def tracing_count(fn: Any, *, what: str = "Your function", section: str | None = None) -> int:
    """How many times the ``tf.function`` ``fn`` has traced; fail if it is not a ``tf.function``."""
    get = getattr(fn, "experimental_get_tracing_count", None)
    if not callable(get):
        raise GradingFailure(
            f"{what} is not a tf.function (it is a {type(fn).__name__}). Make {what} itself the tf.function: "
            f"decorate it with @tf.function once, where it is defined (not inside another function or a loop)."
            f"{_reread(section)}")
    return int(get())


def assert_traces_at_most(fn: Any, n: int, calls: Sequence[Sequence[Any]] = (), *,
                          run: Callable[[], Any] | None = None, what: str = "Your function",
                          section: str | None = None) -> int:
    """Fail unless the ``tf.function`` ``fn`` traces at most ``n`` times.

    ``fn`` is called with each argument tuple of ``calls``, then ``run()`` (code that
    should call ``fn``) is run. Returns the number of traces they caused.
    """
    before = tracing_count(fn, what=what, section=section)
    for args in calls:
        _call(fn, tuple(args), who=what, section=section)
    if run is not None:
        _call(run, (), who="Your code", section=section)
    after = tracing_count(fn, what=what, section=section)
    if after == 0:
        raise GradingFailure(f"{what} was never called, so it never traced: the code under test does not use it."
                             f"{_reread(section)}")
    traced = after - before
    if traced > n:
        during = f"{len(calls)} calls" if calls else "one run of your code"
        raise GradingFailure(
            f"{what} was traced {traced} times during {during}; expected at most {n}. "
            f"Every trace runs your Python code again and builds a new graph: look for Python numbers "
            f"or changing shapes among its arguments.{_reread(section)}")
    return traced


def assert_prints_each_call(fn: Callable[..., Any], calls: Sequence[Sequence[Any]], patterns: Sequence[str], *,
                            what: str = "Your function", section: str | None = None) -> list[str]:
    """Fail unless call ``i`` of ``fn`` (with ``calls[i]``) prints output matching regex ``patterns[i]``.

    Output is captured at the Python and file-descriptor levels on stdout and stderr, so
    ``print`` and ``tf.print`` both count. Returns what each call printed.
    """
    if len(calls) != len(patterns):
        raise ValueError("calls and patterns must have the same length")
    printed = []
    for i, (args, pattern) in enumerate(zip(calls, patterns)):
        try:
            with logs.captured_output() as out:
                fn(*args)
        except NotImplementedError:
            raise GradingFailure(f"{what} is not written yet (it raises NotImplementedError).{_reread(section)}") from None
        except Exception as err:
            raise GradingFailure(f"{what} raised {type(err).__name__}: {err}{_reread(section)}") from err
        text = out.text
        printed.append(text)
        if not re.search(pattern, text):
            shown = repr(text[:200]) if text.strip() else "nothing"
            raise GradingFailure(
                f"Call {i + 1} of {len(calls)} to {what} printed {shown}; expected output matching {pattern!r}."
                f"{_reread(section)}")
    return printed
