"""Keep TensorFlow's log noise and Python warnings out of graded cells.

nbgrader gives zero points to a test cell that writes anything to stderr. TensorFlow
writes to stderr from C++ (straight to file descriptor 2) and from Python (the
``logging`` module, ``warnings``). :func:`quiet_tensorflow` lowers the C++ log level
before TensorFlow is imported; :func:`captured_stderr` catches all of it, at both
levels, while a block runs.
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import re
import sys
import tempfile
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field

#: Regular expression for the stderr lines TensorFlow prints on its own (C++/absl log
#: lines such as ``I0000 00:00:... port.cc:153] oneDNN custom operations are on``,
#: the absl preamble, CUDA's ``cuInit`` failure) and for Python warnings.
#: nbgrader's ``IgnorePattern`` preprocessor is configured with it.
NOISE_PATTERN = (
    r"(^|\n)(WARNING: All log messages before absl::InitializeLog\(\)"
    r"|[IWEF]\d{4} [\d:.]+\s+\d+ [\w./-]+:\d+\]"
    r"|.*cuInit"
    r"|To enable the following instructions: .* rebuild TensorFlow"
    r"|.*\w+Warning: )"
)


def quiet_tensorflow(level: str = "3") -> None:
    """Lower TensorFlow's C++ log level (only effective before ``import tensorflow``).

    A value already set in the environment wins, so a learner can ask for more. Written without a method call on
    ``os.environ``: library code calls :func:`tensorflow` inside ``tf.function`` bodies, where AutoGraph tries to
    convert every function called, cannot find the source of ``os.environ``'s methods, and (in a notebook) prints a
    warning on stdout, which the prints checks count as the learner's.
    """
    if "TF_CPP_MIN_LOG_LEVEL" not in os.environ:
        os.environ["TF_CPP_MIN_LOG_LEVEL"] = level


@dataclass
class Captured:
    """What a :func:`captured_stderr` (or :func:`captured_output`) block wrote."""

    python: str = ""
    native: str = ""
    warnings: list[str] = field(default_factory=list)
    stdout: str = ""  # only filled by :func:`captured_output`

    @property
    def text(self) -> str:
        parts = [self.stdout, self.python, self.native, *self.warnings]
        return "\n".join(p.strip() for p in parts if p.strip())


@contextlib.contextmanager
def captured_stderr() -> Iterator[Captured]:
    """Capture stderr at the Python level and the file-descriptor level, and warnings.

    Nothing reaches the notebook's stderr while the block runs; what was written is
    available afterwards in the yielded :class:`Captured`. Python ``logging`` is muted
    for the block too (TensorFlow's retracing warning goes through it).
    """
    with _capturing(stdout=False) as captured:
        yield captured


@contextlib.contextmanager
def captured_output() -> Iterator[Captured]:
    """Like :func:`captured_stderr`, and capture stdout too (Python and native levels).

    For checks on what code prints: ``tf.print`` writes from C++ to file descriptor 2
    (or 1), Python's ``print`` to ``sys.stdout``.
    """
    with _capturing(stdout=True) as captured:
        yield captured


@contextlib.contextmanager
def _capturing(*, stdout: bool) -> Iterator[Captured]:
    captured = Captured()
    python_buffer = io.StringIO()
    stdout_buffer = io.StringIO()
    with contextlib.ExitStack() as stack:
        if stdout:
            sys.stdout.flush()
            stack.enter_context(contextlib.redirect_stdout(stdout_buffer))
            native_out = stack.enter_context(tempfile.TemporaryFile(mode="w+b"))
            stack.enter_context(_redirected_fd(1, native_out.fileno()))
        caught = stack.enter_context(warnings.catch_warnings(record=True))
        warnings.simplefilter("always")
        stack.enter_context(contextlib.redirect_stderr(python_buffer))
        native_file = stack.enter_context(tempfile.TemporaryFile(mode="w+b"))
        stack.enter_context(_redirected_fd(2, native_file.fileno()))
        previous_disable = logging.root.manager.disable
        logging.disable(logging.CRITICAL)
        stack.callback(logging.disable, previous_disable)
        try:
            yield captured
        finally:
            sys.stderr.flush()
            if stdout:
                sys.stdout.flush()
                native_out.seek(0)
                captured.stdout = stdout_buffer.getvalue() + native_out.read().decode(errors="replace")
            native_file.seek(0)
            captured.native = native_file.read().decode(errors="replace")
            captured.python = python_buffer.getvalue()
            captured.warnings = [f"{w.category.__name__}: {w.message}" for w in caught]


def is_noise(line: str) -> bool:
    """Whether a stderr line is TensorFlow's routine start-up noise or a Python warning."""
    return re.search(NOISE_PATTERN, "\n" + line) is not None


def replay_unless_noise(captured: Captured) -> None:
    """Write what a block sent to stderr back to stderr, without the lines that are noise."""
    kept = [line for line in captured.text.splitlines() if line.strip() and not is_noise(line)]
    if kept:
        print("\n".join(kept), file=sys.stderr)


def tensorflow():
    """``import tensorflow`` with its C++ logging lowered first; returns the module."""
    quiet_tensorflow()
    import tensorflow as tf

    return tf


def quietly(fn, *args, **kwargs):
    """Call ``fn``, keeping TensorFlow's routine start-up notices off stderr (other lines still show)."""
    with captured_stderr() as captured:
        result = fn(*args, **kwargs)
    replay_unless_noise(captured)
    return result


@contextlib.contextmanager
def _redirected_fd(fd: int, target_fd: int) -> Iterator[None]:
    """Point file descriptor ``fd`` at ``target_fd`` for the block."""
    try:
        saved = os.dup(fd)
    except OSError:  # no such descriptor (e.g. a daemon): nothing to redirect
        yield
        return
    try:
        os.dup2(target_fd, fd)
        yield
    finally:
        os.dup2(saved, fd)
        os.close(saved)
