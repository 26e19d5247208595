"""What a ``tf.data`` pipeline is made of, read from the dataset's own graph.

A ``tf.data.Dataset`` is a graph of dataset operations (``RangeDataset``,
``ParallelMapDatasetV2``, ``CacheDatasetV2``, ...) whose functions (the ``map``
functions, a generator's ``next`` function) live in the graph's function library.
:func:`stages` serializes that graph (``DatasetToGraphV2``, what ``tf.data`` itself uses
to save or distribute a pipeline) and returns the pipeline's stages in order, from the
source to the element that a loop receives::

    for stage in dataset_graph.stages(dataset):
        print(stage.describe())

Each :class:`Stage` says what ran there: its parallelism, its cache file, the Python
functions that ``tf.py_function``/``tf.numpy_function`` call inside it, the
``tf.function`` s it calls, and whether its functions are stateful. This is the pipeline
as built, before the optimizations ``tf.data`` applies when an iterator is created
(:func:`runs_in_parallel` models the one that matters here: ``map_parallelization``).
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from tfperf.runtime import logs

AUTOTUNE = -1

KINDS = {
    "MapDataset": "map",
    "ParallelMapDataset": "map",
    "ParallelMapDatasetV2": "map",
    "BatchDataset": "batch",
    "BatchDatasetV2": "batch",
    "ParallelBatchDataset": "batch",
    "PaddedBatchDataset": "batch",
    "PaddedBatchDatasetV2": "batch",
    "CacheDataset": "cache",
    "CacheDatasetV2": "cache",
    "PrefetchDataset": "prefetch",
    "ShuffleDataset": "shuffle",
    "ShuffleDatasetV2": "shuffle",
    "ShuffleDatasetV3": "shuffle",
    "InterleaveDataset": "interleave",
    "ParallelInterleaveDatasetV2": "interleave",
    "ParallelInterleaveDatasetV3": "interleave",
    "ParallelInterleaveDatasetV4": "interleave",
    "FlatMapDataset": "flat_map",
    "FilterDataset": "filter",
    "RepeatDataset": "repeat",
    "TakeDataset": "take",
    "SkipDataset": "skip",
    "UnbatchDataset": "unbatch",
    "ZipDataset": "zip",
    "ConcatenateDataset": "concatenate",
    "OptionsDataset": "options",
    "RangeDataset": "source",
    "TensorSliceDataset": "source",
    "TensorDataset": "source",
    "TFRecordDataset": "source",
    "TFRecordDatasetV2": "source",
    "TextLineDataset": "source",
    "FixedLengthRecordDatasetV2": "source",
    "GeneratorDataset": "source",
    # tf.data.experimental.service.distribute / from_dataset_id: the elements come from the service's workers;
    # what ran before it ran there, and is not in this graph
    "DataServiceDataset": "service",
    "DataServiceDatasetV2": "service",
    "DataServiceDatasetV3": "service",
    "DataServiceDatasetV4": "service",
}
#: Ops whose functions run Python code.
PYTHON_OPS = ("EagerPyFunc", "PyFunc", "PyFuncStateless")
#: Ops that TensorFlow treats as stateful but that do not make a map unsafe to parallelize
#: (grappler's IsFunctionStateful skips assertions).
_IGNORED_STATEFUL = ("Assert",)


def _python_wrappers() -> dict:
    """Transformations whose dataset ``tf.data`` cannot serialize (``copy_to_device`` reads its input
    through a ``GeneratorDataset``), read from the Python objects instead: class -> kind. Only these
    exact classes: a subclass could say its input is another dataset than the one it reads.
    ``prefetch_to_device`` is ``copy_to_device`` followed by ``prefetch``."""
    from tensorflow.python.data.experimental.ops import prefetching_ops
    from tensorflow.python.data.ops import prefetch_op

    return {
        prefetching_ops._CopyToDeviceDataset: "copy_to_device",  # noqa: SLF001
        prefetch_op._PrefetchDataset: "prefetch",
    }  # noqa: SLF001


class UnreadablePipeline(ValueError):
    """The pipeline's graph cannot be serialized, so its stages cannot be read."""


@dataclass(frozen=True)
class Stage:
    """One dataset operation of a pipeline and what runs inside it."""

    op: str  #: the dataset op, e.g. ``ParallelMapDatasetV2``
    kind: str  #: ``map``, ``batch``, ``cache``, ``prefetch``, ``source``, ...
    parallelism: int | None = None  #: ``num_parallel_calls`` (``AUTOTUNE`` = -1); 1 for a plain map
    deterministic: str | None = None  #: ``default``, ``true`` or ``false`` (parallel map, interleave)
    args: dict = field(default_factory=dict)  #: batch_size, drop_remainder, filename, buffer_size, ...
    functions: frozenset = frozenset()  #: names of every function called inside (transitively)
    python: tuple = ()  #: Python callables run by py_function / numpy_function inside
    ops: frozenset = frozenset()  #: every op type inside its functions (transitively)
    stateful: bool = False  #: whether its functions hold a stateful op (py_function, a variable read)
    synchronous: bool = False  #: a plain ``map`` built with ``synchronous=True`` (never parallelized)
    name: str = ""  #: the node's name in the serialized graph

    @property
    def python_generator(self) -> bool:
        """Whether this stage runs a Python generator (``Dataset.from_generator``)."""
        return self.op == "GeneratorDataset" or "GeneratorDataset" in self.ops

    def describe(self) -> str:
        """A one-line description, e.g. ``map (parallel: AUTOTUNE) calling decode``."""
        text = self.kind if self.kind not in ("other", "source") else f"{self.kind} {self.op}"
        if self.parallelism is not None and (self.kind in ("map", "interleave") or self.op == "ParallelBatchDataset"):
            if self.parallelism == 1:
                text += " (sequential)"
            else:
                text += f" (parallel: {'AUTOTUNE' if self.parallelism == AUTOTUNE else self.parallelism})"
            if self.deterministic == "false":
                text += " deterministic=False"
        for key in ("batch_size", "buffer_size", "filename", "drop_remainder", "device"):
            if key in self.args:
                value = self.args[key]
                if key == "device":
                    text += f" (to {value})"
                elif key == "filename":
                    value = "in memory" if not value else f"file {value}"
                    text += f" ({value})"
                elif key == "buffer_size" and value == AUTOTUNE:
                    text += " (buffer: AUTOTUNE)"
                elif key != "drop_remainder" or value:
                    text += f" ({key.replace('_', ' ')}: {value})"
        called = sorted({readable_function(n) for n in self.functions} - {""})
        if self.python_generator:
            text += " [from_generator: a Python generator]"
        else:
            called += sorted({getattr(p, "__qualname__", repr(p)) for p in self.python})
        if called:
            text += " calling " + ", ".join(called)
        return text


def readable_function(name: str) -> str:
    """``__inference_decode_52`` -> ``decode``; the wrappers tf.data makes for lambdas are dropped."""
    if name.startswith("__inference_"):
        name = name[len("__inference_") :]
    name = name.rsplit("_", 1)[0] if name.rsplit("_", 1)[-1].isdigit() else name
    if name.startswith("Dataset_") or "_lambda" in name or name.startswith("Dataset."):
        return ""
    return name


def _graph_def(dataset):
    tf = logs.tensorflow()
    from tensorflow.core.framework import graph_pb2
    from tensorflow.python.data.ops import options as options_lib

    if not isinstance(dataset, tf.data.Dataset):
        raise TypeError(f"Expected a tf.data.Dataset; got {type(dataset).__name__}.")
    if not made_by_tensorflow(dataset):
        raise TypeError(
            f"it is of class {type(dataset).__name__}, defined outside TensorFlow; return the dataset that "
            f"tf.data's own transformations build (a subclass's methods could describe another pipeline than "
            f"the one it runs)"
        )
    serialized = dataset._as_serialized_graph(  # noqa: SLF001 (the dataset's own graph)
        external_state_policy=options_lib.ExternalStatePolicy.IGNORE, strip_device_assignment=True
    )
    graph = graph_pb2.GraphDef()
    graph.ParseFromString(serialized.numpy())
    return graph


def made_by_tensorflow(obj: Any) -> bool:
    """Whether ``obj``'s class is one of TensorFlow's own (defined in a ``tensorflow`` module), not a subclass
    written elsewhere."""
    module = getattr(type(obj), "__module__", "") or ""
    return module == "tensorflow" or module.startswith("tensorflow.")


def _node_name(input_name: str) -> str:
    return input_name.lstrip("^").split(":")[0]


def _const(node) -> Any:
    tf = logs.tensorflow()
    if node is None or node.op != "Const":
        return None
    value = tf.make_ndarray(node.attr["value"].tensor)
    if value.shape == ():
        value = value.item()
    return value.decode() if isinstance(value, bytes) else value


def _func_names(attrs) -> list[str]:
    names = []
    for value in attrs.values():
        if value.HasField("func"):
            names.append(value.func.name)
        elif value.HasField("list"):
            names += [f.name for f in value.list.func]
    return names


class _Library:
    """The function library of a serialized dataset graph, summarized per function."""

    def __init__(self, graph):
        from tensorflow.python.framework import op_def_registry
        from tensorflow.python.ops import script_ops

        self._functions = {f.signature.name: f for f in graph.library.function}
        self._registry = script_ops._py_funcs  # noqa: SLF001 (token -> the Python function of a py_function)
        self._op_defs = op_def_registry
        self._summaries: dict[str, tuple] = {}

    def _is_stateful(self, op: str) -> bool:
        if op in _IGNORED_STATEFUL:
            return False
        op_def = self._op_defs.get(op)
        return bool(op_def and op_def.is_stateful)

    def python_function(self, token: str):
        func = self._registry.get(token)
        func = getattr(func, "_func", func)  # py_function wraps the callable in an EagerFunc
        return inspect.unwrap(func) if callable(func) else func  # ... and in a functools.wraps wrapper

    def summary(self, name: str, seen: frozenset = frozenset()) -> tuple[set, list, set, bool]:
        """(function names called, Python callables, op types, stateful) of a function, transitively."""
        if name in self._summaries:
            return self._summaries[name]
        names, python, ops, stateful = {name}, [], set(), False
        function = self._functions.get(name)
        if function is not None and name not in seen:
            for node in function.node_def:
                ops.add(node.op)
                if node.op in self._functions:  # a function called by its own name
                    nested = [node.op]
                else:
                    stateful = stateful or self._is_stateful(node.op)
                    nested = _func_names(node.attr)
                if node.op in PYTHON_OPS and "token" in node.attr:
                    fn = self.python_function(node.attr["token"].s.decode())
                    if fn is not None:
                        python.append(fn)
                for inner in nested:
                    n2, p2, o2, s2 = self.summary(inner, seen | {name})
                    names |= n2
                    python += [p for p in p2 if not any(p is q for q in python)]
                    ops |= o2
                    stateful = stateful or s2
        result = (names, python, ops, stateful)
        self._summaries[name] = result
        return result


def _arguments(node, nodes) -> dict:
    """The scalar arguments of a dataset op that the stages report."""
    inputs = [nodes.get(_node_name(i)) for i in node.input if not i.startswith("^")]
    captured = len(node.attr["Targuments"].list.type) if "Targuments" in node.attr else 0
    after = inputs[1 + captured :]  # inputs after the dataset and the captured tensors
    op = node.op
    if op in ("BatchDataset", "BatchDatasetV2", "PaddedBatchDataset", "PaddedBatchDatasetV2"):
        result = {"batch_size": _const(inputs[1])}
        if op in ("BatchDatasetV2", "PaddedBatchDatasetV2"):
            result["drop_remainder"] = bool(_const(inputs[-1]))
        return result
    if op == "ParallelBatchDataset":
        return {
            "batch_size": _const(inputs[1]),
            "num_parallel_calls": _const(inputs[2]),
            "drop_remainder": bool(_const(inputs[3])),
        }
    if op in ("CacheDataset", "CacheDatasetV2"):
        return {"filename": _const(inputs[1]) or ""}
    if op in ("PrefetchDataset", "ShuffleDataset", "ShuffleDatasetV2", "ShuffleDatasetV3"):
        return {"buffer_size": _const(inputs[1])}
    if op in ("ParallelMapDataset", "ParallelMapDatasetV2"):
        return {"num_parallel_calls": _const(after[0]) if after else None}
    if op.startswith("ParallelInterleaveDataset"):
        return {
            "cycle_length": _const(after[0]),
            "block_length": _const(after[1]),
            "num_parallel_calls": _const(after[-1]),
        }
    if op == "InterleaveDataset":
        return {"cycle_length": _const(after[0]), "block_length": _const(after[1])}
    return {}


def _stage(node, nodes, library: _Library) -> Stage:
    names, python, ops, stateful = set(), [], set(), False
    for fname in _func_names(node.attr):
        n, p, o, s = library.summary(fname)
        names |= n
        python += [q for q in p if not any(q is r for r in python)]
        ops |= o
        stateful = stateful or s
    args = _arguments(node, nodes)
    parallelism = None
    if node.op in ("MapDataset", "InterleaveDataset", "BatchDataset", "BatchDatasetV2"):
        parallelism = 1
    elif "num_parallel_calls" in args:
        parallelism = args.pop("num_parallel_calls")
        parallelism = int(parallelism) if parallelism is not None else None
    deterministic = node.attr["deterministic"].s.decode() if "deterministic" in node.attr else None
    return Stage(
        op=node.op,
        kind=KINDS.get(node.op, "other"),
        parallelism=parallelism,
        deterministic=deterministic,
        args=args,
        functions=frozenset(names),
        python=tuple(python),
        ops=frozenset(ops),
        stateful=stateful,
        synchronous="force_synchronous" in node.attr and node.attr["force_synchronous"].b,
        name=node.name,
    )


def _is_dataset(node) -> bool:
    return node.op in KINDS or "Dataset" in node.op


def _dataset_inputs(node, nodes) -> list:
    found = [nodes.get(_node_name(i)) for i in node.input if not i.startswith("^")]
    return [n for n in found if n is not None and _is_dataset(n)]


def _serialization_failure(err: Exception) -> bool:
    tf = logs.tensorflow()
    return isinstance(err, tf.errors.FailedPreconditionError) and "serializ" in str(err)


def _python_wrapper(dataset, err: Exception):
    """``(stage, input dataset)`` of a transformation that :func:`_python_wrappers` knows, read from the
    Python object; ``UnreadablePipeline`` for any other dataset that cannot be serialized."""
    kind = _python_wrappers().get(type(dataset))
    inner = getattr(dataset, "_input_dataset", None)  # noqa: SLF001 (the transformation's input)
    if kind is None or inner is None:
        why = re.sub(r"\{\{.*?\}\}", "", str(err).split("[Op:")[0]).strip().splitlines()[-1].strip()
        if "GeneratorDataset" in why:  # what copy_to_device leaves inside a pipeline
            why += " (copy_to_device and prefetch_to_device must be the pipeline's last transformation)"
        raise UnreadablePipeline(
            f"tf.data cannot serialize this pipeline, so its stages cannot be read: {why}"
        ) from err
    if kind == "copy_to_device":
        stage = Stage(op="CopyToDevice", kind=kind, args={"device": dataset._target_device})  # noqa: SLF001
    else:
        buffer_size = int(dataset._buffer_size.numpy())  # noqa: SLF001
        stage = Stage(op="PrefetchDataset", kind=kind, args={"buffer_size": buffer_size})
    return stage, inner


def _serialized(dataset):
    """The graph of ``dataset``, or of the dataset under its last transformations that ``tf.data``
    cannot serialize (:func:`_python_wrapper`), and the stages of those, in order."""
    last = []
    while True:
        try:
            return _graph_def(dataset), last
        except Exception as err:
            if not _serialization_failure(err):
                raise
            stage, dataset = _python_wrapper(dataset, err)
            last.insert(0, stage)


def stages(dataset) -> list[Stage]:
    """The stages of ``dataset``, from its source to its output (the main chain).

    Where a stage has several input datasets (``zip``, ``concatenate``), the chain
    follows the first; :func:`all_stages` lists every dataset op in the graph. A pipeline that
    ends in ``copy_to_device`` or ``prefetch_to_device`` (which ``tf.data`` cannot serialize) gets
    those last stages from its Python objects; any other pipeline that cannot be serialized
    raises :class:`UnreadablePipeline`.
    """
    graph, last = _serialized(dataset)
    nodes = {n.name: n for n in graph.node}
    library = _Library(graph)
    output = next(n for n in graph.node if n.op == "_Retval")
    chain = []
    node = nodes[_node_name(output.input[0])]
    while node is not None:
        chain.append(_stage(node, nodes, library))
        inputs = _dataset_inputs(node, nodes)
        node = inputs[0] if inputs else None
    return chain[::-1] + last


def all_stages(dataset) -> list[Stage]:
    """Every dataset op in ``dataset``'s graph (side branches too), in graph order."""
    graph, last = _serialized(dataset)
    nodes = {n.name: n for n in graph.node}
    library = _Library(graph)
    return [_stage(n, nodes, library) for n in graph.node if _is_dataset(n)] + last


def describe(dataset) -> str:
    """The stages of ``dataset``, one per line, numbered from the source."""
    return "\n".join(f"{i}. {s.describe()}" for i, s in enumerate(stages(dataset), 1))


def tf_function_names(fn) -> set[str]:
    """The names under which the traces of the ``tf.function`` ``fn`` appear in a graph."""
    listing = getattr(fn, "_list_all_concrete_functions", None)
    if not callable(listing):
        return set()
    names = set()
    for concrete in listing():
        name = concrete.name
        names.add(name.decode() if isinstance(name, bytes) else name)
    return names


def calls(stage: Stage, fn: Callable) -> bool:
    """Whether ``stage`` runs ``fn``: a ``tf.function`` it calls, or a Python function it runs
    through ``tf.py_function``/``tf.numpy_function`` (bound methods compare by object and method)."""
    names = tf_function_names(fn)
    if names:
        return bool(names & stage.functions)
    return any(p == fn for p in stage.python)


def stages_calling(chain: Iterable[Stage], fn: Callable) -> list[int]:
    """Positions in ``chain`` of the stages that run ``fn``."""
    return [i for i, s in enumerate(chain) if calls(s, fn)]


def runs_in_parallel(stage: Stage, options=None) -> bool:
    """Whether ``tf.data`` runs this stage's function on several elements at once.

    True for a parallel map or interleave (``num_parallel_calls`` other than 1). Also
    true for a plain ``map`` whose function is stateless when autotuning and the
    ``map_parallelization`` optimization are on (both are by default): ``tf.data``
    then rewrites it into a parallel map when an iterator is created. A function with a
    stateful op (``tf.py_function``, a variable read, stateful random ops), or a map built
    with ``synchronous=True``, is never rewritten (``map_parallelization.cc`` skips both).
    """
    if stage.parallelism is not None and stage.parallelism != 1 and stage.kind in ("map", "interleave"):
        return True
    if stage.op == "MapDataset" and not stage.stateful and not stage.synchronous:
        autotune = getattr(getattr(options, "autotune", None), "enabled", None)
        parallelize = getattr(getattr(options, "experimental_optimization", None), "map_parallelization", None)
        return autotune is not False and parallelize is not False
    return False


def rewritten_ops(dataset) -> list[str]:
    """The dataset ops of ``dataset`` after ``tf.data``'s graph rewrites, from its source to its output.

    What an iterator really runs: the static optimizations its options turn on (by default
    ``map_parallelization``, ``map_and_batch_fusion``, ``inject_prefetch``, ...) applied by the
    ``FinalizeDataset`` op that iterators apply too, then the rewritten graph serialized
    (``DatasetToGraphV2``). E.g. a plain stateless ``map`` shows up as ``ParallelMapDatasetV2``.
    """
    tf = logs.tensorflow()
    from tensorflow.core.framework import graph_pb2

    spec = dataset.element_spec
    finalized = tf.raw_ops.FinalizeDataset(
        input_dataset=dataset._variant_tensor,  # noqa: SLF001 (the dataset's own variant)
        output_types=[s.dtype for s in tf.nest.flatten(spec)],
        output_shapes=[s.shape for s in tf.nest.flatten(spec)],
    )
    graph = graph_pb2.GraphDef()
    graph.ParseFromString(tf.raw_ops.DatasetToGraphV2(input_dataset=finalized).numpy())
    nodes = {n.name: n for n in graph.node}
    output = next(n for n in graph.node if n.op == "_Retval")
    chain, node = [], nodes[_node_name(output.input[0])]
    while node is not None:
        chain.append(node.op)
        inputs = _dataset_inputs(node, nodes)
        node = inputs[0] if inputs else None
    return chain[::-1]
