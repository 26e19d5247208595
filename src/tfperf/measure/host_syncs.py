"""Count host reads of tensor values (the sync points that stall a GPU) and uploads of host data.

On a GPU, TensorFlow queues kernels and returns at once; Python only waits for the
device when it *reads a value*: ``.numpy()``, ``float()``, ``int()``, ``bool()`` (a
Python ``if`` on a tensor), ``print``/``str``/``repr``/f-strings, ``range(t)``,
``np.asarray(t)``, a NumPy function or ufunc applied to a tensor (``np.mean(t)``,
``np.add(t, 1)``), and, inside a graph, ``tf.numpy_function``/``tf.py_function``. Inside a
:func:`counting` block every such read of an eager tensor (variables included) is
counted, whatever the device, so the count is the same on a laptop CPU and on a GPU (a ``tf.py_function``'s
body gets its inputs on the host, all at once: its reads count as one a call, the crossing of its inputs, however
many values it reads)::

    with host_syncs.counting() as syncs:
        for step in range(100):
            loss = train_step(x, y)
            if step % 10 == 0:
                print(float(loss))
    syncs.count   # 10

The block also counts ``uploads``: host data (NumPy arrays, Python lists) turned into
tensors, whether by ``tf.convert_to_tensor``, ``tf.constant``, an argument of an
operation (``tf.multiply(row, w)``, ``w * row``, ``tf.raw_ops``: converted in TensorFlow's C++ fast path, counted
where Python hands it over) or of a ``tf.function``, or each tensor a ``tf.data`` iterator delivers: tf.data
keeps its elements in host memory (a generator's, a ``cache()``'s: each epoch delivers
them again), and ``tf.data.experimental.prefetch_to_device`` copies each one to the
device ahead of time, which hides the copy but does not remove it. On a GPU each of
these crosses from host memory to the device; the count is the same on a CPU, where
nothing crosses. (Python scalars are not
counted: they are what every ``x * 0.5`` converts; nor are short flat
sequences such as shapes.)

A read of a shape, size or rank that TensorFlow computed from a tensor the counted call was given (:func:`give`:
``int(tf.shape(xs)[0])`` of an argument ``xs``, or of ``xs[0]``, a part of it taken by Python's indices) is not
counted: those ops read only the tensor's metadata and keep their output in host memory, on a GPU too, and an
argument's shape came with the call; nor is an element of such an
``int32`` shape taken by plain Python indices (``[0]``, ``[1:]``: an ``int32`` slice stays in host memory on a GPU).
The shape of a tensor made inside the call is counted like any value when it is read as a tensor
(``tf.shape(t).numpy()``): it can carry one. Anything computed from a shape by another op, or indexed by a tensor,
is read like any value.

Some eager ops read a device value on the host without any of those calls; each is counted as a read when it runs
(in the block's own thread, by an op callback) on a value a GPU would hold (:func:`_on_device`: made in the block
from device values, given, or any tensor neither int32, a shape, nor an integer the host made: converted from
Python or NumPy (TensorFlow makes those on the CPU: ``pywrap_tensor.cc``), delivered by a ``tf.data`` pipeline of
host data (:func:`_of_what_it_was_built`), or computed by a stateless op TensorFlow pins to the host
(:func:`_pinned_to_the_host`; a stateful one, a ``tf.py_function``, may bring in a device value that is not among its
inputs); for text, datasets and tables, only the first two, as a converted array is an upload):

- making a tensor whose shape comes from the value: ``tf.zeros(n)``, ``tf.range(n)``, ``x[:n]``, ``tf.where(mask)``,
  ``tf.boolean_mask``; or a ``tf.function`` whose graph does, or branches on it (``tf.cond``, ``tf.while_loop``):
  :mod:`tfperf.measure.value_shapes` decides, from TensorFlow's own shape inference. Making it waits for the value,
  so its ``.shape`` and ``len()`` afterwards are free;
- making text, a ``tf.data`` dataset or a lookup table's entries of it (no GPU keeps strings; tf.data's ops and
  lookup tables run on the host);
- checking it: ``tf.debugging.check_numerics``, ``tf.debugging.Assert`` (their GPU kernels wait for their verdict);
- an op's ``InvalidArgumentError``, raised while executing eagerly: the error tells the host about the value.

Reading an integer converted from Python or NumPy (``int(tf.constant(7))``), the elements of a ``tf.data`` pipeline of
host data or its ``reduce`` by a function of them alone, or what a pinned op makes of these, is not counted: they are
in host memory. A float or bool ``tf.constant`` the learner reads is counted, as the chapters' examples count one
(``loss = tf.constant(0.25)`` stands for a loss).

How: while a block runs, the eager tensor's conversion methods (``_numpy`` and the C
method under it, ``_numpy_internal``), NumPy's converters, the tensor's NumPy dispatch
hooks (``__array_function__``, ``__array_ufunc__``), TensorFlow's host-function registry,
``convert_to_eager_tensor``, the eager fast path's entry (``TFE_Py_FastPathExecute``, which every generated op
calls), the ``tf.data`` iterator, the ops that make shapes (``Shape``, ``ShapeN``, ``Size``,
``Rank``) and a tensor's indexing (``__getitem__``), which mark what they return, are wrapped; the originals come
back when the last block ends (unless :func:`keep_installed` keeps them); and each block's thread has an op callback (:func:`_on_op`) for the tensors made.
Not seen: ``memoryview(t)`` and other readers of the C buffer protocol (the course's static screen flags them in
graded answers), and ops on resources and variants (a variable's, a ``tf.data`` iterator's, a tensor list's shape
comes from the resource, which :mod:`tfperf.measure.value_shapes` does not follow).
"""

from __future__ import annotations

import collections
import contextlib
import sys
import threading
import weakref
from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np

from tfperf.measure import value_shapes
from tfperf.measure.instrument import Patches

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
    "__array_function__": "a NumPy function on a tensor (np.mean(t), ...)",
    "__array_ufunc__": "a NumPy ufunc on a tensor (np.add(t, 1), ...)",
    "host_function": "tf.numpy_function/tf.py_func inside a graph",
    "making": "a wait to size a tensor or pick a branch (tf.zeros(n), tf.where, tf.boolean_mask, tf.cond)",
    "to_host": "text, a dataset or a table's entries made of a device value (tf.strings, tf.data, tf.lookup)",
    "check": "a check of a device value (tf.debugging.check_numerics, tf.debugging.Assert)",
    "error": "an op's error on a value (a failed check, a bad index or shape)",
}

_NUMPY_CONVERTERS = ("asarray", "array", "asanyarray", "ascontiguousarray", "asfortranarray")

#: What makes a tensor of another's metadata, in host memory on every device (TensorFlow's ``shape_ops.cc``; eager
#: ``tf.size`` and ``tf.rank`` make theirs from the shape Python already holds): ``(module, names)``.
_SHAPE_OPS = (
    ("gen_array_ops", ("shape", "shape_n", "size", "rank")),
    ("array_ops", ("size_internal", "rank_internal")),
)


@dataclass(eq=False)
class HostSyncs:
    """What a :func:`counting` block saw: the number of host reads, and how they were made; with ``origins``
    (:func:`counting`), also whose code made each read and upload (:func:`origin`)."""

    kinds: collections.Counter = field(default_factory=collections.Counter)
    uploads: int = 0  #: host arrays and lists copied into tensors
    upload_kinds: collections.Counter = field(default_factory=collections.Counter)
    upload_bytes: int = 0  #: the bytes of those uploads
    read_origins: collections.Counter = field(default_factory=collections.Counter)  #: (who, where) -> reads
    origin_kinds: collections.Counter = field(default_factory=collections.Counter)  #: (who, kind) -> reads
    upload_origins: collections.Counter = field(default_factory=collections.Counter)  #: (who, where) -> uploads
    with_origins: bool = False

    @property
    def count(self) -> int:
        return sum(self.kinds.values())

    def describe(self) -> str:
        """E.g. ``"12 host reads (10 by float(), 2 by .numpy())"``."""
        if not self.count:
            return "no host reads"
        how = ", ".join(f"{n} by {kind}" for kind, n in self.kinds.most_common())
        return f"{self.count} host read{'s' if self.count != 1 else ''} ({how})"

    def describe_uploads(self) -> str:
        """E.g. ``"40 uploads (32 by tf.convert_to_tensor or a NumPy argument, 8 by a tf.data iterator)"``."""
        if not self.uploads:
            return "no uploads"
        how = ", ".join(f"{n} by {kind}" for kind, n in self.upload_kinds.most_common())
        return f"{self.uploads} upload{'s' if self.uploads != 1 else ''} ({how})"


_inside = threading.local()  # a read made while counting another (np.asarray -> __array__) counts once


def _depth() -> int:
    return getattr(_inside, "depth", 0)


class _Nested:
    """Marks the reads made inside a counted read as part of it."""

    def __enter__(self):
        _inside.depth = _depth() + 1

    def __exit__(self, *exc):
        _inside.depth = _depth() - 1


#: Whose code a read or an upload was made by (:func:`origin`).
YOURS, KERAS, PIPELINE = "your code", "Keras", "the input pipeline"
#: The packages a read can pass through on its way from the code that asked for it.
_LIBRARY_PACKAGES = ("tensorflow", "keras", "numpy", "tfperf", "tf_keras", "absl", "IPython", "ipykernel", "runpy")
_PIPELINE_FRAMES = ("script_ops.py",)  # a tf.py_function or tf.numpy_function body, run by tf.data or a graph


def _library_folders() -> tuple[str, ...]:
    """The folders of the library packages loaded now (a package's folder, a module's file)."""
    found = []
    for name in _LIBRARY_PACKAGES:
        module = sys.modules.get(name)
        path = getattr(module, "__file__", None)
        if path:
            path = path.replace("\\", "/")
            found.append(path.rsplit("/", 1)[0] + "/" if path.endswith("__init__.py") else path)
    return tuple(found)


def origin() -> tuple[str, str]:
    """Whose code made the read or upload being recorded: ``(who, where)``. ``who`` is :data:`PIPELINE` inside a
    ``tf.py_function``/``tf.numpy_function`` body (tf.data runs them in its own threads), :data:`KERAS` when
    Keras's own code asked for it (``fit`` reading its logs), else :data:`YOURS`; ``where`` is the innermost
    frame outside the libraries (``file:line in function``), or "" where there is none."""
    libraries = _library_folders()
    keras_folder = next((f for f in libraries if f.endswith("/keras/")), None)
    frame, keras, pipeline, where = sys._getframe(2), False, False, ""
    while frame is not None:
        path = frame.f_code.co_filename.replace("\\", "/")
        if path.endswith(_PIPELINE_FRAMES) and "/tensorflow/" in path:
            pipeline = True
        elif keras_folder and path.startswith(keras_folder):
            keras = keras or not where
        elif not where and not path.startswith(libraries) and not path.startswith("<frozen"):
            where = f"{frame.f_code.co_filename}:{frame.f_lineno} in {frame.f_code.co_name}"
        frame = frame.f_back
    return (PIPELINE if pipeline else KERAS if keras else YOURS), where


@contextlib.contextmanager
def uncounted():
    """The block's reads and uploads are the library's own, counted by no block (the values that the judge's calls
    carry into and out of the answer's process: :mod:`tfperf.autograding.judge`)."""
    before = getattr(_inside, "uncounted", False)
    _inside.uncounted = True
    try:
        with _Nested():
            yield
    finally:
        _inside.uncounted = before


def _record(kind: str) -> None:
    if getattr(_inside, "uncounted", False):
        return
    host_call = getattr(_inside, "host_call", None)
    if host_call is not None:  # inside a tf.py_function's body: its first read stands for the call's one crossing
        if host_call[0]:
            return
        host_call[0] = True
    active = list(_patches.active)
    site = origin() if any(s.with_origins for s in active) else None
    for syncs in active:
        syncs.kinds[kind] += 1
        if syncs.with_origins:
            syncs.read_origins[site] += 1
            syncs.origin_kinds[site[0], kind] += 1


def _record_upload(kind: str, n: int = 1, nbytes: int = 0) -> None:
    if getattr(_inside, "uncounted", False):
        return
    active = list(_patches.active)
    site = origin() if any(s.with_origins for s in active) else None
    for syncs in active:
        syncs.uploads += n
        syncs.upload_bytes += nbytes
        syncs.upload_kinds[kind] += n
        if syncs.with_origins:
            syncs.upload_origins[site] += n


def _nbytes(value) -> int:
    """The bytes of host data (an array, a list of numbers) or of a tensor."""
    if isinstance(value, np.ndarray):
        return int(value.nbytes)
    shape, dtype = getattr(value, "shape", None), getattr(value, "dtype", None)
    if shape is not None and dtype is not None and hasattr(shape, "num_elements"):
        return int((shape.num_elements() or 0) * getattr(dtype, "size", 4))
    if isinstance(value, (list, tuple)):
        return 8 * sum(_nbytes(v) // 8 if isinstance(v, (list, tuple, np.ndarray)) else 1 for v in value)
    return 0


def _is_host_data(value) -> bool:
    """NumPy arrays and Python lists of data: what an upload copies.

    Scalars and short flat sequences (shapes such as ``(4, 1)``, axis lists) are not data, nor are short integer
    arrays: the reduction axes that ``tf.reduce_sum(x)`` and its kind make from ``np.arange`` on every call.
    """
    if isinstance(value, np.ndarray):
        return value.ndim > 0 and not (value.ndim == 1 and value.size <= 8 and value.dtype.kind in "iu")
    if isinstance(value, (list, tuple)):
        return len(value) > 8 or any(isinstance(v, (list, tuple, np.ndarray)) for v in value)
    return False


class _Marked:
    """Tensors marked without keeping them alive (tensors are unhashable: kept by ``id``, checked by identity)."""

    def __init__(self) -> None:
        self._refs: dict[int, weakref.ref] = {}

    def add(self, value) -> None:
        key = id(value)
        self._refs[key] = weakref.ref(value, lambda _, key=key: self._refs.pop(key, None))

    def discard(self, value) -> None:
        if value in self:
            del self._refs[id(value)]

    def __contains__(self, value) -> bool:
        ref = self._refs.get(id(value))
        return ref is not None and ref() is value


_shape_values = _Marked()  # the eager tensors that hold a shape, size or rank of a given tensor (not counted)
_given = _Marked()  # the tensors and variables a counted call was given (:func:`give`)


def _is_shape_value(tensor) -> bool:
    return tensor in _shape_values


_host_made = _Marked()  # a host pipeline's elements, and what pinned ops make of them: reading them is free
_converted = _Marked()  # converted from Python or NumPy in a block, and integers pinned ops made of those alone


def _read_freely(tensor) -> bool:
    """Whether reading ``tensor``'s value is not a sync: a shape, size or rank of a given tensor, an integer converted
    from Python or NumPy, an element a pipeline of host data delivered (:func:`_of_what_it_was_built`), a host
    pipeline's ``reduce`` of such, or what an op TensorFlow pins to the host made of them (:data:`_host_made`); not a
    tensor a check gave (it stands for the device's). A converted float or bool is read like any value, as the
    chapters' examples count one (``loss = tf.constant(0.25)``), unless TensorFlow reads it back itself."""
    if _is_shape_value(tensor):
        return True
    if tensor in _host_made or (tensor in _converted and tensor in _host_values):  # host integers, not a float
        return tensor not in _given
    return tensor in _converted and _constant_value_reads()


def _constant_value_reads() -> bool:
    """Whether TensorFlow's ``tensor_util.constant_value`` is reading: it looks at a constant a builder was just
    given (``Dataset.batch``'s ``drop_remainder``), in host memory, not at a value the learner asked for."""
    frame = sys._getframe(2)
    for _ in range(4):
        if frame is None:
            return False
        if frame.f_code.co_name == "constant_value" and frame.f_code.co_filename.endswith("tensor_util.py"):
            return True
        frame = frame.f_back
    return False


def _mark_shape_values(result) -> None:
    for tensor in result if isinstance(result, (list, tuple)) else (result,):
        if hasattr(tensor, "_numpy_internal"):  # eager: a graph's tensors are never read here
            _shape_values.add(tensor)


def give(values) -> None:
    """Mark the eager tensors and variables among ``values`` (nested in lists, tuples and dicts) as a counted call's
    own arguments: reads of their shapes, sizes and ranks are not counted (their metadata came with the call)."""
    if "tensorflow" not in sys.modules:  # no tensor without it: nothing to mark, and nothing to import
        return
    from tensorflow.python.ops import resource_variable_ops

    if isinstance(values, dict):
        values = list(values.values())
    for value in values if isinstance(values, (list, tuple)) else (values,):
        if isinstance(value, (list, tuple, dict)):
            give(value)
        elif hasattr(value, "_numpy_internal") or isinstance(value, resource_variable_ops.BaseResourceVariable):
            _given.add(value)


def _marking_shape_values(original):
    def shape_op(*args, **kwargs):
        result = original(*args, **kwargs)
        given = kwargs.get("input", args[0] if args else None)
        if all(t in _given for t in (given if isinstance(given, (list, tuple)) else (given,))):
            _mark_shape_values(result)
        else:  # eager tf.size and tf.rank convert the shape Python holds: a made tensor's is read like any value
            for tensor in result if isinstance(result, (list, tuple)) else (result,):
                _converted.discard(tensor)
        return result

    return shape_op


def _plain_index(key) -> bool:
    """Python's own ints, slices of them, ``...`` and ``None``, alone or in a tuple: no value of the device's."""
    if isinstance(key, tuple):
        return all(_plain_index(k) for k in key)
    if isinstance(key, slice):
        return all(part is None or type(part) is int for part in (key.start, key.stop, key.step))
    return key is None or key is Ellipsis or type(key) is int


def _indexing_shape_values(original):
    def __getitem__(self, key):
        result = original(self, key)
        if _plain_index(key):
            if self in _given:  # a part of an argument, by Python's indices: its shape came with the call too
                _given.add(result)
            if _is_shape_value(self) and self.dtype.name == "int32":
                _mark_shape_values(result)
        return result

    return __getitem__


def _counted_numpy(original):
    def _numpy(self):
        if not _depth() and not _read_freely(self):
            name = sys._getframe(1).f_code.co_name
            _record(KINDS.get(name, name))
        with _Nested():
            return original(self)

    return _numpy


def _counted_numpy_internal(original):
    def _numpy_internal(self):
        if not _depth() and not _read_freely(self):
            _record(".numpy()")
        with _Nested():
            return original(self)

    return _numpy_internal


def _counted_converter(original, eager_type):
    def convert(obj, *args, **kwargs):
        if isinstance(obj, eager_type) and not _depth() and not _read_freely(obj):
            _record(KINDS["__array__"])
            with _Nested():
                return original(obj, *args, **kwargs)
        return original(obj, *args, **kwargs)

    return convert


def _array_function(self, func, types, args, kwargs):
    if not _depth() and not _read_freely(self):
        _record(KINDS["__array_function__"])
    with _Nested():
        return func._implementation(*args, **kwargs)


def _array_ufunc(self, ufunc, method, *inputs, **kwargs):
    if not _depth() and not _read_freely(self):
        _record(KINDS["__array_ufunc__"])
    with _Nested():
        plain = tuple(np.asarray(memoryview(i)) if hasattr(i, "_numpy_internal") else i for i in inputs)
        return getattr(ufunc, method)(*plain, **kwargs)


def _counted_upload(original):
    def convert_to_eager_tensor(value, *args, **kwargs):
        if _is_host_data(value):
            _record_upload("tf.convert_to_tensor, tf.constant or a NumPy/list argument", 1, _nbytes(value))
        tensor = original(value, *args, **kwargs)
        # made on the host (CPU:0, then mirrored to a device); what a check makes while uncounted stands for data
        # on the device
        if tensor is not value and not getattr(_inside, "uncounted", False):
            _converted.add(tensor)
            _host_integer(tensor)
        return tensor

    return convert_to_eager_tensor


#: How an upload that an op's own conversion makes looks in the learner's code.
STRAIGHT_TO_AN_OP = "a NumPy array or list handed straight to an op (tf.multiply(row, w), w * row, tf.raw_ops)"


def _host_data_among(values) -> tuple[int, int]:
    """The host data among an op's inputs (:func:`_is_host_data`; each array of a list input on its own) and its
    bytes."""
    count = nbytes = 0
    for value in values:
        if isinstance(value, (list, tuple)) and any(isinstance(item, np.ndarray) for item in value):
            parts = [item for item in value if isinstance(item, np.ndarray) and _is_host_data(item)]
        elif isinstance(value, (list, tuple)) and any(hasattr(item, "dtype") for item in value):
            parts = []  # tensors (a list input such as tf.stack's), with Python or NumPy numbers among them
        else:
            parts = [value] if _is_host_data(value) else []
        count += len(parts)
        nbytes += sum(_nbytes(part) for part in parts)
    return count, nbytes


_HOLDERS = frozenset({np.ndarray, list, tuple})  # what host data comes in (most ops get tensors and attributes)


def _plain_host_value(value) -> bool:
    """Python's or NumPy's numbers, alone or in lists: what an op converts into a tensor in host memory."""
    if isinstance(value, (list, tuple)):
        return all(_plain_host_value(item) for item in value)
    if isinstance(value, (np.generic, np.ndarray)):
        return value.dtype != object
    return type(value) in (int, float, bool)


def _plain_inputs(op_name: str, values) -> list[bool] | None:
    """For each of an op's (flattened) inputs given to the fast path, whether it is Python's or NumPy's numbers."""
    op_def = value_shapes.op_def(op_name)
    if op_def is None:
        return None
    flags: list[bool] = []
    for arg, value in zip(op_def.input_arg, values):
        if (arg.number_attr or arg.type_list_attr) and isinstance(value, (list, tuple)):
            flags.extend(_plain_host_value(item) for item in value)
        else:
            flags.append(_plain_host_value(value))
    return flags if any(flags) else None


_PLAIN_TYPES = _HOLDERS | {int, float, bool}  # and Python's numbers, which an op converts too


def _counted_fast_path(original):
    def TFE_Py_FastPathExecute(*args):  # noqa: N802 (TensorFlow's name)
        plain = None  # the inputs C++ converts from Python's numbers: marked by the op's callback (:func:`_on_op`)
        if (
            _patches.active
            and not _depth()
            and any(type(v) in _PLAIN_TYPES or isinstance(v, np.generic) for v in args[3:])
        ):
            flags = _plain_inputs(args[1], args[3:])
            plain = (args[1], flags) if flags else None
        before, _inside.fast_inputs = getattr(_inside, "fast_inputs", None), plain
        try:
            result = original(*args)  # converted in C++, where no wrapper sees it; counted once it ran (no fallback)
        finally:
            _inside.fast_inputs = before
        if _patches.active and not _depth() and any(type(value) in _HOLDERS for value in args[3:]):
            count, nbytes = _host_data_among(args[3:])  # context, op's name, name, then inputs and attributes
            if count:
                _record_upload(STRAIGHT_TO_AN_OP, count, nbytes)
        return result

    return TFE_Py_FastPathExecute


def _counted_host_function(original):
    from tensorflow.python.ops import script_ops

    def __call__(self, token, device, args):
        func = self.get(token, None)
        internal = str(getattr(func, "__module__", "")).startswith("tensorflow.")
        if args and not internal and not isinstance(func, script_ops.EagerFunc):  # tf.data's own generators: no read
            _record(KINDS["host_function"])
        if not isinstance(func, script_ops.EagerFunc):
            return original(self, token, device, args)
        # a tf.py_function's inputs reach its body on the host, all at once: its reads of them make one crossing
        before = getattr(_inside, "host_call", None)
        _inside.host_call = [False]
        try:
            return original(self, token, device, args)
        finally:
            _inside.host_call = before

    return __call__


def _copies_to_device(dataset) -> bool:
    """Whether a pipeline ends by copying its elements to a device (``prefetch_to_device``/``copy_to_device``)."""
    from tensorflow.python.data.experimental.ops import prefetching_ops

    for _ in range(4):  # prefetch_to_device is copy_to_device followed by prefetch (and debug options)
        if isinstance(dataset, prefetching_ops._CopyToDeviceDataset):
            return True
        dataset = getattr(dataset, "_input_dataset", None)
        if dataset is None:
            return False
    return False


_pipelines: dict[int, tuple[weakref.ref, bool]] = {}


def _of_what_it_was_built(dataset) -> bool:
    """Whether a pipeline's elements come only from what it was built of (a range, arrays, tensors: what was read to
    build it was counted then): no function of it reads state or captures a tensor (a variable the training writes,
    read in a ``map``, would bring a device value into every element), none runs Python (``from_generator``)."""
    if dataset is None:
        return False
    known = _pipelines.get(id(dataset))
    if known is not None and known[0]() is dataset:
        return known[1]
    found, todo, seen = True, [dataset], set()
    while todo and found:
        part = todo.pop()
        if id(part) in seen:
            continue
        seen.add(id(part))
        try:
            functions = [wrapper.function for wrapper in part._functions()]
            todo.extend(part._inputs())
        except (AttributeError, TypeError):
            found = False
            break
        found = all(_of_its_inputs(function) for function in functions)
    with contextlib.suppress(TypeError):  # a pipeline that cannot be referred to weakly is looked at again
        _pipelines[id(dataset)] = (weakref.ref(dataset), found)
    return found


def _of_its_inputs(function) -> bool:
    """Whether a traced function's outputs come only from its inputs: it captures no tensor and runs no stateful op
    (a variable's read, a random op, Python)."""
    return not function.captured_inputs and not any(
        getattr(op.op_def, "is_stateful", True) for op in function.graph.get_operations()
    )


def _mark_host_made(tensors) -> None:
    """Mark what a host pipeline delivered or reduced as read freely, and its integers as the host's for waits."""
    for tensor in tensors:
        _host_made.add(tensor)
        _host_integer(tensor)


def _counted_reduce(original):
    def reduce(self, *args, **kwargs):
        _inside.reduced = None  # set by :func:`_on_op` when its ``ReduceDataset`` ran on host values
        result = original(self, *args, **kwargs)
        plain, _inside.reduced = getattr(_inside, "reduced", None), None
        if plain and _patches.active and not _depth():
            from tensorflow import nest

            with _Nested():  # the course's own look at the pipeline: no read of the answer's
                built = _of_what_it_was_built(self)
            if built:  # tf.data's ops run on the host: so does its reduction
                _mark_host_made([t for t in nest.flatten(result) if hasattr(t, "_numpy_internal")])
        return result

    return reduce


def _counted_next(original):
    def _next_internal(self):
        element = original(self)
        from tensorflow import nest

        tensors = [t for t in nest.flatten(element) if hasattr(t, "device")]
        if tensors:
            ahead = _copies_to_device(getattr(self, "_dataset", None))
            with _Nested():  # the course's own look at the pipeline: no read of the answer's
                built = not ahead and _of_what_it_was_built(getattr(self, "_dataset", None))
            if built:  # tf.data's ops run on the host: its elements are the host's
                _mark_host_made(tensors)
            _record_upload(
                "a tf.data iterator, copied ahead by prefetch_to_device"
                if ahead
                else "a tf.data iterator delivering from host memory",
                len(tensors),
                sum(_nbytes(t) for t in tensors),
            )
        return element

    return _next_internal


_device_values = _Marked()  # eager tensors that ops made in a block from device values (:func:`_on_op`)
_host_values = _Marked()  # host-made: shapes, sizes, ranks; integers converted, pinned or from a host iterator


def _host_integer(tensor) -> bool:
    """Mark ``tensor``, made in host memory, as the host's if it is an int32 or int64 (and say whether it was): an
    eager op on small integers the host holds runs on the host (:func:`_pinned_to_the_host`), and the ops sized by
    them take them in host memory. A float or bool the host made is not marked: a GPU op given it (``tf.where``)
    copies it to the device and runs in the device's order, so it waits like any device value."""
    if tensor.dtype.name not in ("int32", "int64") or not hasattr(tensor, "_numpy_internal"):
        return False
    _host_values.add(tensor)
    return True


def _on_device(tensor) -> bool:
    """Whether a GPU would hold ``tensor``'s value in its memory: one made in the block from device values, or given,
    or any other that is not int32 (TensorFlow keeps int32 tensors in host memory) nor a shape, size or rank, nor an
    integer the host made (:func:`_host_integer`)."""
    if tensor in _given:  # put on the device by the check, though it converted host data to make it
        return True
    if tensor in _host_values:  # made on the host (an iterator's elements: marked by its op first, then here)
        return False
    if tensor in _device_values:
        return True
    return tensor.dtype.name != "int32"


def _described(tensor, on_device: bool) -> tuple:
    """``(dtype, shape, value)`` of an op's input; ``value`` only for a small integer tensor the host holds without
    waiting for the device (:func:`_on_device`)."""
    shape, dtype = tensor._shape_tuple(), tensor.dtype
    if on_device or dtype.name not in ("int32", "int64"):
        return dtype, shape, None
    if shape is None or int(np.prod(shape)) > value_shapes.KNOWN_LIMIT:
        return dtype, shape, None
    with _Nested():
        return dtype, shape, tuple(np.asarray(tensor._numpy()).ravel().tolist())


#: Ops TensorFlow's eager placement never pins to the host (``IsPinnableOp``, ``placement_utils.cc``).
_UNPINNABLE = frozenset(
    {
        "RandomUniform",
        "RandomUniformInt",
        "RandomStandardNormal",
        "StatelessRandomUniform",
        "StatelessRandomUniformInt",
        "StatelessRandomUniformFullInt",
        "StatelessRandomNormal",
    }
)


def _pinned_to_the_host(op_type: str, tensors) -> bool:
    """Whether TensorFlow runs an eager op on the host CPU whatever the device: every input an int32 or int64 of at
    most 64 elements, in host memory (``MaybePinSmallOpsToCpu``, ``tensorflow/core/common_runtime/eager/
    placement_utils.cc``), the op not a random one. ``i + 1`` on a ``tf.data`` element or a ``tf.constant`` stays a
    host value."""
    if not tensors or op_type in _UNPINNABLE:
        return False
    for tensor in tensors:
        shape = tensor._shape_tuple()
        if tensor.dtype.name not in ("int32", "int64") or shape is None or int(np.prod(shape)) > 64:
            return False
    return True


def _on_op(op_type, inputs, attrs, outputs, op_name=None, graph=None):  # noqa: ARG001
    """TensorFlow's op callback: a read for each eager execution on a device value that waited for it: to size an
    output or pick a branch (:func:`tfperf.measure.value_shapes.waits`), or to make text or a ``tf.data`` dataset of
    it (strings and datasets live in host memory). What it makes is marked as a device value, except shapes, sizes
    and ranks (metadata, in host memory), the int32 results of stateless ops on values the host holds, and what an
    op TensorFlow pins to the host makes (:func:`_pinned_to_the_host`)."""
    if graph is not None or _depth() or getattr(_inside, "uncounted", False):
        return None
    op_type = op_type.decode() if isinstance(op_type, bytes) else op_type
    _inside.error = None
    results = outputs if isinstance(outputs, (list, tuple)) else (outputs,)
    if op_type in value_shapes.METADATA_OPS:
        for tensor in results:
            _host_values.add(tensor)
        return None
    plain = getattr(_inside, "fast_inputs", None)
    if plain is not None and plain[0] == op_type and len(plain[1]) == len(inputs or ()):
        _inside.fast_inputs = None
        for tensor, converted in zip(inputs, plain[1]):
            if converted and hasattr(tensor, "_numpy_internal"):  # Python's numbers, converted by the op (C++)
                _converted.add(tensor)
                _host_integer(tensor)
    tensors = [t for t in inputs or () if hasattr(t, "dtype")]
    on_device = [_on_device(t) for t in tensors]
    if op_type == "ReduceDataset":  # a pipeline's reduce (:func:`_counted_reduce`): of host values, by a plain function
        function = dict(zip(attrs[::2], attrs[1::2])).get("f") if attrs else None
        _inside.reduced = not any(on_device[1:]) and function is not None and _of_its_inputs(function)
    op_def = value_shapes.op_def(op_type)
    stateless = op_def is not None and not op_def.is_stateful
    # a stateful op (a tf.py_function, a variable's read) may bring a device value in that is not among its inputs
    pinned = stateless and not any(on_device) and _pinned_to_the_host(op_type, tensors)
    of_a_pipeline = (  # made on the host from a host pipeline's elements (and constants, shapes): read freely too
        pinned and any(t in _host_made for t in tensors) and all(_read_freely(t) or t in _converted for t in tensors)
    )
    of_constants = pinned and all(t in _converted for t in tensors)  # integers of Python's or NumPy's alone
    for tensor in results:  # TensorFlow computes small int32 results of host values on the host
        if not hasattr(tensor, "_numpy_internal"):
            continue
        if of_a_pipeline:
            _host_made.add(tensor)
        elif of_constants:
            _converted.add(tensor)
        if pinned and _host_integer(tensor):
            continue
        if any(on_device) or not stateless or tensor.dtype.name != "int32":
            _device_values.add(tensor)
    if not any(on_device):
        return None
    if op_type in value_shapes.CHECKS:
        _record(KINDS["check"])
    elif op_def is not None and value_shapes.to_host(  # made from device values (a converted array is an upload)
        op_type, [t.dtype for t in tensors if t in _device_values or t in _given], results
    ):
        _record(KINDS["to_host"])
    elif value_shapes.waits(op_type, [_described(t, d) for t, d in zip(tensors, on_device)], tuple(attrs or ())):
        _record(KINDS["making"])
    return None


def _eagerly() -> bool:
    from tensorflow.python.eager import context

    return context.executing_eagerly()


def _counted_error(original):
    def __init__(self, *args, **kwargs):
        original(self, *args, **kwargs)
        message = getattr(self, "message", None)
        if _patches.active and message != getattr(_inside, "error", None) and _eagerly():  # not while tracing
            _inside.error = message  # until the next op runs (:func:`_on_op`)
            _record(KINDS["error"])  # an op refused a value: the host learned something about it

    return __init__


def _callback_added() -> None:
    from tensorflow.python.framework import op_callbacks

    depth = getattr(_inside, "callbacks", 0)
    if not depth:
        op_callbacks.add_op_callback(_on_op)
    _inside.callbacks = depth + 1


def _callback_removed() -> None:
    from tensorflow.python.framework import op_callbacks

    _inside.callbacks = getattr(_inside, "callbacks", 1) - 1
    if not _inside.callbacks:
        with contextlib.suppress(KeyError, ValueError):
            op_callbacks.remove_op_callback(_on_op)


def _install(patches: Patches[HostSyncs]) -> None:
    from tensorflow.python import pywrap_tfe
    from tensorflow.python.data.ops import dataset_ops, iterator_ops
    from tensorflow.python.framework import constant_op, errors_impl, ops
    from tensorflow.python.framework import tensor as tensor_lib
    from tensorflow.python.ops import array_ops, gen_array_ops, script_ops

    patches.replace(ops._EagerTensorBase, "_numpy", _counted_numpy)
    patches.replace(ops.EagerTensor, "_numpy_internal", _counted_numpy_internal)
    patches.replace(ops._EagerTensorBase, "__array_function__", lambda _: _array_function)
    patches.replace(ops._EagerTensorBase, "__array_ufunc__", lambda _: _array_ufunc)
    for name in _NUMPY_CONVERTERS:
        patches.replace(np, name, lambda original: _counted_converter(original, ops.EagerTensor))
    patches.replace(constant_op, "convert_to_eager_tensor", _counted_upload)
    patches.replace(pywrap_tfe, "TFE_Py_FastPathExecute", _counted_fast_path)
    patches.replace(script_ops.FuncRegistry, "__call__", _counted_host_function)
    patches.replace(iterator_ops.OwnedIterator, "_next_internal", _counted_next)
    patches.replace(dataset_ops.DatasetV2, "reduce", _counted_reduce)
    for module, names in _SHAPE_OPS:
        for name in names:
            patches.replace(
                {"gen_array_ops": gen_array_ops, "array_ops": array_ops}[module], name, _marking_shape_values
            )
    patches.replace(tensor_lib.Tensor, "__getitem__", _indexing_shape_values)
    patches.replace(errors_impl.InvalidArgumentError, "__init__", _counted_error)


_patches: Patches[HostSyncs] = Patches(_install)


@contextlib.contextmanager
def counting(*, origins: bool = False, ops: bool = True) -> Iterator[HostSyncs]:
    """Count host reads of eager tensor values and uploads made (in any thread) while the block runs; with
    ``origins``, also whose code made each (:func:`origin`: a walk of the stack per read). Tensors made sized by a
    device value are counted in this thread only (TensorFlow's op callbacks are per thread); without ``ops``, not at
    all: no op callback is added (it slows every eager op, where the wrappers cost nothing a clock sees:
    docs/measurements-grading.md), and the block counts the reads that bring a value into Python and the uploads.

    Blocks may nest; each counts what happens inside it. Imports TensorFlow.
    """
    with _patches.block(HostSyncs(with_origins=origins)) as syncs:
        if not ops:
            yield syncs
            return
        _callback_added()
        try:
            yield syncs
        finally:
            _callback_removed()


def keep_installed() -> list[tuple[object, str]]:
    """Install the wrappers for good in this process (:meth:`tfperf.measure.instrument.Patches.keep`): they count
    nothing outside a :func:`counting` block, and a function that is looked at (``np.asarray is saved``) is the same
    object in a counted call as in any other. The op callback is still added only while a block runs. A grading
    worker calls this before the learner's answer runs (and the unfixed code's worker, so both pay the wrappers while
    timed). The attributes replaced, as ``(owner, name)``. Imports TensorFlow."""
    return _patches.keep()


def is_counting() -> bool:
    """Whether a :func:`counting` block is running (the instrumentation is installed)."""
    return _patches.is_open


def tampered() -> list[str]:
    """Wrappers of an open block that code inside it removed or replaced (empty when intact), and this thread's op
    callback where it is gone."""
    changed = _patches.tampered()
    if getattr(_inside, "callbacks", 0):
        from tensorflow.python.eager import context

        if _on_op not in context.context().op_callbacks:
            changed.append("TensorFlow's op callbacks (host_syncs)")
    return changed
