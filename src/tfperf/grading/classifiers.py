"""Checks of a classifier's outputs: probabilities, accuracy, and a loss that matches the output."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from tfperf.grading import guard
from tfperf.grading.calls import GradingFailure, call, call_capturing, reread
from tfperf.grading.results import as_array

#: What Keras warns when a cross-entropy is told ``from_logits=True`` but the output went
#: through a softmax or sigmoid (``_get_logits`` in ``keras/src/backend/tensorflow/nn.py``).
LOGITS_MISMATCH = r"received `from_logits=True`, but the `output` argument was produced by a (\w+) activation"


@guard.checked
def predictions(model: Any, x: Any, *, what: str = "The model's predict()", section: str | None = None) -> np.ndarray:
    """``model.predict(x, verbose=0)``, called quietly, as a NumPy array."""
    return as_array(call(lambda: model.predict(x, verbose=0), (), who=what, section=section), what)


@guard.checked
def assert_probabilities(
    outputs: Any,
    *,
    samples: int,
    classes: int,
    what: str = "The predictions",
    atol: float = 1e-3,
    section: str | None = None,
) -> np.ndarray:
    """Fail unless ``outputs`` holds ``samples`` rows of ``classes`` probabilities that sum to 1.

    Returns the outputs as a NumPy array.
    """
    p = as_array(outputs, what)
    if p.shape != (samples, classes):
        raise GradingFailure(
            f"{what} have shape {p.shape}; expected ({samples}, {classes}): one row of "
            f"{classes} class probabilities per sample.{reread(section)}"
        )
    if not np.all(np.isfinite(p)):
        raise GradingFailure(f"{what} contain NaN or infinite values.{reread(section)}")
    low, high = float(p.min()), float(p.max())
    sums = p.sum(axis=1)
    worst = float(np.max(np.abs(sums - 1.0)))
    if low < -atol or high > 1 + atol or worst > atol:
        raise GradingFailure(
            f"{what} are not probabilities: values from {low:.3g} to {high:.3g}, rows summing to between "
            f"{float(sums.min()):.3g} and {float(sums.max()):.3g} (expected values in [0, 1] and every row summing "
            f"to 1). Logits, or one sigmoid per class, are not a probability distribution over the classes."
            f"{reread(section)}"
        )
    return p


@guard.checked
def assert_accuracy_at_least(
    probabilities: Any,
    labels: Sequence[int],
    minimum: float,
    *,
    what: str = "The model",
    section: str | None = None,
    hint: str = "Check that the output activation, the loss and the label encoding belong together.",
) -> float:
    """Fail unless the most probable class is the label for at least ``minimum`` of the samples.

    The accuracy is computed here from the outputs (not from the model's own metrics); ``hint`` ends the
    failure's message. Returns it.
    """
    p, y = as_array(probabilities, "The predictions"), np.asarray(labels)
    if p.ndim != 2 or p.shape[0] != y.shape[0]:
        raise GradingFailure(f"The predictions have shape {p.shape}; expected one row per label ({y.shape[0]}).")
    accuracy = float(np.mean(np.argmax(p, axis=1) == y))
    if accuracy < minimum:
        chance = float(np.max(np.bincount(y))) / len(y)
        raise GradingFailure(
            f"{what} reached an accuracy of {accuracy:.3f} on held-out data; at least {minimum:.2f} expected "
            f"(always guessing the most common class gives {chance:.3f}). {hint}{reread(section)}"
        )
    return accuracy


@guard.checked
def assert_loss_matches_output(
    fn: Callable[..., Any], args: Sequence[Any], *, what: str, section: str | None = None
) -> Any:
    """Call ``fn(*args)`` quietly (it should train a Keras model); fail if Keras warned that the loss
    was told ``from_logits=True`` for an output that went through a softmax or sigmoid.

    Keras then uses the logits behind the activation anyway, so training works, but the
    configuration says two different things. Returns what ``fn`` returned.
    """
    result, captured = call_capturing(fn, args, who=what, section=section, stdout=False)
    for text in (*captured.warnings, captured.python, captured.native):
        found = re.search(LOGITS_MISMATCH, text)
        if found:
            raise GradingFailure(
                f"{what}: Keras warned that the loss was told from_logits=True, but the model's output went "
                f"through a {found.group(1)} activation, so it holds probabilities, not logits. Keras quietly used "
                f"the logits behind the activation; say what the output is instead (from_logits=False for "
                f"probabilities).{reread(section)}"
            )
    return result
