"""Count the traces of every ``tf.function`` while a block runs.

A trace runs the function's Python code to build a new graph. It should happen once per
input signature; a trace on every call (a Python number or a growing Python list as an
argument, a ``tf.function`` created inside a loop) costs time and keeps every graph
alive. Unlike ``f.experimental_get_tracing_count()``, which counts one function's
traces, :func:`counting` sees all of them, including functions created inside the
code under test::

    with traces.counting() as t:
        train()
    t.count
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from dataclasses import dataclass


@dataclass(eq=False)
class Traces:
    """The number of traces a :func:`counting` block saw (so far)."""

    count: int = 0


_lock = threading.RLock()
_active: list[Traces] = []
_original = None


def _module():
    from tensorflow.python.eager.polymorphic_function import tracing_compilation

    return tracing_compilation


def _counted(original):
    def _create_concrete_function(*args, **kwargs):
        with _lock:
            for t in _active:
                t.count += 1
        return original(*args, **kwargs)

    return _create_concrete_function


@contextlib.contextmanager
def counting() -> Iterator[Traces]:
    """Count the traces of all ``tf.function`` s during the block (blocks may nest). Imports TensorFlow."""
    global _original
    traces = Traces()
    with _lock:
        if not _active:
            module = _module()
            _original = module._create_concrete_function
            module._create_concrete_function = _counted(_original)
        _active.append(traces)
    try:
        yield traces
    finally:
        with _lock:
            _active.remove(traces)
            if not _active:
                _module()._create_concrete_function = _original
                _original = None
