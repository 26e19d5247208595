"""Count the TensorFlow operations that eager code executes while a block runs.

Every eager operation (``tf.add``, ``tf.stack``, ...) and every call of a ``tf.function``
graph is one execution. TensorFlow reports each to its *op callbacks*
(``tensorflow/python/framework/op_callbacks.py``), the hook its own numerics checker
uses; :func:`counting` registers one for the block. It records, per operation type, how
many times it ran and how many input elements it received, so code whose work per step
grows with the number of steps done so far shows up as a growing count, exactly and on
any device::

    with op_counts.counting() as ops:
        for epoch in range(3):
            train_one_epoch()
            ops.mark()
    ops.segments()   # one Counter per epoch: equal when the epochs do the same work

A ``tf.function`` call appears under the name of its graph, ``__inference_<name>_<id>``,
shortened here to ``tf.function <name>``. Callbacks are per thread: operations that
``tf.data`` or Keras run on their own threads are not seen. Graph building is not counted
(that is :mod:`tfperf.measure.traces`' job).
"""

from __future__ import annotations

import collections
import contextlib
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field

_FUNCTION = re.compile(r"^__inference_(.+?)_\d+$")


def op_name(op_type: str) -> str:  # noqa: D401
    """``"AddV2"`` stays; ``"__inference_train_step_42"`` becomes ``"tf.function train_step"``."""
    found = _FUNCTION.match(op_type)
    return f"tf.function {found.group(1)}" if found else op_type


@dataclass(eq=False)
class OpCounts:
    """Executions (and input elements) per operation, with marks that split the block into segments."""

    runs: collections.Counter = field(default_factory=collections.Counter)
    elements: collections.Counter = field(default_factory=collections.Counter)
    _marks: list[tuple[collections.Counter, collections.Counter]] = field(default_factory=list)

    @property
    def count(self) -> int:
        return sum(self.runs.values())

    def mark(self) -> None:
        """End the current segment (e.g. an epoch) here."""
        self._marks.append((self.runs.copy(), self.elements.copy()))

    def segments(self) -> list[tuple[collections.Counter, collections.Counter]]:
        """``(runs, elements)`` per segment between marks (the part after the last mark is left out)."""
        out, previous = [], (collections.Counter(), collections.Counter())
        for runs, elements in self._marks:
            out.append((runs - previous[0], elements - previous[1]))
            previous = (runs, elements)
        return out

    def runs_of(self, graph_names: set[str]) -> int:
        """How many times the graphs named ``graph_names`` (``__inference_...``) ran."""
        return sum(n for op, n in self.raw_runs.items() if op in graph_names)

    raw_runs: collections.Counter = field(default_factory=collections.Counter)


_short = op_name


def _callback(counts: OpCounts):
    def on_op(op_type, inputs, attrs, outputs, op_name=None, graph=None):  # noqa: ARG001
        if graph is None:  # an eager execution, not graph building
            if isinstance(op_type, bytes):  # some eager paths (Keras layers run op by op) pass the type as bytes
                op_type = op_type.decode()
            name = _short(op_type)
            counts.runs[name] += 1
            counts.raw_runs[op_type] += 1
            counts.elements[name] += sum(
                int(getattr(t, "shape", ()).num_elements() or 0) for t in (inputs or ()) if hasattr(t, "shape")
            )
        return None

    return on_op


@contextlib.contextmanager
def counting() -> Iterator[OpCounts]:
    """Count eager operation executions of this thread during the block. Imports TensorFlow."""
    from tensorflow.python.framework import op_callbacks

    counts = OpCounts()
    callback = _callback(counts)
    op_callbacks.add_op_callback(callback)
    try:
        yield counts
    finally:
        op_callbacks.remove_op_callback(callback)


def counting_where_imported() -> contextlib.AbstractContextManager[OpCounts]:
    """:func:`counting` where TensorFlow is imported already; elsewhere an empty count, and TensorFlow is not imported
    for it: no graph can have run, and its import takes seconds and hundreds of MB (which a memory check beside the
    call would see)."""
    if "tensorflow" not in sys.modules:
        return contextlib.nullcontext(OpCounts())
    return counting()


def still_counting(counts_callback_owner: OpCounts) -> bool:
    """Whether the block's callback is still registered (learner code could have cleared them)."""
    from tensorflow.python.eager import context

    return any(
        getattr(cb, "__closure__", None) and any(c.cell_contents is counts_callback_owner for c in cb.__closure__)
        for cb in context.context().op_callbacks
    )
