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


__all__ = ["assert_mixed_precision"]
