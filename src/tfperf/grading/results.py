"""Checks of what learner code returns."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from tfperf.grading import guard
from tfperf.grading.calls import GradingFailure, call, marked_wrong, reread, wrong_result
from tfperf.runtime import logs

#: Packages whose objects a check converts to arrays: an object of another class could say anything when asked
#: (its ``numpy()`` or ``__array__`` runs its own code), so it is not taken for the numbers it claims to hold.
CONVERTED_FROM = frozenset({"builtins", "numpy", "tensorflow", "keras"})


def as_array(value: Any, what: str) -> np.ndarray:
    owner = (getattr(type(value), "__module__", None) or "").partition(".")[0]
    if owner not in CONVERTED_FROM:
        raise GradingFailure(
            f"{what} is a {type(value).__name__}: expected a tensor, an array or a number (TensorFlow's, NumPy's or "
            "Python's own)."
        )
    if hasattr(value, "numpy"):
        value = value.numpy()
    try:
        return np.asarray(value)
    except Exception as err:
        raise GradingFailure(f"{what} is a {type(value).__name__}, which is not an array of numbers.") from err


def _plain(value: Any) -> bool:
    """Whether reading and comparing ``value`` runs no code but Python's, NumPy's and TensorFlow's own: a list or
    tuple of such values, or exactly an array of numbers, a NumPy or Python number, or TensorFlow's eager tensor
    (no subclass, which could define what a conversion or a comparison runs)."""
    kind = type(value)
    if kind is list or kind is tuple:
        return all(map(_plain, value))
    if kind is np.ndarray:
        return not value.dtype.hasobject
    return kind in _PLAIN_SCALARS or _eager(value)


#: Python's numbers and NumPy's scalar types themselves (not a subclass).
_PLAIN_SCALARS = frozenset({int, float, bool, complex, *np.sctypeDict.values()}) - {np.object_}


def _eager(value: Any) -> bool:
    ops = sys.modules.get("tensorflow.python.framework.ops")  # not imported: no value can be one of its tensors
    return ops is not None and type(value) is ops.EagerTensor


@guard.checked
def check_same_result(
    got: Any,
    expected: Any,
    *,
    what: str = "The result",
    rtol: float = 1e-5,
    atol: float = 1e-6,
    check_dtype: bool = True,
    section: str | None = None,
) -> None:
    """Fail unless ``got`` matches ``expected`` in type, shape, dtype and values (a failure marked as a wrong result:
    :func:`tfperf.grading.calls.wrong_result`)."""
    try:
        _same_result(got, expected, what=what, rtol=rtol, atol=atol, check_dtype=check_dtype, section=section)
    except GradingFailure as failure:
        marked_wrong(failure)
        raise


def _same_result(got: Any, expected: Any, *, what: str, rtol: float, atol: float, check_dtype: bool, section) -> None:
    if isinstance(expected, (tuple, list)):
        if not isinstance(got, (tuple, list)) or len(got) != len(expected):
            raise GradingFailure(
                f"{what} should be a sequence of {len(expected)} items; got {type(got).__name__}.{reread(section)}"
            )
        # Items that may run the learner's code when read (a subclass of an array, say) are each checked as a check
        # of their own, the guard verified before and after each; plain ones need not be (each verify is a pass over
        # every guarded function: a list of a few hundred items took most of a worker's time).
        item_check = _same_result if _plain(got) and _plain(expected) else check_same_result
        for i, (g, e) in enumerate(zip(got, expected)):
            item_check(g, e, what=f"{what}[{i}]", rtol=rtol, atol=atol, check_dtype=check_dtype, section=section)
        return
    if hasattr(expected, "numpy") and not hasattr(got, "numpy"):
        raise GradingFailure(
            f"{what} should be a TensorFlow tensor (like the unfixed code returns); got {type(got).__name__}.{reread(section)}"
        )
    g, e = as_array(got, what), as_array(expected, "The expected result")
    if g.shape != e.shape:
        raise GradingFailure(f"{what} has shape {g.shape}; expected {e.shape}.{reread(section)}")
    if check_dtype and g.dtype != e.dtype:
        raise GradingFailure(f"{what} has dtype {g.dtype}; expected {e.dtype}.{reread(section)}")
    if not np.allclose(g, e, rtol=rtol, atol=atol, equal_nan=True):
        worst = float(np.max(np.abs(g.astype(np.float64) - e.astype(np.float64)))) if g.size else 0.0
        raise GradingFailure(
            f"{what} differs from the expected values (largest difference {worst:.3g}; "
            f"allowed: rtol={rtol:g}, atol={atol:g}).{reread(section)}"
        )


@guard.checked
def check_function(
    fn: Callable[..., Any],
    args: Sequence[Any],
    expected: Any,
    *,
    what: str,
    rtol: float = 1e-5,
    atol: float = 1e-6,
    section: str | None = None,
) -> None:
    """Call learner code quietly and fail unless it returns ``expected``."""
    got = call(fn, args, who=what, section=section)
    check_same_result(got, expected, what=what, rtol=rtol, atol=atol, section=section)


@guard.checked
def check_same_as(
    fn: Callable[..., Any],
    reference: Callable[..., Any],
    args: Sequence[Any],
    *,
    what: str,
    rtol: float = 1e-5,
    atol: float = 1e-6,
    section: str | None = None,
) -> None:
    """Call learner code and ``reference`` quietly with ``args``; fail unless the results match."""
    expected = call(reference, tuple(args), who="The reference code", section=None)
    got = call(fn, tuple(args), who=what, section=section)
    check_same_result(got, expected, what=what, rtol=rtol, atol=atol, section=section)


@guard.checked
def assert_raises(
    fn: Callable[..., Any], args: Sequence[Any], error: type[BaseException], *, what: str, section: str | None = None
) -> None:
    """Fail unless ``fn(*args)`` raises ``error``."""
    try:
        with logs.captured_stderr():
            fn(*args)
    except error:
        return
    except Exception as err:
        raise GradingFailure(
            f"{what} should raise {error.__name__}; it raised {type(err).__name__}: {err}{reread(section)}"
        ) from err
    raise GradingFailure(f"{what} should raise {error.__name__}, but it returned normally.{reread(section)}")


@guard.checked
def check_reports(
    got: Sequence[tuple[int, Any]],
    expected: Sequence[tuple[int, Any]],
    *,
    what: str = "The reported losses",
    rtol: float = 1e-4,
    atol: float = 1e-5,
    section: str | None = None,
) -> None:
    """Fail unless ``got``, a list of ``(step, value)`` reports, names the steps of ``expected``
    in order, each with a plain Python or NumPy number close to the expected value (a failure marked as a wrong
    result: :func:`tfperf.grading.calls.wrong_result`)."""
    steps, expected_steps = [s for s, _ in got], [s for s, _ in expected]
    if steps != expected_steps:
        shown = steps if len(steps) <= 12 else steps[:12] + ["..."]
        raise wrong_result(
            f"{what} were for steps {shown} ({len(steps)} reports); expected steps {expected_steps}.{reread(section)}"
        )
    for (step, value), (_, want) in zip(got, expected):
        if (
            not isinstance(value, (int, float, np.number, np.ndarray))
            or np.ndim(value) != 0
            or np.dtype(getattr(value, "dtype", float)).kind not in "biuf"
        ):  # a number: not text in an array ('0.12' reads as one)
            raise wrong_result(
                f"{what}: the report for step {step} is a {type(value).__name__}; expected a number read "
                f"from the loss tensor (with float() or .numpy()).{reread(section)}"
            )
        if not np.isclose(float(value), float(want), rtol=rtol, atol=atol):
            raise wrong_result(
                f"{what}: step {step} reported {float(value):.6g}; expected {float(want):.6g}.{reread(section)}"
            )


def call_numbers(args: Sequence[Any]) -> list[float]:
    """The number of each of one call's arguments, in order: a call of a function the check passed, as the checks
    compare it. An argument is read as a number where it is one (a Python or NumPy number, or an array or tensor of
    no dimensions, of a numeric dtype), as :func:`check_reports` takes a report's value; anything else (a list, an
    array of more numbers or of text) reads as NaN, which no due number equals."""
    numbers: list[float] = []
    for value in args:
        array = as_array(value, "an argument") if _plain(value) and type(value) not in (list, tuple) else None
        number = array is not None and array.ndim == 0 and array.dtype.kind in "biuf"
        numbers.append(float(array) if number else float("nan"))
    return numbers


def calls_differ(
    got: Sequence[Sequence[float]], due: Sequence[Sequence[float]], *, rtol: float, atol: float
) -> str | None:
    """How the calls an answer made of a function it was passed as an argument (each call as
    :func:`call_numbers`) differ from the calls ``due``, in words; None where they agree: as many, in the same
    order, each with the same arguments (close to the due ones). The speed checks ask it of every timed call they
    compare, so an answer calls back as it does when it is checked, whether timed or not."""
    shown = lambda call: "(" + ", ".join(f"{x:.6g}" for x in call) + ")"  # noqa: E731
    if len(got) != len(due):
        times = "once" if len(got) == 1 else f"{len(got)} times"
        were = "1 call was" if len(due) == 1 else f"{len(due)} calls were"
        return f"it called the function it was passed {times}; {were} due"
    for number, (g, d) in enumerate(zip(got, due), start=1):
        if len(g) != len(d) or not np.allclose(g, d, rtol=rtol, atol=atol, equal_nan=True):
            return f"its call {number} of the function it was passed had arguments {shown(g)}; {shown(d)} were due"
    return None
