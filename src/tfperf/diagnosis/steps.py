"""What a training step is in a script as its author wrote it: found while the script runs, from what TensorFlow and
Keras do, so that ``tfperf diagnose`` can take any script unmodified.

:class:`StepClock` calls ``on_steps(count, what)`` each time training steps complete, from the first of these
sources that shows up (then only from it, so that no step is counted twice):

- **Keras's** ``fit``: after each call of its train function (the callbacks' ``on_train_batch_end``), as many steps
  as the call ran (``steps_per_execution``); ``train_on_batch``: one step a call;
- **a tf.function whose graph updates variables** (an optimizer's update, an ``assign_sub``: the traces that
  :mod:`tfperf.measure.traces` sees), called from the script: one step a call;
- **an optimizer applied eagerly** (``apply_gradients`` outside any tf.function): one step a call.

A tf.function of Keras's own (its train function) is left to the first source. What counts as a step is said in
words (``what``), for the report. The clock also counts the batches each ``tf.data`` iterator hands to the script's
Python code (:meth:`StepClock.busiest_iterator`: the one its loop takes its batches from).
"""

from __future__ import annotations

import contextlib
import weakref
from collections.abc import Callable
from typing import Any

from tfperf.measure import timing, traces
from tfperf.measure.instrument import Patches

OnSteps = Callable[[int, str], None]

KERAS_FIT, FUNCTION, EAGER_OPTIMIZER = "keras fit", "tf.function", "eager optimizer"


class StepClock:
    """The step events of the code that runs while it is installed (:meth:`running`)."""

    def __init__(self, on_steps: OnSteps):
        self.on_steps = on_steps
        self.source: str | None = None  #: the source whose events count (the first one seen)
        self.steps = 0
        #: seconds spent inside the steps' own calls (Keras's train function, the step's tf.function), so far: what
        #: is left of a step's time is the loop's around it (on a GPU a call can return before its work is done)
        self.inside_seconds = 0.0
        #: how Keras fed its steps: the class of each data adapter its fit chose (``ArrayDataAdapter``: batches it slices
        #: from in-memory arrays; ``TFDatasetAdapter``: the script's own tf.data pipeline), by how often
        self.keras_inputs: dict[str, int] = {}
        #: batches taken by Python code (outside any tf.function) from each tf.data iterator: (a weak reference, count)
        self.iterators: dict[int, tuple[weakref.ref, int]] = {}
        self._begins: dict[int, tuple[int, float]] = {}
        self._traces: traces.Traces | None = None

    def event(self, source: str, count: int, what: str, inside: float = 0.0) -> None:
        if count <= 0:
            return
        if self.source is None:
            self.source = source
        if source != self.source:
            return
        self.steps += count
        self.inside_seconds += inside
        self.on_steps(count, what)

    def batches_taken(self) -> dict[int, int]:
        """How many batches each live iterator has handed out so far, by its ``id``."""
        return {key: n for key, (ref, n) in self.iterators.items() if ref() is not None}

    def busiest_iterator(self, since: dict[int, int] | None = None) -> tuple[Any, int] | None:
        """The live iterator that handed out the most batches since ``since`` (what :meth:`batches_taken` returned
        then), and how many; None where none did."""
        since = since or {}
        taken = [(n - since.get(key, 0), key) for key, n in self.batches_taken().items()]
        taken = [(n, key) for n, key in taken if n > 0]
        if not taken:
            return None
        n, key = max(taken)
        iterator = self.iterators[key][0]()
        return (iterator, n) if iterator is not None else None

    def updates_variables(self, fn: Any) -> bool:
        return self._traces is not None and traces.python_function(fn) in self._traces.updating

    @property
    def traces(self) -> traces.Traces | None:
        """Every trace of the run so far (and the graphs' matmul FLOPs), while :meth:`running`."""
        return self._traces

    @contextlib.contextmanager
    def running(self):
        """Install the hooks for the block (and count traces, to know which tf.functions update variables)."""
        with traces.counting() as seen, _patches.block(self):
            self._traces = seen
            try:
                yield self
            finally:
                self._traces = None


def _clocks() -> list[StepClock]:
    return list(_patches.active)


def _keras_batch_begin(original):
    def on_train_batch_begin(self, batch, logs=None):
        result = original(self, batch, logs)
        for clock in _clocks():
            clock._begins[id(self)] = (batch, timing.now())  # the train function is called next
        return result

    return on_train_batch_begin


def _keras_batch_end(original):
    def on_train_batch_end(self, batch, logs=None):
        ended = timing.now()  # the train function has returned
        result = original(self, batch, logs)
        for clock in _clocks():
            begin, called = clock._begins.pop(id(self), (batch, ended))
            count = batch - begin + 1
            what = f"one call of Keras's train function in fit ({count} step(s) a call)"
            clock.event(KERAS_FIT, count, what, inside=ended - called)
        return result

    return on_train_batch_end


def _keras_train_on_batch(original):
    def train_on_batch(self, *args, **kwargs):
        started = timing.now()
        result = original(self, *args, **kwargs)
        inside = timing.now() - started
        for clock in _clocks():
            clock.event(KERAS_FIT, 1, "one call of Keras's Model.train_on_batch", inside=inside)
        return result

    return train_on_batch


def _function_call(original):
    def __call__(self, *args, **kwargs):
        started = timing.now()
        result = original(self, *args, **kwargs)
        inside = timing.now() - started
        python_function = getattr(self, "_python_function", None)
        if str(getattr(python_function, "__module__", "")).startswith("keras."):
            return result  # Keras's own train function: counted by its callbacks
        for clock in _clocks():
            if clock.updates_variables(python_function):
                name = getattr(python_function, "__qualname__", getattr(self, "__name__", "a tf.function"))
                clock.event(FUNCTION, 1, f"one call of the tf.function {name} (its graph updates variables)", inside)
        return result

    return __call__


def _data_adapter(original):
    def get_data_adapter(*args, **kwargs):
        adapter = original(*args, **kwargs)
        for clock in _clocks():
            name = type(adapter).__name__
            clock.keras_inputs[name] = clock.keras_inputs.get(name, 0) + 1
        return adapter

    return get_data_adapter


def _iterator_next(original):
    def _next_internal(self):
        element = original(self)
        import tensorflow as tf

        if not tf.inside_function():
            for clock in _clocks():
                ref, n = clock.iterators.get(id(self), (None, 0))
                if ref is None or ref() is not self:
                    ref, n = weakref.ref(self), 0
                clock.iterators[id(self)] = (ref, n + 1)
        return element

    return _next_internal


def _optimizer_apply(original):
    def apply(self, *args, **kwargs):
        result = original(self, *args, **kwargs)
        import tensorflow as tf

        if not tf.inside_function():
            for clock in _clocks():
                if not clock._begins:  # inside Keras's fit (run eagerly): its batches are the steps
                    clock.event(EAGER_OPTIMIZER, 1, f"one eager call of {type(self).__name__}.apply_gradients")
        return result

    return apply


def _install(patches: Patches[StepClock]) -> None:
    from tensorflow.python.data.ops import iterator_ops
    from tensorflow.python.eager.polymorphic_function import polymorphic_function

    patches.replace(polymorphic_function.Function, "__call__", _function_call)
    patches.replace(iterator_ops.OwnedIterator, "_next_internal", _iterator_next)
    try:
        from keras.src.backend.tensorflow.trainer import TensorFlowTrainer
        from keras.src.callbacks.callback_list import CallbackList
        from keras.src.optimizers.base_optimizer import BaseOptimizer
        from keras.src.trainers import data_adapters
    except ImportError:  # no Keras 3: tf.functions only
        return
    patches.replace(data_adapters, "get_data_adapter", _data_adapter)  # looked up there by each fit
    patches.replace(CallbackList, "on_train_batch_begin", _keras_batch_begin)
    patches.replace(CallbackList, "on_train_batch_end", _keras_batch_end)
    patches.replace(TensorFlowTrainer, "train_on_batch", _keras_train_on_batch)
    patches.replace(BaseOptimizer, "apply", _optimizer_apply)


_patches: Patches[StepClock] = Patches(_install)
