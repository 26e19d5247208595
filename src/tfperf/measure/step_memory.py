"""The memory one call of a compiled step needs, read from XLA's buffer assignment.

Before a function compiled by XLA (``jit_compile=True``) runs, XLA plans every buffer it will use: the entry
parameters (each argument: the weights, the batch), the results, and the temporaries (activations kept for
the backward pass, gradients, everything in between), packed so that buffers whose lives do not overlap
share memory. The allocations of that plan are what one call holds at once. They are read from XLA's own
``HloProto`` (``experimental_get_compiler_ir(...)(stage="optimized_hlo_proto_serialized")``, its
``buffer_assignment``): the same on a CPU and a GPU, where TensorFlow's allocator statistics
(``tf.config.experimental.get_memory_info``) are documented for GPUs only
(on a CPU they exist only where oneDNN's operations are on).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def step_memory(fn: Any, args: Sequence[Any]) -> dict[str, int]:
    """Bytes that XLA allocates for one call of ``fn(*args)`` (a ``tf.function`` with ``jit_compile=True``):
    ``parameters`` (the arguments), ``results`` (returned buffers that are not arguments), ``temporaries``
    (the rest) and their ``total``."""
    from tensorflow.compiler.xla.service import hlo_pb2

    from tfperf.measure.bytes_moved import compiled_with_xla

    if not compiled_with_xla(fn):
        raise ValueError("step_memory reads XLA's plan: pass a tf.function made with jit_compile=True")
    proto = hlo_pb2.HloProto()
    proto.ParseFromString(fn.experimental_get_compiler_ir(*args)(stage="optimized_hlo_proto_serialized"))
    found = {"parameters": 0, "results": 0, "temporaries": 0}
    for allocation in proto.buffer_assignment.buffer_allocations:
        if allocation.is_entry_computation_parameter:
            found["parameters"] += allocation.size
        elif allocation.maybe_live_out:
            found["results"] += allocation.size
        else:
            found["temporaries"] += allocation.size
    return found | {"total": sum(found.values())}
