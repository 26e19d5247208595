"""The dtypes of the matrix products in the ``tf.function`` graphs that ran, read from TensorFlow's function library.

A ``tf.function`` call runs a graph that the eager context keeps as a ``FunctionDef`` under the name the call
reports (``__inference_<name>_<id>``); its nodes carry their dtype (attribute ``T``) and call nested functions
(``StatefulPartitionedCall``, ``While``, ``If``: attributes that name a function). :func:`matmul_dtypes` walks a
graph and every function it calls, and counts the nodes that multiply matrices (``MatMul``, ``BatchMatMulV2``,
convolutions, ``Einsum``, XLA's ``XlaDot``) by their dtype. The count says what the products compute in, not how
often each runs. :func:`nodes_of` counts the nodes of other types the same way: those that call back into Python
(:data:`PYTHON_OPS`, which run their Python body eagerly on every call of the graph) and those that print
(:data:`PRINT_OPS`, which run on every call whatever becomes of their output).
"""

from __future__ import annotations

import collections

#: Nodes that multiply matrices (a convolution is one too): where lower precision pays on tensor cores.
MATMUL_OPS = frozenset(
    {"MatMul", "BatchMatMul", "BatchMatMulV2", "BatchMatMulV3", "Conv2D", "Conv3D", "Conv2DBackpropInput",
     "Conv2DBackpropFilter", "DepthwiseConv2dNative", "Einsum", "XlaDot", "XlaDotV2", "_FusedMatMul", "_FusedConv2D"}
)  # fmt: skip


#: Nodes that run a Python function (``tf.py_function``, ``tf.numpy_function``, ``tf.compat.v1.py_func``).
PYTHON_OPS = frozenset({"EagerPyFunc", "PyFunc", "PyFuncStateless"})
#: Nodes that print (``tf.print``; TF1's ``tf.compat.v1.Print``).
PRINT_OPS = frozenset({"PrintV2", "Print"})


def _called_functions(node) -> list[str]:
    """Names of the functions a node calls (its ``func`` attributes, lists of them too)."""
    names = []
    for value in node.attr.values():
        if value.HasField("func"):
            names.append(value.func.name)
        elif value.HasField("list"):
            names += [f.name for f in value.list.func]
    return names


def _nodes(function_names):
    """Every node of the graphs ``function_names`` and of every function they call, each graph once (names the eager
    context does not hold are skipped; none given: TensorFlow is not imported)."""
    pending = list(function_names)
    if not pending:
        return
    from tensorflow.python.eager import context

    seen: set[str] = set()
    ctx = context.context()
    while pending:
        name = pending.pop()
        if name in seen or not ctx.has_function(name):
            continue
        seen.add(name)
        for node in ctx.get_function_def(name).node_def:
            yield node
            pending += _called_functions(node)


def matmul_dtypes(function_names) -> collections.Counter:
    """Matrix-product nodes by dtype name (``"float32"``, ``"bfloat16"``, ...) in the graphs ``function_names``
    (``__inference_...``) and every function they call. Names the eager context does not hold are skipped."""
    from tensorflow.python.framework import dtypes

    found: collections.Counter = collections.Counter()
    for node in _nodes(function_names):
        if node.op in MATMUL_OPS and "T" in node.attr:
            found[dtypes.as_dtype(node.attr["T"].type).name] += 1
    return found


def nodes_of(function_names, op_types) -> collections.Counter:
    """Nodes of the types ``op_types``, by type, in the graphs ``function_names`` and every function they call."""
    return collections.Counter(node.op for node in _nodes(function_names) if node.op in op_types)
