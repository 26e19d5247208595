"""The TFPERF_AS_ON_GPU switch: Keras's jit_compile="auto" resolved as on a GPU machine.

Each case runs in a fresh CPU-only process: the switch patches Keras for the whole process."""

import pytest

from tests.cpu_only import run_on_cpu
from tfperf.runtime import as_on_gpu

PROBE = """
import json
import numpy as np
import keras
import tensorflow as tf
from tfperf.runtime import as_on_gpu

notes = as_on_gpu.apply()
x, y = np.zeros((8, 4), "float32"), np.zeros((8, 2), "float32")

class NotForXla(keras.layers.Layer):
    def __init__(self):
        super().__init__()
        self.supports_jit = False
    def call(self, x):
        return x

class PrintsItsLoss(keras.Sequential):
    def train_step(self, data):
        logs = super().train_step(data)
        tf.print("loss", logs["loss"], output_stream="file:///dev/null")
        return logs

def compiled(*layers, model_class=keras.Sequential, **options):
    model = model_class([keras.Input((4,)), *layers, keras.layers.Dense(2)])
    model.compile(optimizer="sgd", loss="mse", **options)
    return model

def fit_error(model):
    try:
        model.fit(x, y, batch_size=4, verbose=0)
    except Exception as error:
        return type(error).__name__
    return None

with tf.distribute.OneDeviceStrategy("/cpu:0").scope():
    under_a_strategy = compiled()
result = {
    "notes": notes,
    "auto": compiled().jit_compile,
    "not_compiled_yet": keras.Sequential([keras.Input((4,)), keras.layers.Dense(2)]).jit_compile,
    "layer_without_xla": compiled(NotForXla()).jit_compile,
    "run_eagerly": compiled(run_eagerly=True).jit_compile,
    "strategy": under_a_strategy.jit_compile,
    "explicitly_off": compiled(jit_compile=False).jit_compile,
    "tf_print_fit_error": fit_error(compiled(model_class=PrintsItsLoss)),
    "tf_print_without_xla_fit_error": fit_error(compiled(model_class=PrintsItsLoss, jit_compile=False)),
    "synchronous": tf.config.experimental.get_synchronous_execution(),
}
tf.config.experimental.enable_op_determinism()
result["op_determinism"] = compiled().jit_compile
print(json.dumps(result))
"""


def test_under_the_switch_keras_compiles_auto_with_xla_where_a_gpu_machine_would(monkeypatch):
    monkeypatch.setenv(as_on_gpu.ENV_VAR, "1")
    seen = run_on_cpu(PROBE)
    assert seen["auto"] is True and seen["not_compiled_yet"] is True
    # every other condition of Keras's resolution still holds
    assert seen["layer_without_xla"] is False and seen["op_determinism"] is False and seen["strategy"] is False
    assert seen["run_eagerly"] is False and seen["explicitly_off"] is False
    # XLA really compiles the step: it has no kernel for tf.print's ops (the chapter 3 failure)
    assert seen["tf_print_fit_error"] == "InvalidArgumentError" and seen["tf_print_without_xla_fit_error"] is None
    assert seen["synchronous"] is True and seen["notes"]  # eager stays synchronous (see as_on_gpu's docstring)


def test_without_the_switch_nothing_changes_on_a_cpu(monkeypatch):
    monkeypatch.delenv(as_on_gpu.ENV_VAR, raising=False)
    seen = run_on_cpu(PROBE)
    assert seen["auto"] is False and seen["not_compiled_yet"] is False and seen["layer_without_xla"] is False
    assert seen["tf_print_fit_error"] is None and seen["synchronous"] is True and seen["notes"] == []


def test_the_patch_drops_only_kerass_cpu_only_test():
    """The replacement mirrors Keras's own resolution: if Keras changes it, this fails and says where to look."""
    import inspect

    from keras.src.trainers import trainer

    original = inspect.getsource(trainer.Trainer._resolve_auto_jit_compile)
    assert "Disable XLA on CPU-only machines" in original
    assert "self._distribute_strategy" in original and "model_supports_jit(self)" in original
    assert original.count("return") == 5, "keras/src/trainers/trainer.py, _resolve_auto_jit_compile changed"


@pytest.mark.parametrize("value, expected", [("", False), ("0", False), ("1", True), ("true", True)])
def test_switch_values(monkeypatch, value, expected):
    monkeypatch.setenv(as_on_gpu.ENV_VAR, value)
    assert as_on_gpu.enabled() is expected


def test_unknown_switch_value_is_a_clear_error(monkeypatch):
    monkeypatch.setenv(as_on_gpu.ENV_VAR, "maybe")
    with pytest.raises(ValueError, match=as_on_gpu.ENV_VAR):
        as_on_gpu.enabled()
