"""Chapter 3 experiments: data, models, counters and the records the plots need."""

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")
keras = pytest.importorskip("keras")

from tfperf.experiments import keras_fit  # noqa: E402
from tfperf.lesson.widgets import Run  # noqa: E402
from tfperf.measure import host_syncs  # noqa: E402


def test_make_data_is_seeded_learnable_and_fresh_without_a_seed():
    x, y = keras_fit.make_data(200, seed=3)
    x2, y2 = keras_fit.make_data(200, seed=3)
    assert x.dtype == np.float32 and y.dtype == np.int64 and x.shape == (200, keras_fit.FEATURES)
    assert np.array_equal(x, x2) and np.array_equal(y, y2) and set(np.unique(y)) <= set(range(keras_fit.CLASSES))
    a, b = keras_fit.make_data(50, seed=None)[0], keras_fit.make_data(50, seed=None)[0]
    assert not np.array_equal(a, b)
    scaled, same_labels = keras_fit.make_data(200, seed=3, scale=100, offset=5)
    assert np.allclose(scaled, x * 100 + 5, rtol=1e-5) and np.array_equal(same_labels, y)


def test_build_classifier_is_seeded_and_mixed_precision_scales_the_loss():
    a = keras_fit.build_classifier(seed=1).get_weights()
    b = keras_fit.build_classifier(seed=1).get_weights()
    assert all(np.array_equal(p, q) for p, q in zip(a, b))
    mixed = keras_fit.compile_classifier(keras_fit.build_classifier(dtype="mixed_float16"))
    assert mixed.layers[0].compute_dtype == "float16" and mixed.layers[-1].compute_dtype == "float32"
    assert type(mixed.optimizer).__name__ == "LossScaleOptimizer"
    assert keras.config.dtype_policy().name == "float32"  # the global policy is restored
    assert isinstance(keras_fit.mixed_precision_support(), str)


def test_mixed_precision_expectation_says_what_the_guide_says_for_each_device():
    assert "significantly slower" in keras_fit.mixed_precision_expectation(None)
    older = keras_fit.mixed_precision_expectation((6, 0))
    assert "no math gain" in older and "memory and bandwidth" in older
    assert "Tensor Cores" in keras_fit.mixed_precision_expectation((7, 5))
    assert "TensorFloat-32" not in keras_fit.mixed_precision_expectation((7, 5))
    assert "TensorFloat-32" in keras_fit.mixed_precision_expectation((8, 6))
    assert "unknown" in keras_fit.mixed_precision_expectation(())
    if not tf.config.list_physical_devices("GPU"):
        assert keras_fit.mixed_precision_support() == keras_fit.mixed_precision_expectation(None)


def test_fit_speed_reports_reads_per_step_and_steps_per_execution_lowers_them():
    x, y = keras_fit.make_data(8 * 16)
    one = keras_fit.fit_speed(keras_fit.compile_classifier(keras_fit.build_classifier()), x, y, batch=16, epochs=2)
    four = keras_fit.fit_speed(
        keras_fit.compile_classifier(keras_fit.build_classifier(), steps_per_execution=4), x, y, batch=16, epochs=2
    )
    assert one["steps"] == 8 and one["samples_per_s"] > 0
    assert one["host_reads_per_step"] >= 3 > four["host_reads_per_step"]  # loss, accuracy, has_value per call
    with pytest.raises(ValueError):
        keras_fit.fit_speed(None, x, y, batch=16, epochs=1)
    with pytest.raises(ValueError, match="fewer than two calls"):  # 8 steps: one call of 8 steps per epoch
        keras_fit.fit_speed(
            keras_fit.compile_classifier(keras_fit.build_classifier(), steps_per_execution=8), x, y, batch=16, epochs=2
        )


def test_step_clock_times_between_the_first_and_last_call_of_each_epoch():
    x, y = keras_fit.make_data(32 * 12)
    clock = keras_fit.StepClock()
    model = keras_fit.compile_classifier(keras_fit.build_classifier(), steps_per_execution=4)
    model.fit(x, y, batch_size=32, epochs=3, verbose=0, callbacks=[clock])
    assert len(clock.step_seconds) == 3 and all(s > 0 for s in clock.step_seconds)
    one_call = keras_fit.StepClock()
    model.fit(x[: 32 * 4], y[: 32 * 4], batch_size=32, epochs=1, verbose=0, callbacks=[one_call])
    assert one_call.step_seconds == []  # one call per epoch: nothing between calls


def test_compare_fit_speeds_interleaves_models_with_their_own_callbacks():
    x, y = keras_fit.make_data(16 * 8)
    recorder = keras_fit.LossRecorder()
    models = {
        "a": keras_fit.compile_classifier(keras_fit.build_classifier()),
        "b": keras_fit.compile_classifier(keras_fit.build_classifier(), steps_per_execution=4),
    }
    speeds = keras_fit.compare_fit_speeds(models, x, y, batch=16, rounds=2, callbacks={"b": [recorder]})
    assert set(speeds) == {"a", "b"} and all(r["ms_per_step"] > 0 and r["steps"] == 8 for r in speeds.values())
    assert speeds["a"]["host_reads_per_step"] > speeds["b"]["host_reads_per_step"]
    assert len(recorder.losses) == 4 * 2  # warm-up, 2 rounds, host-read epoch: 2 calls each
    epochs = keras_fit.compare_fit_speeds({"a": models["a"]}, x, y, batch=16, rounds=1, clock="epoch")
    assert epochs["a"]["samples_per_s"] > 0
    with pytest.raises(ValueError):
        keras_fit.compare_fit_speeds(models, x, y, batch=16, clock="wall")


def test_loss_recorder_sees_every_call_of_train_function():
    x, y = keras_fit.make_data(32 * 8)
    for n, calls in ((1, 8), (4, 2)):
        recorder = keras_fit.LossRecorder()
        model = keras_fit.compile_classifier(keras_fit.build_classifier(), steps_per_execution=n)
        model.fit(x, y, batch_size=32, verbose=0, callbacks=[recorder])
        assert len(recorder.losses) == calls and all(isinstance(v, float) for _, v in recorder.losses)


def test_fit_throughput_records_and_plot():
    import matplotlib.pyplot as plt

    seen = []
    records = keras_fit.fit_throughput((16,), (1, 4), steps=8, epochs=2, progress=lambda d, t: seen.append((d, t)))
    assert [r["steps_per_execution"] for r in records] == [1, 4] and seen[-1] == (2, 2)
    assert all(r["samples_per_s"] > 0 and r["batch"] == 16 for r in records)
    fig = plt.figure()
    keras_fit.plot_fit_throughput(fig, [Run("a", {}, records), Run("b", {}, records)])
    plt.close(fig)


def test_counting_layer_counts_runs_eager_and_compiled_and_refuses_a_replaced_call():
    model, runs = keras_fit.build_predictor()
    assert runs() == 0  # building the model does not count
    x = keras_fit.make_data(40)[0]
    model(x[:5], training=False)
    assert runs() == 1
    model.predict(x, verbose=0)  # 32 + 8: two batches
    assert runs() == 3
    graph = tf.function(lambda v: model(v, training=False))
    graph(x)
    graph(x)
    assert runs() == 5
    model.layers[-1].call = lambda inputs: inputs
    with pytest.raises(RuntimeError, match="changed"):
        runs()


def test_prediction_ways_agree_and_count_runs():
    records = keras_fit.prediction_costs(8, repeats=1, min_time=0.001)
    runs = {r["way"]: r["runs"] for r in records}
    assert runs == {
        "predict() per sample": 8,
        "predict(batch_size=1)": 8,
        "predict() in slices of 8": 1,
        "predict() once": 1,
        "model(x, training=False)": 1,
        "tf.function(model)": 1,
        "predict_on_batch": 1,
    }
    # A GPU multiplies float32 in TensorFloat-32 by default, and the ways use other kernels: about 1e-4 on an H100.
    assert all(r["max_difference"] < (1e-3 if tf.config.list_physical_devices("GPU") else 1e-5) for r in records)
    with pytest.raises(ValueError):
        keras_fit.prediction_way("nope", None)


def test_predict_with_batch_size_1_is_the_per_sample_loop_bit_for_bit():
    """Chapter 3's predict_fast check takes its expected probabilities from one predict(x, batch_size=1): the same
    compiled function on the same one-row batches as predict_unfixed's loop, so the very same numbers."""
    model, _ = keras_fit.build_predictor(seed=5)
    x = np.random.default_rng(0).standard_normal((5, keras_fit.FEATURES), dtype=np.float32)
    per_sample = keras_fit.prediction_way("predict() per sample", model)(x)
    assert np.array_equal(keras_fit.prediction_way("predict(batch_size=1)", model)(x), per_sample)


def test_callback_costs_and_execution_modes_records():
    costs = keras_fit.callback_costs(batch=16, steps=4, rounds=1)
    assert [r["callbacks"] for r in costs] == ["none but the clock", "clock + LossRecorder"]
    assert all(r["ms_per_step"] > 0 and r["host_reads_per_step"] >= 3 for r in costs)
    modes = keras_fit.execution_modes(keras_fit.EXECUTION_MODES[:2], steps=4, rounds=1)
    assert [r["mode"] for r in modes] == list(keras_fit.EXECUTION_MODES[:2]) and all(
        r["ms_per_step"] > 0 for r in modes
    )


def test_host_reads_between_steps_are_counted_per_call():
    x, y = keras_fit.make_data(32 * 6)
    model = keras_fit.compile_classifier(keras_fit.build_classifier())
    model.fit(x, y, batch_size=32, verbose=0)
    with host_syncs.counting() as syncs:
        model.fit(x, y, batch_size=32, verbose=0)
    assert syncs.kinds["bool() or a Python if/while on a tensor"] == 6  # has_value() per call


@pytest.mark.parametrize("ns", [(1, 2), (1, 16), (1, 4, 16, 64)])
def test_fit_throughput_plot_labels_n_with_whole_numbers(ns):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from tests.unit.lesson.test_plots import labelled_ticks
    from tfperf.lesson import plots

    records = [
        {"steps_per_execution": n, "samples_per_s": 1000.0 * n**0.3, "batch": 32, "jit_compile": False, "width": 32}
        for n in ns
    ]
    fig = plt.figure(figsize=plots.FIGSIZE, layout="constrained")
    keras_fit.plot_fit_throughput(fig, [plots.Run("this run", records=records)])
    fig.canvas.draw()
    for ax in fig.axes:
        shown = [label.get_text() for label in labelled_ticks(ax.xaxis)]
        assert shown and all(float(text) == int(float(text)) for text in shown), shown
    plt.close(fig)


def test_an_eager_custom_step_reads_what_the_compiled_one_reads():
    """Chapter 3, section 5: the eager gradient of a sum calls ``.numpy()`` on its axes (``_SumGrad``), which
    ``_ReductionDims`` made on the host from ``np.arange``: not a read of the device's, so not counted."""

    class Step(keras.Sequential):
        def train_step(self, data):
            x, y = data
            with tf.GradientTape() as tape:
                loss = self.compute_loss(x=x, y=y, y_pred=self(x, training=True))
            self.optimizer.apply_gradients(zip(tape.gradient(loss, self.trainable_variables), self.trainable_variables))
            return {"loss": loss}

    x, y = keras_fit.make_data(16 * 4, seed=1)
    reads = {
        options.get("run_eagerly", False): keras_fit.host_reads_per_step(
            keras_fit.compile_classifier(keras_fit.build_classifier(model_class=Step), metrics=(), **options),
            x,
            y,
            batch=16,
        )
        for options in ({}, {"run_eagerly": True})
    }
    assert reads[True] == reads[False] > 0, reads
