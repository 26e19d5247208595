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
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tfperf.measure.instrument import Patches

#: Op types by which a graph updates a variable: a graph that has one is a training step's, or part of one.
VARIABLE_UPDATES = ("AssignVariableOp", "AssignAddVariableOp", "AssignSubVariableOp")


@dataclass(eq=False)
class Traces:
    """The traces a :func:`counting` block saw (so far), by traced Python function; the Python functions whose
    graphs update variables (:data:`VARIABLE_UPDATES`, or a ``ResourceApply...`` op); and, with a ``clock`` (a
    function returning seconds), the seconds spent tracing."""

    count: int = 0
    by_function: collections.Counter = field(default_factory=collections.Counter)
    updating: set = field(default_factory=set)
    clock: Callable[[], float] | None = None
    seconds: float = 0.0
    #: per graph traced (``__inference_...``): its own float32 matmul FLOPs (None where a product's shape is not
    #: fixed) and the graphs it calls
    graphs: dict[str, tuple[float | None, list[str]]] = field(default_factory=dict)

    def matmul_flops(self, graph_name: str, _seen: frozenset = frozenset()) -> float | None:
        """The float32 matmul FLOPs of one call of the graph ``graph_name`` and of every graph it calls, as traced in
        the block; None where one is unknown (not traced here, or a product whose shape is not fixed). A loop's body
        counts once."""
        if graph_name not in self.graphs or graph_name in _seen:
            return None
        own, called = self.graphs[graph_name]
        total = own
        for name in called:
            inner = self.matmul_flops(name, _seen | {graph_name})
            total = None if total is None or inner is None else total + inner
        return total

    def of(self, fn: Any) -> int:
        """Traces of the ``tf.function`` ``fn`` (or of the Python function it wraps)."""
        return self.by_function[python_function(fn)]


def python_function(fn: Any) -> Any:
    """The plain Python function behind a ``tf.function`` (itself for anything else)."""
    inner = getattr(fn, "python_function", fn)
    while hasattr(inner, "__wrapped__"):  # tf_decorator and functools.wraps layers
        inner = inner.__wrapped__
    return inner


def _counted(original):
    def _create_concrete_function(function_type, type_context, func_graph, tracing_options):
        key = python_function(getattr(tracing_options, "python_function", None))
        active = list(_patches.active)
        for t in active:
            t.count += 1
            t.by_function[key] += 1
        clocks = [(t, t.clock()) for t in active if t.clock is not None]
        concrete = None
        try:
            concrete = original(function_type, type_context, func_graph, tracing_options)
            return concrete
        finally:
            for t, started in clocks:
                t.seconds += t.clock() - started
            if _updates_variables(func_graph):
                for t in active:
                    t.updating.add(key)
            name = getattr(concrete, "name", None)
            if name is not None:
                name = name.decode() if isinstance(name, bytes) else str(name)
                flops = _graph_matmuls(func_graph)
                for t in active:
                    t.graphs[name] = flops

    return _create_concrete_function


#: Ops that multiply two float matrices, read for their FLOPs (2·m·k·n per product).
_MATMULS = ("MatMul", "BatchMatMulV2", "BatchMatMulV3")
#: Ops that call another graph (its name in the attribute ``f``, or the loop's ``body``).
_CALLS = {"StatefulPartitionedCall": "f", "PartitionedCall": "f", "While": "body", "StatelessWhile": "body"}


def _graph_matmuls(graph: Any) -> tuple[float | None, list[str]]:
    """A traced graph's own float32 matmul FLOPs (None if a product's shapes are not all known) and its callees."""
    flops: float | None = 0.0
    called = []
    try:
        operations = graph.get_operations()
    except Exception:  # noqa: BLE001 (a graph that cannot be read: unknown)
        return None, []
    for op in operations:
        if op.type in _CALLS:
            try:
                called.append(op.get_attr(_CALLS[op.type]).name)
            except (ValueError, AttributeError):
                continue
        elif op.type in _MATMULS and flops is not None and op.outputs[0].dtype.name == "float32":
            a, out = op.inputs[0].shape, op.outputs[0].shape
            if a.rank is None or out.rank is None or not a.is_fully_defined() or not out.is_fully_defined():
                flops = None
                continue
            transposed = any(op.get_attr(k) for k in ("transpose_a", "adj_x") if k in op.node_def.attr)
            inner = a[-2] if transposed else a[-1]
            flops += 2.0 * out.num_elements() * inner
    return flops, called


def _updates_variables(graph: Any) -> bool:
    """Whether the graph, or a function in its library (a loop's body, a branch), updates a variable."""
    try:
        types = {op.type for op in graph.get_operations()}
        for function in getattr(graph, "_functions", {}).values():
            definition = getattr(function, "definition", None)
            types |= {node.op for node in getattr(definition, "node_def", ())}
    except Exception:  # noqa: BLE001 (a graph that cannot be read: no update seen)
        return False
    return bool(types.intersection(VARIABLE_UPDATES)) or any(t.startswith("ResourceApply") for t in types)


def _install(patches: Patches[Traces]) -> None:
    from tensorflow.python.eager.polymorphic_function import tracing_compilation

    patches.replace(tracing_compilation, "_create_concrete_function", _counted)


_patches: Patches[Traces] = Patches(_install)


def counting(*, clock: Callable[[], float] | None = None) -> contextlib.AbstractContextManager[Traces]:
    """Count the traces of all ``tf.function`` s during the block (blocks may nest); with ``clock``, add up the
    seconds they took. Imports TensorFlow."""
    return _patches.block(Traces(clock=clock))


def tampered() -> list[str]:
    """Wrappers of an open block that code inside it removed or replaced (empty when intact)."""
    return _patches.tampered()
