"""Count the traces of every ``tf.function`` while a block runs.

A trace runs the function's Python code to build a new graph. It should happen once per
input signature; a trace on every call (a Python number or a growing Python list as an
argument, a ``tf.function`` created inside a loop) costs time and keeps every graph
alive. Unlike ``f.experimental_get_tracing_count()``, which counts one function's
traces and which any object can fake, :func:`counting` sees all of them as TensorFlow
builds them, including functions created inside the code under test, and knows which
Python function each trace was for::

    with traces.counting() as t:
        train()
    t.count, t.of(train_step)
"""

from __future__ import annotations

import collections
import contextlib
from dataclasses import dataclass, field
from typing import Any

from tfperf.measure.instrument import Patches


@dataclass(eq=False)
class Traces:
    """The traces a :func:`counting` block saw (so far), by traced Python function."""

    count: int = 0
    by_function: collections.Counter = field(default_factory=collections.Counter)

    def of(self, fn: Any) -> int:
        """Traces of the ``tf.function`` ``fn`` (or of the Python function it wraps)."""
        return self.by_function[_python_function(fn)]


def _python_function(fn: Any) -> Any:
    """The plain Python function behind a ``tf.function`` (itself for anything else)."""
    inner = getattr(fn, "python_function", fn)
    while hasattr(inner, "__wrapped__"):  # tf_decorator and functools.wraps layers
        inner = inner.__wrapped__
    return inner


def _counted(original):
    def _create_concrete_function(function_type, type_context, func_graph, tracing_options):
        key = _python_function(getattr(tracing_options, "python_function", None))
        for t in list(_patches.active):
            t.count += 1
            t.by_function[key] += 1
        return original(function_type, type_context, func_graph, tracing_options)

    return _create_concrete_function


def _install(patches: Patches[Traces]) -> None:
    from tensorflow.python.eager.polymorphic_function import tracing_compilation

    patches.replace(tracing_compilation, "_create_concrete_function", _counted)


_patches: Patches[Traces] = Patches(_install)


def counting() -> contextlib.AbstractContextManager[Traces]:
    """Count the traces of all ``tf.function`` s during the block (blocks may nest). Imports TensorFlow."""
    return _patches.block(Traces())


def tampered() -> list[str]:
    """Wrappers of an open block that code inside it removed or replaced (empty when intact)."""
    return _patches.tampered()
