"""Calling learner code: quietly, and with its exceptions turned into clear failures."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from tfperf.runtime import logs


class GradingFailure(AssertionError):
    """A check failed; the message is written for the learner.

    In IPython (JupyterLab, nbgrader's kernel) it shows as its message alone, without a
    traceback through this library: the cell still fails, so nbgrader scores it 0.
    """

    def _render_traceback_(self) -> list[str]:
        """The lines IPython shows instead of a traceback (IPython calls this on any exception that has it)."""
        lines = str(self).splitlines() or [type(self).__name__]
        return [f"\x1b[0;31mCheck failed:\x1b[0m {lines[0]}", *lines[1:]]


class NotWritten(NotImplementedError):
    """An answer that is not written yet: raised by the placeholder :func:`not_written` puts in its place.

    Shown like :class:`GradingFailure`, as its message alone.
    """

    def __init__(self, name: str, section: str | None = None):
        super().__init__(f"{name} is not written yet.{reread(section)}")
        self.name = name

    _render_traceback_ = GradingFailure._render_traceback_


def not_written(name: str, section: str | None = None) -> Callable[..., Any]:
    """A placeholder for the answer ``name`` in an untouched student notebook: calling it raises :class:`NotWritten`.

    The student versions define one for each name a top-level answer cell must define
    (:mod:`tfperf.authoring.notebooks`), so that its Check says "not written yet" instead of a ``NameError``.
    """

    def placeholder(*args: Any, **kwargs: Any) -> Any:
        raise NotWritten(name, section)

    placeholder.__name__ = placeholder.__qualname__ = name
    return placeholder


def reread(section: str | None) -> str:
    return f'\nReread the section "{section}".' if section else ""


_SYMBOLIC_HINT = (
    " Inside a tf.function, tensors are symbolic while TensorFlow traces the Python code into a graph: "
    "they have no values yet, so .numpy(), float(), int() and Python ifs on them cannot work there. "
    "Return the tensor from the tf.function and read it outside, only as often as you need it "
    "(or print it inside the graph with tf.print)."
)


def explain(err: BaseException) -> str:
    """An explanation for errors whose TensorFlow message does not say what went wrong."""
    text = f"{type(err).__name__}: {err}"
    if "SymbolicTensor" in text or "OperatorNotAllowedInGraphError" in text or "only available when eager" in text:
        return _SYMBOLIC_HINT
    return ""


def call(fn: Callable[..., Any], args: Sequence[Any], *, who: str, section: str | None) -> Any:
    """Call learner code quietly, turning its exceptions into a clear failure."""
    return call_capturing(fn, args, who=who, section=section, stdout=False)[0]


def call_capturing(
    fn: Callable[..., Any], args: Sequence[Any], *, who: str, section: str | None, stdout: bool
) -> tuple[Any, logs.Captured]:
    """:func:`_call`, also returning what the call wrote (to stdout too if ``stdout``)."""
    try:
        with logs.captured_output() if stdout else logs.captured_stderr() as captured:
            result = fn(*args)
        return result, captured
    except GradingFailure:
        raise
    except Exception as err:  # the learner's bug, reported as a failure of this check
        hint = explain(err)
        if isinstance(err, NotWritten):
            raise GradingFailure(
                str(err) if section is None else f"{err.name} is not written yet.{reread(section)}"
            ) from None
        if isinstance(err, NotImplementedError) and not hint:
            raise GradingFailure(
                f"{who} is not written yet (it raises NotImplementedError).{reread(section)}"
            ) from None
        raise GradingFailure(f"{who} raised {type(err).__name__}: {err}{hint}{reread(section)}") from err
