"""Checks of how often a tf.function traces."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from tfperf.grading.calls import GradingFailure, call, reread


def tracing_count(fn: Any, *, what: str = "Your function", section: str | None = None) -> int:
    """How many times the ``tf.function`` ``fn`` has traced; fail if it is not a ``tf.function``."""
    get = getattr(fn, "experimental_get_tracing_count", None)
    if not callable(get):
        raise GradingFailure(
            f"{what} is not a tf.function (it is a {type(fn).__name__}). Make {what} itself the tf.function: "
            f"decorate it with @tf.function once, where it is defined (not inside another function or a loop)."
            f"{reread(section)}")
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
        call(fn, tuple(args), who=what, section=section)
    if run is not None:
        call(run, (), who="Your code", section=section)
    after = tracing_count(fn, what=what, section=section)
    if after == 0:
        raise GradingFailure(f"{what} was never called, so it never traced: the code under test does not use it."
                             f"{reread(section)}")
    traced = after - before
    if traced > n:
        during = f"{len(calls)} calls" if calls else "one run of your code"
        raise GradingFailure(
            f"{what} was traced {traced} times during {during}; expected at most {n}. "
            f"Every trace runs your Python code again and builds a new graph: look for Python numbers "
            f"or changing shapes among its arguments.{reread(section)}")
    return traced
