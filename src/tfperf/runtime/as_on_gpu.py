"""The ``TFPERF_AS_ON_GPU`` switch: run the course the way a GPU machine runs it, where a CPU can.

A CPU-only suite never sees what only a GPU machine does. With ``TFPERF_AS_ON_GPU=1``,
:func:`apply` (called by ``tfperf.course.start()``, the setup cell of every notebook, before
any model is compiled) changes exactly one decision, **XLA by default**: Keras resolves
``jit_compile="auto"`` in ``Trainer._resolve_auto_jit_compile`` (``keras/src/trainers/trainer.py``):
with the TensorFlow backend it returns False when every physical device is a CPU, False under
a distribution strategy, and otherwise ``model_supports_jit(model)`` (every layer supports XLA,
op determinism off, not a GPU on Apple silicon). Under the switch only the CPU-only test is
dropped, so every model Keras would compile with XLA on a GPU machine is compiled with XLA here.

Eager execution stays synchronous. TensorFlow's asynchronous eager mode
(``tf.config.experimental.set_synchronous_execution(False)``) is no stand-in for a GPU's
stream for a whole notebook: an error it raises poisons the executor, so an error a cell
catches on purpose surfaces again at a later, unrelated operation ("This error cancels all
future operations and poisons their output tensors"), where a GPU machine, whose eager
executor is synchronous, raised it once. The chapters that show a queue (chapter 5,
sections 1 to 3) run both modes side by side on every machine.

Throughput targets stay the CPU's (a GPU target means nothing on a CPU). What a GPU changes
that a CPU cannot reproduce is listed in docs/testing-on-a-gpu.md.
"""

from __future__ import annotations

import os

ENV_VAR = "TFPERF_AS_ON_GPU"


def enabled() -> bool:
    """Whether ``TFPERF_AS_ON_GPU`` asks for the GPU path (``1``, ``true``, ``yes``; unset or ``0``: no)."""
    value = os.environ.get(ENV_VAR, "").strip().lower()
    if value in ("", "0", "false", "no"):
        return False
    if value in ("1", "true", "yes"):
        return True
    raise ValueError(f"{ENV_VAR}={value!r} is not one of 1, 0 (or true, false).")


def resolve_auto_jit_compile_as_on_a_gpu(model) -> bool:
    """Keras's ``Trainer._resolve_auto_jit_compile`` for the TensorFlow backend, less its
    "Disable XLA on CPU-only machines" test: off under a distribution strategy, else what
    Keras's ``model_supports_jit`` says."""
    from keras.src.trainers import trainer

    if model._distribute_strategy:
        return False
    return trainer.model_supports_jit(model)


def apply() -> list[str]:
    """Under the switch, make Keras resolve ``jit_compile="auto"`` as on a GPU machine.

    Returns a note for the learner (none without the switch). Idempotent.
    """
    if not enabled():
        return []
    import keras
    from keras.src.trainers import trainer

    if keras.backend.backend() != "tensorflow":
        raise RuntimeError(
            f"{ENV_VAR} reproduces the TensorFlow backend's choices; Keras uses {keras.backend.backend()}."
        )
    trainer.Trainer._resolve_auto_jit_compile = resolve_auto_jit_compile_as_on_a_gpu
    return [
        f"{ENV_VAR} is set: Keras compiles jit_compile='auto' with XLA, as on a GPU machine "
        "(speed targets stay the CPU's)."
    ]
