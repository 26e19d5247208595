"""Chapter 3's grading assertions: classifier outputs, model runs, host reads inside a Keras train step."""

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")
keras = pytest.importorskip("keras")

from tfperf import grading  # noqa: E402
from tfperf.experiments import keras_fit  # noqa: E402
from tfperf.grading import train_steps  # noqa: E402


def test_assert_probabilities():
    p = np.array([[0.2, 0.8], [0.5, 0.5]], np.float32)
    assert grading.assert_probabilities(p, samples=2, classes=2).shape == (2, 2)
    with pytest.raises(grading.GradingFailure, match="shape"):
        grading.assert_probabilities(p, samples=3, classes=2)
    with pytest.raises(grading.GradingFailure, match="not probabilities"):
        grading.assert_probabilities(np.array([[2.0, -1.0]]), samples=1, classes=2, section="6. x")
    with pytest.raises(grading.GradingFailure, match="not probabilities"):
        grading.assert_probabilities(np.array([[0.9, 0.9]]), samples=1, classes=2)  # sigmoids
    with pytest.raises(grading.GradingFailure, match="NaN"):
        grading.assert_probabilities(np.array([[np.nan, 1.0]]), samples=1, classes=2)


def test_assert_accuracy_at_least_computes_it_from_the_outputs():
    p = np.array([[0.9, 0.1], [0.2, 0.8], [0.6, 0.4], [0.3, 0.7]])
    assert grading.assert_accuracy_at_least(p, [0, 1, 0, 0], 0.75) == 0.75
    with pytest.raises(grading.GradingFailure, match="accuracy of 0.750") as err:
        grading.assert_accuracy_at_least(p, [0, 1, 0, 0], 0.8, section="6. Output")
    assert "most common class gives 0.750" in str(err.value) and '"6. Output"' in str(err.value)


def test_assert_loss_matches_output_flags_keras_repairs():
    x, y = keras_fit.make_data(64)

    def train(output, from_logits):
        model = keras_fit.build_classifier(output=output)
        model.compile(optimizer="sgd", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=from_logits))
        model.fit(x, y, verbose=0)
        return model

    assert grading.assert_loss_matches_output(train, ("softmax", False), what="training") is not None
    assert grading.assert_loss_matches_output(train, (None, True), what="training") is not None
    with pytest.raises(grading.GradingFailure, match="Softmax activation"):
        grading.assert_loss_matches_output(train, ("softmax", True), what="training")


def test_predictions_are_called_quietly():
    model = keras_fit.build_classifier()
    assert grading.predictions(model, keras_fit.make_data(5)[0]).shape == (5, keras_fit.CLASSES)

    class Broken:
        def predict(self, x, verbose=0):
            raise ValueError("nope")

    with pytest.raises(grading.GradingFailure, match="raised ValueError"):
        grading.predictions(Broken(), None)


def test_assert_model_runs():
    model, runs = keras_fit.build_predictor()
    x = keras_fit.make_data(40)[0]
    grading.assert_model_runs(lambda v: model(v), (x,), runs=runs, at_most=1, what="one call")
    with pytest.raises(grading.GradingFailure, match="ran the model 40 times; at most 2"):
        grading.assert_model_runs(
            lambda v: [model(v[i : i + 1]) for i in range(len(v))], (x,), runs=runs, at_most=2, what="per sample"
        )
    with pytest.raises(grading.GradingFailure, match="0 times; at least 1"):
        grading.assert_model_runs(lambda v: v, (x,), runs=runs, at_most=1, what="no model")

    def switch_off(v):
        model.layers[-1].call = lambda inputs: inputs
        return model(v)

    with pytest.raises(grading.GradingFailure, match="run counter could not be read"):
        grading.assert_model_runs(switch_off, (x,), runs=runs, at_most=1, what="tampering")


_SEEN = []


class _Step(keras.Sequential):
    """Keras's train step plus ``extra(loss)``, a hook for the tests."""

    extra = staticmethod(lambda loss: None)

    def train_step(self, data):
        logs = super().train_step(data)
        type(self).extra(logs["loss"])
        return logs


def _model(extra=None, **options):
    cls = type("S", (_Step,), {"extra": staticmethod(extra or (lambda loss: None))})
    model = keras_fit.compile_classifier(keras_fit.build_classifier(model_class=cls), **options)
    x, y = keras_fit.make_data(32 * 4)
    return model, lambda: model.fit(x, y, batch_size=32, epochs=1, verbose=0)


def test_keras_reads_per_call_is_measured():
    assert train_steps.keras_reads_per_call() == 1  # Keras 3: opt_outputs.has_value() per call


def test_compiled_step_passes_and_trains():
    model, fit = _model()
    fit()
    assert grading.assert_no_host_reads_in_train_step(model, fit, what="plain") is not None
    model, fit = _model(steps_per_execution=2)
    grading.assert_no_host_reads_in_train_step(model, fit, what="two steps per call")


@pytest.mark.parametrize(
    "extra, message",
    [
        (lambda loss: tf.py_function(lambda v: _SEEN.append(float(v)), [loss], []), "called back into Python 4 times"),
        (lambda loss: tf.numpy_function(lambda v: np.float32(0), [loss], tf.float32), "called back into Python"),
    ],
)
def test_host_callbacks_in_the_step_fail(extra, message):
    model, fit = _model(extra, jit_compile=False)
    with pytest.raises(grading.GradingFailure, match=message):
        grading.assert_no_host_reads_in_train_step(model, fit, what="step")


@pytest.mark.parametrize(
    "extra",
    [
        lambda loss: tf.py_function(lambda v: _SEEN.append(float(v)), [loss], []),
        lambda loss: tf.numpy_function(lambda v: np.float32(0), [loss], tf.float32),
    ],
)
def test_host_callbacks_under_xla_fail_with_the_reason(extra):
    # As on a GPU machine, where jit_compile="auto" means XLA: the step does not compile (seen on an H100).
    model, fit = _model(extra, jit_compile=True)
    with pytest.raises(grading.GradingFailure, match="calls back into Python .* which XLA cannot compile"):
        grading.assert_no_host_reads_in_train_step(model, fit, what="step")


def test_eager_steps_fail_and_the_counter_is_restored():
    model, fit = _model(lambda loss: loss.numpy(), run_eagerly=True)
    with pytest.raises(grading.GradingFailure, match="runs eagerly"):
        grading.assert_no_host_reads_in_train_step(model, fit, what="step")
    tf.config.run_functions_eagerly(True)
    try:
        model, fit = _model()
        with pytest.raises(grading.GradingFailure, match="runs eagerly"):
            grading.assert_no_host_reads_in_train_step(model, fit, what="step")
    finally:
        tf.config.run_functions_eagerly(False)
    from tensorflow.python.ops import script_ops

    with train_steps.counting_host_callbacks() as count:
        tf.py_function(lambda: 0.0, [], tf.float32)
    assert count == [1] and "counted" not in script_ops.FuncRegistry.__call__.__qualname__


def test_reads_inside_the_train_function_are_counted():
    model, fit = _model()
    fit()
    inner = model.make_train_function() or model.train_function

    def reading(iterator):
        logs = inner(iterator)
        float(logs["loss"])  # a host read during the call
        return logs

    model.train_function = reading
    with pytest.raises(grading.GradingFailure, match="read tensor values on the host 4 times in 4 calls"):
        grading.assert_no_host_reads_in_train_step(model, fit, what="step")


def test_a_fit_that_bypasses_train_function_fails():
    model, fit = _model()
    with pytest.raises(grading.GradingFailure, match="never called the model's train_function"):
        grading.assert_no_host_reads_in_train_step(model, lambda: None, what="step")


def test_assert_keras_pristine():
    grading.assert_keras_pristine()
    model = keras_fit.build_classifier()
    grading.assert_keras_pristine(models=[model])
    original = keras.Model.__dict__.get("fit")
    keras.Model.fit = lambda self, *a, **k: None
    try:
        with pytest.raises(grading.GradingFailure, match="grading environment was modified: keras.Model.fit"):
            grading.assert_keras_pristine(section="5. x")
    finally:
        if original is None:
            del keras.Model.fit
        else:
            keras.Model.fit = original
    grading.assert_keras_pristine()
    model.predict = lambda *a, **k: None
    with pytest.raises(grading.GradingFailure, match="on the model object"):
        grading.assert_keras_pristine(models=[model])
