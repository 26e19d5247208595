"""The memory one call of a compiled step needs: planned, read from XLA's buffer assignment (:func:`step_memory`),
and held, measured while it runs (:func:`peak_while`, :func:`resident_peak_while`).

Before a function compiled by XLA (``jit_compile=True``) runs, XLA plans every buffer it will use: the entry
parameters (each argument: the weights, the batch), the results, and the temporaries (activations kept for
the backward pass, gradients, everything in between), packed so that buffers whose lives do not overlap
share memory. The allocations of that plan are what one call holds at once. They are read from XLA's own
``HloProto`` (``experimental_get_compiler_ir(...)(stage="optimized_hlo_proto_serialized")``, its
``buffer_assignment``): the same on a CPU and a GPU, where TensorFlow's allocator statistics
(``tf.config.experimental.get_memory_info``) are documented for GPUs only
(on a CPU they exist only where oneDNN's operations are on, and :func:`peak_while` reads them there).
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


#: Blocks from this size up are mapped afresh while :func:`peak_while` measures on a CPU (smaller ones may reuse
#: heap memory that is already resident, and are not seen).
PEAK_BLOCK_BYTES = 64 << 10


def peak_while(fn: Any) -> tuple[Any, int | None, str]:
    """Call ``fn()``: its result, the most memory the device held during the call beyond what it held just before
    (bytes; None where it cannot be read), and what was read. Where TensorFlow's allocator keeps statistics for
    the device (a GPU; a CPU where oneDNN's operations are on, whose allocator pools freed blocks), its peak
    (``reset_memory_stats``, then ``get_memory_info``); on other CPUs, :func:`resident_peak_while`."""
    from tfperf.runtime import device, logs

    tf = logs.tensorflow()
    name = device.compute_device().strip("/")
    try:
        tf.config.experimental.reset_memory_stats(name)
    except ValueError:  # a CPU without oneDNN's operations: no statistics kept
        return resident_peak_while(fn)
    before = tf.config.experimental.get_memory_info(name)["current"]
    result = fn()
    device.sync()
    kind = "GPU" if device.device_class() == "gpu" else "CPU (oneDNN's)"
    return result, tf.config.experimental.get_memory_info(name)["peak"] - before, f"TensorFlow's {kind} allocator"


def resident_peak_while(fn: Any) -> tuple[Any, int | None, str]:
    """Call ``fn()``: its result, the process's peak resident memory during the call (``VmHWM``, reset just before)
    less its resident memory just before (bytes; None where Linux's counters cannot be read), and what was read.
    The heaps' free memory is given back to the system first (:func:`tfperf.runtime.processes.trim_heap`) and
    blocks of :data:`PEAK_BLOCK_BYTES` or more are mapped on their own meanwhile
    (:func:`tfperf.runtime.processes.large_frees_returned`), so that what the call allocates is not memory freed
    earlier and still resident (seen without the trim: a step planned at 10.9 MB read as 0.44 MB after other work
    had left free heap memory); parts of pages already in use may be. It counts every thread of the process, the Python
    ones too, and none of what an allocator that pools freed blocks reuses."""
    from tfperf.runtime import device, processes

    with processes.large_frees_returned(PEAK_BLOCK_BYTES):
        device.sync()
        processes.trim_heap()
        readable = processes.reset_peak()
        before = processes.resident_and_peak()
        result = fn()
        device.sync()
        after = processes.resident_and_peak()
    if not readable or before is None or after is None:
        return result, None, "the process's peak resident memory (not readable here)"
    return result, max(0, after[1] - before[0]), "the process's peak resident memory (VmHWM)"
