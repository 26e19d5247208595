"""Count host reads of tensor values: the sync points that stall a GPU.

On a GPU, TensorFlow queues kernels and returns at once; Python only waits for the
device when it *reads a value*: ``.numpy()``, ``float()``, ``int()``, ``bool()`` (a
Python ``if`` on a tensor), ``print``/``str``/``repr``/f-strings, ``range(t)``,
``np.asarray(t)``. Inside a :func:`counting` block, every such read of an eager tensor
(variables included) is counted, whatever the device, so the count is the same on a
laptop CPU and on a GPU::

    with host_syncs.counting() as syncs:
        for step in range(100):
            loss = train_step(x, y)
            if step % 10 == 0:
                print(float(loss))
    syncs.count   # 10

The block also counts ``uploads``: NumPy arrays copied into tensors (host -> device on
a GPU), whether by ``tf.convert_to_tensor``, ``tf.constant``, or a NumPy argument of an
operation or a ``tf.function``.

How: while a block runs, ``_EagerTensorBase._numpy`` (which every conversion above goes
through) and NumPy's ``asarray``/``array``/``asanyarray`` are wrapped with a counter; the
``constant_op.convert_to_eager_tensor`` counts uploads; the
originals are restored when the last block ends, also on exceptions. Not seen: NumPy
ufuncs applied to a tensor (``np.add(t, 1)``) and ``memoryview(t)``, which read through
the buffer protocol in C.
"""

from __future__ import annotations

import collections
import contextlib
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np

#: How a read looks in the learner's code, by the name of the function that asked for it.
KINDS = {
    "numpy": ".numpy()",
    "__float__": "float()",
    "__int__": "int()",
    "__index__": "use as an index (range(t), list[t])",
    "__bool__": "bool() or a Python if/while on a tensor",
    "__complex__": "complex()",
    "numpy_text": "print()/str()/repr()",
    "__format__": "an f-string or format()",
    "__array__": "np.asarray()/np.array()",
    "__reduce__": "pickle",
}

_NUMPY_CONVERTERS = ("asarray", "array", "asanyarray", "ascontiguousarray")


@dataclass(eq=False)
class HostSyncs:
    """What a :func:`counting` block saw: the number of host reads, and how they were made."""

    kinds: collections.Counter = field(default_factory=collections.Counter)
    uploads: int = 0  #: NumPy arrays copied into tensors

    @property
    def count(self) -> int:
        return sum(self.kinds.values())

    def describe(self) -> str:
        """E.g. ``"12 host reads (10 by float(), 2 by .numpy())"``."""
        if not self.count:
            return "no host reads"
        how = ", ".join(f"{n} by {kind}" for kind, n in self.kinds.most_common())
        return f"{self.count} host read{'s' if self.count != 1 else ''} ({how})"


_lock = threading.RLock()
_active: list[HostSyncs] = []
_originals: dict[tuple[object, str], object] = {}
_inside = threading.local()  # a read made while counting another (np.asarray -> __array__) counts once


def _record(kind: str) -> None:
    with _lock:
        for syncs in _active:
            syncs.kinds[kind] += 1


def _counted_numpy(original):
    def _numpy(self):
        if not getattr(_inside, "depth", 0):
            name = sys._getframe(1).f_code.co_name
            _record(KINDS.get(name, name))
        return original(self)

    return _numpy


def _counted_upload(original):
    def convert_to_eager_tensor(value, *args, **kwargs):
        if isinstance(value, np.ndarray):
            with _lock:
                for syncs in _active:
                    syncs.uploads += 1
        return original(value, *args, **kwargs)

    return convert_to_eager_tensor


def _counted_converter(original):
    eager = _eager_tensor_type()

    def convert(obj, *args, **kwargs):
        if isinstance(obj, eager) and not getattr(_inside, "depth", 0):
            _record(KINDS["__array__"])
            _inside.depth = 1
            try:
                return original(obj, *args, **kwargs)
            finally:
                _inside.depth = 0
        return original(obj, *args, **kwargs)

    return convert


def _eager_tensor_type():
    from tensorflow.python.framework import ops

    return ops.EagerTensor


def _install() -> None:
    from tensorflow.python.framework import constant_op, ops

    base = ops._EagerTensorBase
    _originals[(base, "_numpy")] = base.__dict__["_numpy"]
    base._numpy = _counted_numpy(_originals[(base, "_numpy")])
    _originals[(constant_op, "convert_to_eager_tensor")] = constant_op.convert_to_eager_tensor
    constant_op.convert_to_eager_tensor = _counted_upload(constant_op.convert_to_eager_tensor)
    for name in _NUMPY_CONVERTERS:
        _originals[(np, name)] = getattr(np, name)
        setattr(np, name, _counted_converter(_originals[(np, name)]))


def _uninstall() -> None:
    for (owner, name), original in _originals.items():
        setattr(owner, name, original)
    _originals.clear()


@contextlib.contextmanager
def counting() -> Iterator[HostSyncs]:
    """Count host reads of eager tensor values made (in any thread) while the block runs.

    Blocks may nest; each counts what happens inside it. Imports TensorFlow.
    """
    syncs = HostSyncs()
    with _lock:
        if not _active:
            _install()
        _active.append(syncs)
    try:
        yield syncs
    finally:
        with _lock:
            _active.remove(syncs)
            if not _active:
                _uninstall()


def is_counting() -> bool:
    """Whether a :func:`counting` block is running (the instrumentation is installed)."""
    return bool(_active)
