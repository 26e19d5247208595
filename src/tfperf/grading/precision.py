"""Checks of a Keras model made for mixed precision: what computes in which dtype, its output, loss scaling.

Keras (``keras.mixed_precision``, ``keras/src/dtype_policies``) keeps each layer's variables in its policy's
``variable_dtype`` and computes in its ``compute_dtype``; ``compile`` wraps the optimizer in a
``LossScaleOptimizer`` only when the model's own policy is ``mixed_float16`` (``keras/src/trainers/trainer.py``).
These checks read those from the model, and run it once to read its output's dtype. Only layers and optimizers of
Keras's own classes are read: a subclass could report another dtype than the one it computes in.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tfperf.grading import guard
from tfperf.grading.calls import GradingFailure, call, reread
from tfperf.measure import timing
from tfperf.runtime import device, logs

#: Low precision must make this device's matmul at least this much faster than float32 for its speed to be graded.
PAYS_FROM = 1.5


def _made_by_keras(obj: Any) -> bool:
    module = getattr(type(obj), "__module__", "") or ""
    return module == "keras" or module.startswith("keras.")


@guard.checked
def assert_mixed_precision(
    model: Any,
    sample: Any,
    *,
    compute_dtype: str = "float16",
    what: str = "Your model",
    section: str | None = None,
) -> None:
    """Fail unless ``model`` is a compiled Keras model whose matmul layers (``Dense``; the last one may be float32)
    compute in ``compute_dtype`` with float32 variables, whose output on ``sample`` is float32, whose optimizer
    scales the loss where ``compute_dtype`` is float16, and that left Keras's global policy at float32."""
    import keras

    def fail(message: str) -> None:
        raise GradingFailure(f"{what}: {message}{reread(section)}")

    if not isinstance(model, keras.Model):
        fail(f"expected a Keras model; got {type(model).__name__}.")
    if not _made_by_keras(model):  # its own call() could compute with other weights than its layers'
        fail(
            f"it is of class {type(model).__name__}, not Keras's own: build it as a keras.Sequential (or functional) model."
        )
    if keras.config.dtype_policy().name != "float32":
        fail(
            f"Keras's global dtype policy is still {keras.config.dtype_policy().name!r} after it was made: every "
            f"model built later in the program would be built in it too. Set it back to 'float32' once the model "
            f"is built."
        )
    strangers = [type(layer).__name__ for layer in model.layers if not _made_by_keras(layer)]
    if strangers:
        fail(
            f"its layers must be Keras's own ({', '.join(strangers)} is not): the given architecture, in mixed precision."
        )
    dense = [layer for layer in model.layers if isinstance(layer, keras.layers.Dense)]
    if not dense:
        fail("it has no Dense layers: the given architecture is expected.")
    slow = [layer.name for layer in dense[:-1] if layer.compute_dtype != compute_dtype]
    if slow:
        fail(
            f"its Dense layers {', '.join(slow)} compute in "
            f"{', '.join(sorted({layer.compute_dtype for layer in dense[:-1]}))}; expected {compute_dtype} (a "
            f"mixed_{compute_dtype} policy)."
        )
    narrow = sorted({v.path for v in model.weights if str(v.dtype) != "float32"})
    if narrow:
        fail(
            f"its variables {', '.join(narrow[:3])} are not float32: under a mixed policy Keras keeps the weights in "
            f"float32 and casts them for each computation, so small updates are not lost."
        )
    output = call(lambda: model(sample, training=False), (), who=f"{what} on a batch", section=section)
    dtype = getattr(getattr(output, "dtype", None), "name", None) or str(np.asarray(output).dtype)
    if dtype != "float32":
        fail(
            f"its output is {dtype}; expected float32. Give the last layer (the softmax) dtype='float32': a "
            f"softmax or a loss computed in {compute_dtype} loses precision and can overflow."
        )
    optimizer = getattr(model, "optimizer", None)
    if optimizer is None:
        fail("it is not compiled: compile it, as the float32 model is.")
    if compute_dtype == "float16" and type(optimizer) is not keras.optimizers.LossScaleOptimizer:
        fail(
            f"its optimizer is a {type(optimizer).__name__}, which does not scale the loss: float16 gradients "
            f"underflow to zero. compile adds a LossScaleOptimizer only when the model's own policy is "
            f"mixed_float16 (the global policy when the model is built); otherwise wrap the optimizer in "
            f"keras.optimizers.LossScaleOptimizer yourself."
        )


def _layout(model: Any) -> list[tuple[str, Any, bool]]:
    """Each layer's class, units, and whether it trains (a frozen layer skips its gradients and updates)."""
    return [(type(layer).__name__, getattr(layer, "units", None), bool(layer.trainable)) for layer in model.layers]


def _training(model: Any) -> tuple[str, float | None, str]:
    """The optimizer's class (inside a loss-scale wrapper), its learning rate and the loss, as compiled."""
    optimizer = getattr(model, "optimizer", None)
    inner = getattr(optimizer, "inner_optimizer", optimizer)
    try:
        rate = round(float(inner.learning_rate), 9)
    except (AttributeError, TypeError, ValueError):
        rate = None
    return type(inner).__name__, rate, _loss(getattr(model, "loss", None))


def _loss(loss: Any) -> str:
    """The loss by what it computes: its function's name, with its arguments (the function's defaults filled in)
    and reduction; a loss named by a string, its function, and a Loss object of the same settings read the same
    ("sparse_categorical_crossentropy", keras.losses.SparseCategoricalCrossentropy())."""
    import inspect

    import keras

    if loss is None:
        return "None"
    try:
        found = keras.losses.get(loss) if isinstance(loss, str) else loss
    except (ValueError, TypeError):
        return str(loss)
    function, given = getattr(found, "fn", found), dict(getattr(found, "_fn_kwargs", {}) or {})
    reduction = getattr(found, "reduction", "sum_over_batch_size")
    if not callable(function):
        return str(loss)
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        parameters = []
    defaults = {p.name: p.default for p in parameters if p.default is not inspect.Parameter.empty}
    settings = ", ".join(f"{k}={v!r}" for k, v in sorted({**defaults, **given}.items()))
    return f"{getattr(function, '__name__', type(function).__name__)}({settings}; reduction={reduction})"


@guard.checked
def assert_same_architecture(
    model: Any, reference: Any, *, what: str = "Your model", section: str | None = None
) -> None:
    """Fail unless ``model`` has ``reference``'s layers (their classes, units and whether they train), as many
    parameters (trainable ones too), and is compiled
    with the same optimizer (inside a loss-scale wrapper or not), learning rate and loss: a narrower model, or a
    cheaper optimizer, would be faster for another reason than its precision."""
    got, expected = _layout(model), _layout(reference)
    trainable = sum(int(np.prod(w.shape)) for w in model.trainable_weights)
    if (
        got != expected
        or model.count_params() != reference.count_params()
        or trainable != sum(int(np.prod(w.shape)) for w in reference.trainable_weights)
    ):
        raise GradingFailure(
            f"{what}: its layers are {got} with {model.count_params():,} parameters; the float32 model built with "
            f"the same arguments has {expected} with {reference.count_params():,}. Build the given architecture "
            f"(classifier_layers, with the width asked for).{reread(section)}"
        )
    if _training(model) != _training(reference):
        raise GradingFailure(
            f"{what}: it is compiled with (optimizer, learning rate, loss) {_training(model)}; the float32 model "
            f"with {_training(reference)}. Compile it the same way (a cheaper optimizer would be faster for "
            f"another reason than its precision); a loss-scale wrapper around the same optimizer is expected."
            f"{reread(section)}"
        )


def step_from_one_state(model: Any, x0: Any, y0: Any) -> Any:
    """A function ``(x, y) -> loss``: one training step of ``model`` (Keras's own ``train_on_batch``) on that batch,
    from the same weights and optimizer state at every call (restored on the device first, a few assigns). Each
    call's loss is then a function of its batch alone, comparable with another model's on the same batch; a
    model trained further and further would drift from it. ``(x0, y0)``: a first step, which builds the
    optimizer's state and Keras's training step for that batch shape; the state after it is the one restored."""
    tf = logs.tensorflow()
    model.train_on_batch(x0, y0)
    variables = list(model.variables) + list(model.optimizer.variables)
    saved = [tf.identity(v.value) for v in variables]

    def train_step(x: Any, y: Any) -> np.float32:
        for variable, value in zip(variables, saved):
            variable.assign(value)
        return np.float32(model.train_on_batch(x, y))

    return train_step


def matmul_gain(compute_dtype: str = "float16", *, n: int | None = None, pairs: int = 3) -> tuple[float, int]:
    """How many times faster a square ``n`` matmul runs in ``compute_dtype`` than in float32 as TensorFlow runs it by
    default (TensorFloat-32 where the GPU has it), from interleaved pairs on this device; and ``n`` (default 4096 on
    a GPU, 256 on a CPU, where float16 matmuls can be very slow)."""
    tf = logs.tensorflow()
    n = n or (4096 if device.device_class() == "gpu" else 256)
    with tf.device(device.compute_device()):
        a = tf.random.uniform((n, n), 0.5, 1.5)
        low = tf.cast(a, compute_dtype)
    comparison = timing.compare(
        lambda: tf.linalg.matmul(low, low), lambda: tf.linalg.matmul(a, a), pairs=pairs, min_time=0.02, sync=device.sync
    )
    return comparison.median, n


def low_precision_pays(compute_dtype: str = "float16", *, at_least: float = PAYS_FROM) -> bool:
    """Whether ``compute_dtype`` matmuls run at least ``at_least`` times as fast as float32's on this device, measured
    now (:func:`matmul_gain`); prints what was measured and what that means for the speed check."""
    gain, n = matmul_gain(compute_dtype)
    kind = device.device_class().upper()
    if gain >= at_least:
        print(
            f"On this {kind}, a {n}x{n} matmul in {compute_dtype} ran {gain:.2f}x as fast as in float32 (at least "
            f"{at_least}x): your model's speed in mixed precision is graded next."
        )
        return True
    print(
        f"On this {kind}, a {n}x{n} matmul in {compute_dtype} ran {gain:.2f}x as fast as in float32, under the "
        f"{at_least}x it takes for mixed precision to pay: no speed is graded here, only what the checks above "
        f"graded. Where a {compute_dtype} matmul measures at least {at_least}x as fast as float32 (a GPU with "
        f"tensor cores), this check also times your model."
    )
    return False


__all__ = [
    "PAYS_FROM",
    "assert_mixed_precision",
    "assert_same_architecture",
    "low_precision_pays",
    "matmul_gain",
    "step_from_one_state",
]
