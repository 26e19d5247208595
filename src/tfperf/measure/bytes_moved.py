"""How many bytes a step moves to and from memory per call, read from what TensorFlow will run.

A memory-bound step is as fast as the bytes it moves allow. Two readings, each from TensorFlow itself:

- **op by op** (:func:`graph_bytes`): a ``tf.function`` without XLA runs its graph one op at a time, and
  each op reads its inputs from memory and writes its output there (TensorFlow's graph optimizer fuses a
  few patterns, such as a matmul with its bias; not a chain of elementwise ops). The sum over the ops of
  their inputs' and outputs' bytes, from the graph's static shapes.
- **as compiled** (:func:`hlo_bytes`): a function compiled by XLA (``jit_compile=True``) runs the kernels of
  its optimized HLO module; a *fusion* computes a whole chain in one pass. The sum, over the entry
  computation's instructions, of their operands' and results' bytes.

Both count what each kernel reads and writes, not what caches save: a lower bound on the traffic of
large tensors, an upper bound for tensors that stay in a cache.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

#: Graph ops that move no tensor data of their own.
FREE_OPS = frozenset(
    {"Placeholder", "Const", "Identity", "IdentityN", "NoOp", "ReadVariableOp", "VarHandleOp", "StopGradient"}
)
#: HLO instructions that launch no kernel (they name, build or reinterpret buffers).
FREE_INSTRUCTIONS = frozenset({"parameter", "constant", "tuple", "get-tuple-element", "bitcast", "after-all"})

_HLO_BYTES = {"pred": 1, "s8": 1, "u8": 1, "s16": 2, "u16": 2, "f16": 2, "bf16": 2, "s32": 4, "u32": 4, "f32": 4}
_HLO_BYTES |= {"s64": 8, "u64": 8, "f64": 8, "c64": 8, "c128": 16}
_SHAPE = re.compile(r"\b(" + "|".join(_HLO_BYTES) + r")\[([\d,]*)\]")
_INSTRUCTION = re.compile(r"^\s*(?:ROOT\s+)?%?([\w.\-]+)\s*=\s*(.+?)\s+([\w\-]+)\((.*?)\)(?:,|$)")


def _shape_bytes(text: str) -> int:
    """The bytes of every array shape in ``text`` (``f32[1024,16]{1,0}``, tuples too)."""
    total = 0
    for kind, dims in _SHAPE.findall(text):
        count = 1
        for dim in filter(None, dims.split(",")):
            count *= int(dim)
        total += count * _HLO_BYTES[kind]
    return total


def hlo_bytes(hlo_text: str) -> int:
    """Bytes read and written per call by the kernels of an optimized HLO module's entry computation."""
    start = hlo_text.find("\nENTRY ")
    if start < 0:
        raise ValueError("no ENTRY computation in this HLO text")
    sizes: dict[str, int] = {}
    total = 0
    for line in hlo_text[start + 1 :].splitlines()[1:]:
        if line.strip() == "}":
            break
        found = _INSTRUCTION.match(line)
        if found is None:
            continue
        name, shape, opcode, operands = found.groups()
        sizes[name] = _shape_bytes(shape)
        if opcode in FREE_INSTRUCTIONS:
            continue
        names = re.findall(r"%([\w.\-]+)", operands)
        total += sizes[name] + sum(sizes.get(operand, 0) for operand in names)
    return total


def _tensor_bytes(tensor) -> int:
    shape = tensor.shape
    if shape.rank is None or any(d is None for d in shape):
        raise ValueError(f"{tensor.name} has no static shape ({shape}): its bytes cannot be read from the graph")
    count = 1
    for dim in shape:
        count *= dim
    return count * (tensor.dtype.size if tensor.dtype.is_numpy_compatible else 0)


def _called_graphs(op) -> list:
    """The graphs of the functions an op runs (a call, a loop's body and condition, a branch)."""
    names = []
    for value in op.node_def.attr.values():
        if value.HasField("func"):
            names.append(value.func.name)
        names += [f.name for f in value.list.func]
    return [op.graph._get_function(name).graph for name in names]


def graph_bytes(graph) -> int:
    """Bytes read and written per call when a graph's ops run one at a time (resources and strings: 0).

    The ops of the functions it calls (``tf.function`` inside ``tf.function``, loops, conditions) are counted
    where they are called, each once, instead of the call (a loop's body counts once, however often it runs)."""
    total = 0
    for op in graph.get_operations():
        if op.type in FREE_OPS:
            continue
        inner = _called_graphs(op)
        if inner:
            total += sum(graph_bytes(g) for g in inner)
            continue
        total += sum(_tensor_bytes(t) for t in list(op.inputs) + list(op.outputs) if t.dtype.is_numpy_compatible)
    return total


def _is_tf_function(fn: Any) -> bool:
    """Whether ``fn`` is a ``tf.function`` itself: of TensorFlow's own class, not a subclass (whose methods
    could describe one function while calling another)."""
    from tensorflow.python.eager.polymorphic_function import polymorphic_function

    return type(fn) is polymorphic_function.Function


def compiled_with_xla(fn: Any) -> bool:
    """Whether ``fn`` is a ``tf.function`` that XLA compiles (``jit_compile=True``)."""
    return _is_tf_function(fn) and bool(fn._jit_compile)  # noqa: SLF001 (no public reading of it)


XLA = "as compiled by XLA"
OP_BY_OP = "op by op"


def bytes_moved(fn: Callable[..., Any], args: Sequence[Any]) -> tuple[int, str]:
    """Bytes ``fn(*args)`` moves per call, and how they were read: ``"as compiled by XLA"`` for a ``tf.function``
    compiled with ``jit_compile=True``, else ``"op by op"`` from its graph. Anything else that can be called
    (a plain Python function, an object with ``__call__``, a subclass of ``tf.function``'s class) is traced
    into a graph first, without XLA, by calling it: what it calls is what is counted."""
    count, how, _ = reading(fn, args)
    return count, how


def reading(fn: Callable[..., Any], args: Sequence[Any]) -> tuple[int, str, str | None]:
    """:func:`bytes_moved`, with what it was read from where that is text: XLA's optimized HLO module (which
    :func:`hlo_bytes` reads again anywhere, without TensorFlow), else None."""
    from tfperf.runtime import logs

    tf = logs.tensorflow()
    if compiled_with_xla(fn):
        module = fn.experimental_get_compiler_ir(*args)(stage="optimized_hlo")
        return hlo_bytes(module), XLA, module
    traced = fn if _is_tf_function(fn) else tf.function(lambda *a: fn(*a), jit_compile=False)
    concrete = traced.get_concrete_function(*args)
    module = _one_compiled_call(concrete, args)
    if module is not None:
        return hlo_bytes(module), XLA, module
    return graph_bytes(concrete.graph), OP_BY_OP, None


def _one_compiled_call(concrete, args: Sequence[Any]) -> str | None:
    """XLA's optimized HLO module of the function that ``concrete``'s graph only calls, where that graph does nothing
    but pass its own inputs (no captures) to one function XLA must compile (a ``jit_compile=True`` ``tf.function``
    called from a plain one): what runs is that module. None otherwise (an XLA function among other ops is counted
    op by op, as :func:`graph_bytes` reads it: a wrapper that did more would otherwise be read as fused)."""
    from tensorflow.python.eager import context
    from tensorflow.python.eager.polymorphic_function import compiler_ir

    graph = concrete.graph
    ops = [op for op in graph.get_operations() if op.type not in FREE_OPS]
    if len(ops) != 1 or concrete.captured_inputs or ops[0].type not in ("PartitionedCall", "StatefulPartitionedCall"):
        return None
    call, inputs = ops[0], list(graph.inputs)
    attrs = call.node_def.attr
    if "_XlaMustCompile" not in attrs or not attrs["_XlaMustCompile"].b or "f" not in attrs:
        return None
    flat = [a for a in args if hasattr(a, "dtype") and hasattr(a, "shape")]
    if (
        len(call.inputs) != len(inputs)
        or any(t is not p for t, p in zip(call.inputs, inputs))
        or len(flat) != len(inputs)
    ):
        return None
    ir = context.context().get_compiler_ir(
        device_name=compiler_ir.maybe_get_device_name(None),
        platform_name=None,
        function_name=attrs["f"].func.name,
        flat_args=flat,
        captured_inputs=[],
        stage="optimized_hlo",
    )
    return ir.decode() if isinstance(ir, bytes) else ir


__all__ = ["bytes_moved", "compiled_with_xla", "graph_bytes", "hlo_bytes", "reading"]
