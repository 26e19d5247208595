"""Checks of a Keras model's training step: no host reads inside it, Keras itself untouched.

``fit`` (Keras 3, TensorFlow backend, ``keras/src/backend/tensorflow/trainer.py``) runs the
training as calls of ``model.train_function``, each running ``steps_per_execution``
batches of ``train_step``; between calls, the callbacks read the logs (outside the step).
So host reads *inside the step* are the host reads made during ``train_function``
calls, minus those Keras makes there itself (one Python check per call that the data is
not exhausted, ``opt_outputs.has_value()``). The allowance per call is measured on a
plain Keras model in the same process, so it follows the installed Keras.

Host callbacks (``tf.py_function``, ``tf.numpy_function``) run Python from inside a
compiled step; ``tf.numpy_function`` hands NumPy copies to Python without going through
the tensor reads that :mod:`tfperf.measure.host_syncs` counts, so they are counted here too.
"""

from __future__ import annotations

import contextlib
import re
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from tfperf.grading import guard
from tfperf.grading.calls import GradingFailure, call, reread
from tfperf.measure import host_syncs, traces
from tfperf.runtime import logs

_lock = threading.Lock()

# XLA has no kernel for the ops behind tf.py_function and tf.numpy_function: a step that uses them fails to
# compile where Keras compiles fit with XLA (jit_compile="auto" on a GPU machine; seen on an H100).
_XLA_REJECTS_CALLBACK = re.compile(r"No registered '(EagerPyFunc|PyFunc|PyFuncStateless)' OpKernel for XLA_")


@contextlib.contextmanager
def counting_host_callbacks() -> Iterator[list[int]]:
    """Count calls of ``tf.py_function``/``tf.numpy_function`` bodies (in any thread) during the block.

    Yields a one-item list holding the count.
    """
    from tensorflow.python.ops import script_ops

    count = [0]
    registry = script_ops.FuncRegistry
    original = registry.__dict__["__call__"]

    def counted(self, token, device, args):
        with _lock:
            count[0] += 1
        return original(self, token, device, args)

    registry.__call__ = counted
    try:
        yield count
    finally:
        registry.__call__ = original


def _train_function_reads(model, run: Callable[[], Any], *, what: str, section: str | None):
    """Run ``run()`` (which must call ``model.fit``) counting host reads and host callbacks
    made during ``model.train_function`` calls. Returns ``(calls, counted, reads, callbacks, result)``:
    ``reads`` are those of the ``counted`` calls that did not trace (tracing itself reads
    constants on the host, once)."""
    model.make_train_function()
    inner = model.train_function
    seen = {"calls": 0, "counted": 0, "callbacks": 0}
    reads = host_syncs.HostSyncs()

    def counted_train_function(iterator):
        seen["calls"] += 1
        with host_syncs.counting() as syncs, counting_host_callbacks() as callbacks, traces.counting() as traced:
            try:
                return inner(iterator)
            finally:
                if not traced.count:  # tracing reads constants on the host; a traced call's reads are its own
                    reads.kinds.update(syncs.kinds)
                    seen["counted"] += 1
                seen["callbacks"] += callbacks[0]

    model.train_function = counted_train_function
    try:
        result = call(run, (), who=what, section=section)
    except GradingFailure as failure:
        if _XLA_REJECTS_CALLBACK.search(str(failure)):
            raise GradingFailure(
                f"{what}: the training step calls back into Python (tf.py_function or tf.numpy_function), which XLA "
                f"cannot compile, so fit fails where Keras compiles the step with XLA (jit_compile='auto' on a GPU "
                f"machine); where it runs, each call copies the values to the host and waits for them, like "
                f".numpy().{reread(section)}"
            ) from None
        raise
    finally:
        model.train_function = inner
    return seen["calls"], seen["counted"], reads, seen["callbacks"], result


_allowance: dict[str, int] = {}


def keras_reads_per_call() -> int:
    """Host reads Keras itself makes in one ``train_function`` call of a plain compiled model."""
    if "reads" not in _allowance:
        import numpy as np

        tf = logs.tensorflow()
        import keras

        with logs.captured_stderr():
            model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
            model.compile(optimizer=keras.optimizers.SGD(0.01), loss="mse")
            x = np.zeros((8, 2), np.float32)
            y = np.zeros((8, 1), np.float32)
            model.fit(x, y, batch_size=2, epochs=1, verbose=0)  # traces
            _, calls, reads, _, _ = _train_function_reads(
                model,
                lambda: model.fit(x, y, batch_size=2, epochs=1, verbose=0),
                what="a plain Keras model",
                section=None,
            )
        del tf
        _allowance["reads"] = -(-reads.count // max(calls, 1))
    return _allowance["reads"]


@guard.checked
def assert_no_host_reads_in_train_step(model, run: Callable[[], Any], *, what: str, section: str | None = None) -> Any:
    """Run ``run()``, which trains ``model`` with ``fit``; fail unless its training step is
    compiled (not ``run_eagerly``) and neither reads tensor values on the host (``.numpy()``,
    ``float()``, ``print(tensor)``, ...) nor calls back into Python (``tf.py_function``,
    ``tf.numpy_function``). Returns what ``run`` returned.
    """
    tf = logs.tensorflow()
    if getattr(model, "run_eagerly", False) or tf.config.functions_run_eagerly():
        raise GradingFailure(
            f"{what}: the training step runs eagerly (run_eagerly=True, or tf.config.run_functions_eagerly), so "
            f"every operation of every step runs from Python. Compile the step: leave run_eagerly off and take "
            f"out what needed it.{reread(section)}"
        )
    calls, counted, reads, callbacks, result = _train_function_reads(model, run, what=what, section=section)
    if calls == 0:
        raise GradingFailure(
            f"{what} never called the model's train_function: train it with fit, as the unfixed code does "
            f"(do not override fit or make_train_function).{reread(section)}"
        )
    allowed = keras_reads_per_call() * counted
    if callbacks:
        raise GradingFailure(
            f"{what}: the training step called back into Python {callbacks} times in {calls} calls of "
            f"train_function (tf.py_function or tf.numpy_function): each call copies the values to the host "
            f"and waits for them, like .numpy().{reread(section)}"
        )
    if reads.count > allowed:
        extra = reads.count - allowed
        raise GradingFailure(
            f"{what}: the training step read tensor values on the host {extra} times in {counted} calls of "
            f"train_function ({reads.describe()} in all, of which Keras itself makes {allowed}). Each read waits "
            f"for the device. Let Keras report the loss through a metric instead.{reread(section)}"
        )
    return result


#: Keras methods a check relies on, and the class that defines them.
_KERAS_METHODS = (
    (
        "keras.src.backend.tensorflow.trainer",
        "TensorFlowTrainer",
        (
            "fit",
            "predict",
            "evaluate",
            "train_on_batch",
            "predict_on_batch",
            "make_train_function",
            "make_predict_function",
            "train_step",
            "predict_step",
        ),
    ),
    ("keras.src.trainers.trainer", "Trainer", ("compile", "compute_loss", "get_metrics_result")),
    ("keras.src.layers.layer", "Layer", ("__call__",)),
    ("keras.src.callbacks.callback_list", "CallbackList", ("on_train_batch_end", "on_predict_batch_end")),
    ("keras.src.utils.python_utils", None, ("pythonify_logs",)),
)


#: Methods that a model object must not carry as its own attributes (instance overrides).
_MODEL_METHODS = (
    "fit",
    "predict",
    "predict_on_batch",
    "train_on_batch",
    "evaluate",
    "call",
    "train_step",
    "predict_step",
    "make_train_function",
    "make_predict_function",
)


@guard.checked
def assert_keras_pristine(*, models: Sequence[Any] = (), section: str | None = None) -> None:
    """Fail if a Keras method or function a check relies on was replaced (its code must come
    from Keras's own source files, and the public classes must still inherit it), or if one
    of ``models`` carries its own replacement of a Keras method as an instance attribute."""
    import importlib
    import os

    import keras

    root = os.path.dirname(os.path.abspath(keras.__file__))
    changed = []
    for module_name, class_name, names in _KERAS_METHODS:
        module = importlib.import_module(module_name)
        owner = getattr(module, class_name) if class_name else module
        for name in names:
            fn = owner.__dict__.get(name) if class_name else getattr(module, name, None)
            code = getattr(fn, "__code__", None)
            if code is None or not os.path.abspath(code.co_filename).startswith(root):
                changed.append(f"{class_name + '.' if class_name else module_name + '.'}{name}")
    for public in (keras.Model, keras.Sequential):
        for name in ("fit", "predict", "predict_on_batch", "train_on_batch", "__call__"):
            fn = getattr(public, name, None)
            code = getattr(fn, "__code__", None)
            if code is None or not os.path.abspath(code.co_filename).startswith(root):
                changed.append(f"keras.{public.__name__}.{name}")
    for model in models:
        changed += [
            f"{type(model).__name__}.{name} (on the model object)" for name in _MODEL_METHODS if name in vars(model)
        ]
    if changed:
        raise GradingFailure(
            f"The grading environment was modified: {', '.join(sorted(set(changed)))} no longer come from Keras. "
            f"Remove the code that replaces them, restart the kernel and run all cells.{reread(section)}"
        )
