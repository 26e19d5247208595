"""Which eager operations and ``tf.function`` calls wait for a device value: to size what they make, or to branch.

Most operations know their outputs' shapes from their inputs' shapes alone (``tf.matmul``, ``x + 1``,
``tf.reduce_sum(x, 0)``), so on a GPU Python queues them and goes on. Some take a shape from a tensor's *value*:
``tf.zeros(n)``, ``tf.range(n)``, ``tf.reshape(x, s)``, ``tf.tile(x, m)``, a slice ``x[:n]`` with ``n`` a tensor,
or from how many elements pass a test: ``tf.where(mask)``, ``tf.boolean_mask``, ``tf.unique``. When that value was
computed on the device, making the output waits for it, exactly like ``.numpy()`` does: TensorFlow keeps those
shape inputs in host memory (``HostMemory`` in the kernels' registrations) and copies them there first, and
``Where`` on a GPU copies its count back before it can size its output. Afterwards ``.shape`` and ``len()`` are
plain Python and cost nothing: the wait happened when the tensor was made.

:func:`waits` answers for one eager execution, as TensorFlow's op callbacks report it, by TensorFlow's own shape
inference: it builds the operation again in a scratch graph, with a placeholder of the same shape for every input
whose value is not known without the device, and asks whether every output's shape is still fully defined. A
``tf.function`` call waits when its graph holds such an operation (one whose inputs' shapes are all known but an
output's is not, and whose inputs depend on device values; where the inputs' shapes are not all known, one of
:data:`VALUE_SIZED` whose sizing inputs do), looked for in the functions it calls and in ``tf.cond``'s and
``tf.while_loop``'s bodies too; or a ``tf.cond`` or ``tf.while_loop`` whose predicate depends on a device value (on a
GPU, ``Switch`` and ``LoopCond`` keep the predicate in host memory), or a check (:data:`CHECKS`) of one. Ops on
resources (variables, ``tf.data`` iterators, lookup tables) are left out: their outputs' shapes come from the
resource, not from a value.

Answers are cached by operation, attributes, the inputs' shapes and the known inputs' values, so a training loop
pays for the scratch graph once per kind of step.
"""

from __future__ import annotations

import re

#: Operations that read only their input's metadata (a shape, whether an optional holds a value, a list's length);
#: their outputs are in host memory on every device.
METADATA_OPS = frozenset(
    {"Shape", "ShapeN", "Size", "Rank", "OptionalHasValue", "TensorListLength", "TensorListElementShape"}
)
#: Python functions run from a graph (``tf.py_function``, ``tf.numpy_function``): their outputs' shapes are
#: unknown to inference, and the crossing they make is counted as a read of its own.
HOST_FUNCTION_OPS = frozenset({"EagerPyFunc", "PyFunc", "PyFuncStateless"})
#: Calls of other function graphs: the attributes that name them, and how many of the op's first inputs they do not
#: receive (an ``If``'s predicate).
_CALLS = {
    **dict.fromkeys(("PartitionedCall", "StatefulPartitionedCall"), (("f",), 0)),
    **dict.fromkeys(("If", "StatelessIf"), (("then_branch", "else_branch"), 1)),
    **dict.fromkeys(("While", "StatelessWhile"), (("cond", "body"), 0)),
}
#: Largest known input whose value goes into the scratch graph (shapes, axes, sizes: never data).
KNOWN_LIMIT = 64

_cache: dict = {}  # (op, attributes, inputs) -> verdict; a dict's single get and set are atomic in CPython


def _attr_value(kind: str, value):
    """An ``AttrValue`` of ``value`` as an op callback passes it (a dtype enum, a list, a shape list)."""
    from tensorflow.core.framework import attr_value_pb2
    from tensorflow.python.framework import dtypes, tensor_shape

    def one(k, v):
        if k == "type":
            return {"type": dtypes.as_dtype(v).as_datatype_enum}
        if k == "int":
            return {"i": int(v)}
        if k == "float":
            return {"f": float(v)}
        if k == "bool":
            return {"b": bool(v)}
        if k == "string":
            return {"s": v if isinstance(v, bytes) else str(v).encode()}
        if k == "shape":
            return {"shape": tensor_shape.as_shape(v).as_proto()}
        raise TypeError(k)

    if kind.startswith("list(") and kind.endswith(")"):
        inner = kind[5:-1]
        field = {"type": "type", "int": "i", "float": "f", "bool": "b", "string": "s", "shape": "shape"}[inner]
        items = [next(iter(one(inner, v).values())) for v in value]
        return attr_value_pb2.AttrValue(list=attr_value_pb2.AttrValue.ListValue(**{field: items}))
    return attr_value_pb2.AttrValue(**one(kind, value))


def _scratch_op(op_type: str, inputs: list, attrs: dict):
    """``op_type`` built in a scratch graph on ``inputs`` (``(dtype, shape, value or None)``): its outputs' shapes."""
    from tensorflow.python.framework import constant_op, ops
    from tensorflow.python.ops import array_ops

    kinds = {a.name: a.type for a in op_def(op_type).attr}
    graph = ops.Graph()
    with graph.as_default():
        tensors = [
            constant_op.constant(list(value), dtype, shape=shape)
            if value is not None
            else array_ops.placeholder(dtype, shape)
            for dtype, shape, value in inputs
        ]
        protos = {}
        for name, value in attrs.items():
            if name in kinds and value is not None:  # None: the op's default (an unset optional attribute)
                protos[name] = _attr_value(kinds[name], value)
        op = graph._create_op_internal(op_type, tensors, attrs=protos)
    return [tuple(o.shape.as_list()) if o.shape.rank is not None else None for o in op.outputs]


#: Ops that read a resource the device holds (a variable): their results are device values. Other ops on resources
#: (``tf.data`` iterators, lookup tables) run on the host, and what they give is the host's.
_DEVICE_RESOURCE_READS = frozenset({"ReadVariableOp", "ResourceGather", "ResourceGatherNd"})
#: Ops whose output's size is set by the values of their inputs at these positions (``None``: any input): what a
#: graph is searched for where its shapes are not all known (a ``tf.function`` traced with ``None`` dimensions).
VALUE_SIZED = {
    **dict.fromkeys(
        ("Where", "Unique", "UniqueV2", "UniqueWithCounts", "UniqueWithCountsV2", "DynamicPartition"), None
    ),
    **dict.fromkeys(("ListDiff", "TensorListStack", "TensorListGather", "TensorListConcatV2"), None),
    **{"Range": (0, 1, 2), "Fill": (0,), "Empty": (0,), "Reshape": (1,), "Tile": (1,), "BroadcastTo": (1,)},
    **{"Pad": (1,), "PadV2": (1,), "MirrorPad": (1,), "Slice": (1, 2), "StridedSlice": (1, 2, 3), "OneHot": (1,)},
    **{"ExpandDims": (1,), "ConcatV2": (-1,), "SplitV": (1, 2), "Split": (0,)},
    **dict.fromkeys(("RandomUniform", "RandomStandardNormal", "TruncatedNormal", "RandomUniformInt"), (0,)),
}


#: ``TensorList`` ops that make a list (a ``TensorArray`` in a graph): the inputs that set its length (a list's own
#: length, a size). What its elements hold does not change it, so a list of device values the host sized stays
#: sized by the host, and stacking it waits for nothing.
_LIST_LENGTH = {
    "EmptyTensorList": (),
    "TensorListFromTensor": (),
    "TensorListReserve": (1,),
    "TensorListSetItem": (0,),
    "TensorListPushBack": (0,),
    "TensorListPushBackBatch": (0,),
    "TensorListResize": (0, 1),
}
#: ``TensorList`` ops that read elements: their results are the device's (an element may be a device value).
_LIST_READS = frozenset({"TensorListGetItem", "TensorListStack", "TensorListGather", "TensorListConcatV2"})


def _from_device(tensor, device_args: dict, memo: dict) -> bool:
    """Whether ``tensor``'s value, in a function graph, depends on a device value: an argument whose value the host
    does not hold, a variable, a stateful op's result; not a constant's, a shape's, or one computed from those. For
    a ``TensorList``, whether its *length* does (:data:`_LIST_LENGTH`); what is read from one is the device's. What
    another graph returns (a call, a ``tf.cond``, a ``tf.while_loop``) is followed output by output."""
    op = tensor.op
    if tensor.name not in memo:
        memo[tensor.name] = True  # until known otherwise (graphs have no cycles; this only bounds the walk)
        if op.type == "Placeholder":
            found = device_args.get(op.name, True)
        elif op.type == "Const" or op.type in METADATA_OPS:
            found = False
        elif op.type in _LIST_READS or (op.type == "TensorListPopBack" and tensor.value_index == 1):
            found = True
        elif op.type in _LIST_LENGTH or op.type == "TensorListPopBack":
            sizing = list(_LIST_LENGTH.get(op.type, (0,)))
            if op.type == "TensorListSetItem" and op.get_attr("resize_if_index_out_of_bounds"):
                sizing.append(1)
            found = any(_from_device(op.inputs[i], device_args, memo) for i in sizing)
        elif op.type in _CALLS:
            found = _call_output_from_device(op, tensor.value_index, device_args, memo)
        elif any(t.dtype.name == "resource" for t in op.inputs):
            found = op.type in _DEVICE_RESOURCE_READS
        elif not op.op_def.is_stateful:
            found = any(_from_device(t, device_args, memo) for t in op.inputs)
        else:
            found = True
        memo[tensor.name] = found
    return memo[tensor.name]


def _call_output_from_device(op, index: int, device_args: dict, memo: dict) -> bool:
    """Whether output ``index`` of a call of another graph (``_CALLS``) depends on a device value, read from that
    graph on its arguments; where the graph cannot be read, it does."""
    called, skip = _CALLS[op.type]
    arguments = list(op.inputs[skip:])
    device_in = [_from_device(t, device_args, memo) for t in arguments]
    shapes = [t.shape for t in arguments]
    try:
        if op.type.endswith("While"):
            return _loop_on_device(op, device_in)[index]
        chosen = skip and _from_device(op.inputs[0], device_args, memo)  # an If's result picked by a device value
        return chosen or any(_outputs_from_device(op.get_attr(a).name, shapes, device_in)[index] for a in called)
    except (ValueError, TypeError, KeyError, IndexError):
        return True


_graphs: dict = {}


def _graph(name: str, shapes):
    """The function graph ``name`` with its arguments of ``shapes`` (shape inference done), built once."""
    from tensorflow.python.eager import context
    from tensorflow.python.framework import function_def_to_graph, tensor_shape

    shapes = [tensor_shape.TensorShape(s) for s in shapes]
    key = (name, tuple(None if s.rank is None else tuple(s.as_list()) for s in shapes))
    if key not in _graphs:
        fdef = context.context().get_function_def(name)
        try:
            _graphs[key] = function_def_to_graph.function_def_to_graph(fdef, input_shapes=shapes)
        except (ValueError, TypeError):  # shapes that do not fit the signature: read the graph as traced
            _graphs[key] = function_def_to_graph.function_def_to_graph(fdef)
    return _graphs[key]


def _device_in(graph, on_device):
    """``device(t)``: whether ``t`` in ``graph`` depends on a device value, its arguments ``on_device`` or not."""
    device_args, memo = {t.op.name: bool(d) for t, d in zip(graph.inputs, on_device)}, {}
    return lambda tensor: _from_device(tensor, device_args, memo)


def _outputs_from_device(name: str, shapes, on_device) -> list[bool]:
    graph = _graph(name, shapes)
    device = _device_in(graph, on_device)
    return [device(t) for t in graph.outputs]


def _loop_on_device(op, device_in: list[bool]) -> list[bool]:
    """Which loop variables of a ``While`` hold device values on some iteration: those given so, and those the body
    makes from device values (to a fixed point)."""
    body, shapes = op.get_attr("body").name, [t.shape for t in op.inputs]
    flags = list(device_in)
    for _ in range(len(flags) + 1):
        made = _outputs_from_device(body, shapes, flags)
        grown = [a or b for a, b in zip(flags, made)] + flags[len(made) :]
        if grown == flags:
            break
        flags = grown
    return flags


def _function_waits(name: str, shapes, on_device, seen: frozenset = frozenset()) -> bool:
    """Whether the function graph ``name``, called on inputs of ``shapes`` (``on_device``: which hold device
    values), holds an operation that waits for a device value: one that sizes an output by it, or a ``tf.cond`` or
    ``tf.while_loop`` that branches on it (on a GPU, the predicate is copied to the host: ``Switch`` keeps it in
    host memory)."""
    if name in seen:
        return False
    graph = _graph(name, shapes)
    device = _device_in(graph, on_device)
    for op in graph.get_operations():
        if op.type in ("Placeholder", "Const") or op.type in HOST_FUNCTION_OPS:
            continue
        if op.type in _CALLS:
            called, skip = _CALLS[op.type]
            arguments = list(op.inputs[skip:])
            device_in = [device(t) for t in arguments]
            if op.type.endswith("If") and device(op.inputs[0]):
                return True
            if op.type.endswith("While"):
                device_in = _loop_on_device(op, device_in)
                if _outputs_from_device(op.get_attr("cond").name, [t.shape for t in arguments], device_in)[0]:
                    return True
            shapes_in = [t.shape for t in arguments]
            if any(_function_waits(op.get_attr(a).name, shapes_in, device_in, seen | {name}) for a in called):
                return True
            continue
        if op.type in CHECKS and any(device(t) for t in op.inputs):
            return True
        if to_host(op.type, [t.dtype for t in op.inputs if device(t)], op.outputs):
            return True
        if any(t.dtype.name == "resource" for t in op.inputs):
            continue  # a variable's or an iterator's outputs are shaped by the resource
        if all(o.shape.is_fully_defined() for o in op.outputs):
            continue
        if all(t.shape.is_fully_defined() for t in op.inputs):
            if any(device(t) for t in op.inputs):
                return True
        elif op.type in VALUE_SIZED:
            positions = VALUE_SIZED[op.type]
            sizing = (
                op.inputs
                if positions is None
                else [op.inputs[i] for i in positions if -len(op.inputs) <= i < len(op.inputs)]
            )
            if any(device(t) for t in sizing):
                return True
    return False


#: Checks whose GPU kernels copy what they found to the host and wait for it, on every call.
CHECKS = frozenset({"CheckNumerics", "CheckNumericsV2", "Assert"})
#: ``tf.print``'s ops: what they cost is counted as printing (:mod:`tfperf.grading.printing`), not here; text they
#: make that another op then uses is counted at that op.
PRINTING = frozenset({"StringFormat", "PrintV2"})
#: Ops that run on the host whatever the device: tf.data's, and lookup tables'.
_HOST_ONLY = re.compile(r"Dataset(V\d+)?$|^LookupTable")


def to_host(op_type: str, device_dtypes: list, outputs) -> bool:
    """Whether an op given device values of ``device_dtypes`` makes something only the host holds: text (no device
    keeps strings), a ``tf.data`` dataset (whose ops run on the host) or a lookup table's entries (kept in host
    memory): the value crosses to the host, and waits to. A dataset or a table handle alone does not cross again."""
    if op_type in PRINTING or all(d.name in ("variant", "resource") for d in device_dtypes):
        return False
    return (
        bool(_HOST_ONLY.search(op_type))
        or any(d.name == "string" for d in device_dtypes)
        or any(getattr(t, "dtype", None) is not None and t.dtype.name == "string" for t in outputs)
    )


def op_def(op_type: str):
    """The registered ``OpDef`` of ``op_type``; ``None`` for a function graph's name."""
    from tensorflow.python.framework import op_def_registry

    if op_type not in _op_defs:
        _op_defs[op_type] = op_def_registry.get(op_type)
    return _op_defs[op_type]


_op_defs: dict = {}


def waits(op_type: str, inputs: list, attrs: tuple) -> bool:
    """Whether the eager execution of ``op_type`` on ``inputs`` (``(dtype, shape, value)``: ``value`` is ``None``
    unless known without the device) with ``attrs`` (the op callback's flat name/value tuple) had to wait for a
    device value to size an output. A ``tf.function`` graph's name as ``op_type`` asks about its whole graph."""
    function = op_def(op_type) is None  # a tf.function's graph: what matters is which inputs the host holds
    if op_type in HOST_FUNCTION_OPS or (not function and any(d.name == "resource" for d, _, _ in inputs)):
        return False  # (a function's resource inputs are the variables it captured: its graph is read anyway)
    key = (op_type, repr(attrs), tuple((d.name, s, v is None if function else v) for d, s, v in inputs))
    found = _cache.get(key)
    if found is not None:
        return found
    from tensorflow.python.eager import context

    pairs = dict(zip(attrs[::2], attrs[1::2]))
    ctx = context.context()
    before = ctx.invoking_op_callbacks
    ctx.invoking_op_callbacks = True  # the scratch graph's ops are not the learner's: no callback sees them
    try:
        if function:
            verdict = _function_waits(op_type, [s for _, s, _ in inputs], [v is None for _, _, v in inputs])
        else:
            verdict = any(shape is None or None in shape for shape in _scratch_op(op_type, inputs, pairs))
    except Exception:  # an op the scratch graph cannot build (its own checks refuse the inputs): counted as no wait
        verdict = False
    finally:
        ctx.invoking_op_callbacks = before
    _cache[key] = verdict
    return verdict
