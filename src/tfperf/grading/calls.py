"""Calling learner code: quietly, and with its exceptions turned into clear failures."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import Any, NoReturn, TypeVar

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


def wrong_result(message: str) -> GradingFailure:
    """A failure that says the call computed something else than the reference (a result, its reports, the training
    runs it made) or nothing at all (it raised), marked ``wrong_result``: where the exercise asks for the same work on
    every call (chapter 5's training), the grading process holds it against the exercise's other cells
    (:func:`tfperf.autograding.outside.grade_exercise`). Shown as any :class:`GradingFailure`."""
    return marked_wrong(GradingFailure(message))


_Error = TypeVar("_Error", bound=BaseException)


def marked_wrong(failure: _Error, wrong: bool = True) -> _Error:
    """``failure``, its own class kept, marked (where ``wrong``) as :func:`wrong_result` marks its failures; read back
    by :func:`is_marked_wrong`. The grading process marks its own errors so too: a timed call of the answer's that
    raised or never came back (:mod:`tfperf.autograding.outside`)."""
    if wrong:
        failure.wrong_result = True
    return failure


def is_marked_wrong(error: BaseException) -> bool:
    """Whether ``error`` was marked by :func:`marked_wrong`."""
    return getattr(error, "wrong_result", False) is True


class AnswerNotWritten(GradingFailure):
    """A check found an answer that is not written yet (the stub or placeholder it was released with).

    Shown like any failed check. In a notebook whose setup cell ran, a cell that fails with it (or with
    :class:`NotWritten`) still shows the failure but does not stop Run All (:func:`let_run_all_continue`).
    """


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


def is_not_written(err: BaseException | None) -> bool:
    """Whether ``err`` says that an answer is not written yet (and nothing else)."""
    return isinstance(err, (NotWritten, AnswerNotWritten))


def let_run_all_continue() -> None:
    """Make a cell that fails only because an answer is not written yet count as run, in IPython (a notebook's
    kernel); elsewhere, nothing.

    The cell still shows its failure (an error output: nbgrader's Validate and its grading score such a test
    cell 0), but its execution succeeds, so JupyterLab's Run All goes on to the end of the chapter instead of
    stopping at the first unwritten exercise. The outcome of a graded cell is decided outside the kernel
    (:mod:`tfperf.autograding.outside`), never from this. Registered once per shell.
    """
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    if shell is None or getattr(shell, "_tfperf_run_all_continues", False):
        return

    def forgive_unwritten(result: Any) -> None:  # IPython's post_run_cell event; ipykernel reads the result after it
        if is_not_written(getattr(result, "error_in_exec", None)):
            result.error_in_exec = None

    shell.events.register("post_run_cell", forgive_unwritten)
    shell._tfperf_run_all_continues = True


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
        from tfperf.grading.remote import AnswerRaised, ReturnedNotData

        try:
            _fail_for(err, who=who, section=section)
        except GradingFailure as failure:
            # in the judge, the answer raised on a call the check made, or returned what is not data: the call did
            # not compute the result (wrong_result). Not written yet too: an answer that raises it on some calls only
            # is written (it passed the others), and one written nowhere passes no cell to hold it against.
            if isinstance(err, (AnswerRaised, ReturnedNotData)):
                marked_wrong(failure)
            raise


def _fail_for(err: Exception, *, who: str, section: str | None) -> NoReturn:
    """Raise the :class:`GradingFailure` that says what ``err``, raised by the learner's ``who``, means."""
    from tfperf.grading.remote import ReturnedNotData

    if isinstance(err, ReturnedNotData):  # in the judge
        raise GradingFailure(f"{who} returned {err}.{reread(section)}") from None
    hint = explain(err)
    if isinstance(err, NotWritten):
        raise AnswerNotWritten(
            str(err) if section is None else f"{err.name} is not written yet.{reread(section)}"
        ) from None
    if isinstance(err, NotImplementedError) and not hint:
        raise AnswerNotWritten(f"{who} is not written yet (it raises NotImplementedError).{reread(section)}") from None
    raise GradingFailure(f"{who} raised {type(err).__name__}: {err}{hint}{reread(section)}") from err
