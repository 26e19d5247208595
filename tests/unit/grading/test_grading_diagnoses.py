"""grading.check_diagnosis and grading.check_recorded_run (chapter 8): the reference answers pass; answers that
guess, skip the warm-up or the Profiler, or record a run that is not the one they ran, fail."""

import random
import tempfile
import time

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")
pytest.importorskip("xprof")
import tfperf  # noqa: E402
import tfperf.runtime.device  # noqa: E402
from tfperf import grading  # noqa: E402
from tfperf.diagnosis import registry  # noqa: E402
from tfperf.experiments import capstone as cs  # noqa: E402


def reference(train):
    with tempfile.TemporaryDirectory() as logdir:
        found = tfperf.diagnose(train, steps=10, warmup=3, card=None, profile_dir=logdir)
    return set(found.codes())


def without_the_profiler(train):
    return set(tfperf.diagnose(train, steps=10, warmup=3, card=None).codes())


def without_warm_up(train):
    with tempfile.TemporaryDirectory() as logdir:
        return set(tfperf.diagnose(train, steps=10, warmup=0, card=None, profile_dir=logdir).codes())


#: alone: a script without a pitfall must not be named input-bound, and another process's load on the machine makes its
#: steps wait for their input (this test failed so once beside the suite's other part, 2026-11-28: "named
#: ['input-bound'], which that script does not have"); tools/run-tests.sh runs it with the machine to itself.
@pytest.mark.alone
@pytest.mark.parametrize("pitfall", ["input-bound", "retracing"])
def test_the_reference_procedure_passes_on_fixed_and_fresh_scripts(pitfall):
    grading.check_diagnosis(reference, pitfall, seed=11)
    grading.check_diagnosis(reference, pitfall, seed=None)


def test_a_guess_fails_on_the_script_without_a_pitfall():
    with pytest.raises(grading.GradingFailure, match="does not have"):
        grading.check_diagnosis(lambda train: {"input-bound"}, "input-bound", seed=11)
    with pytest.raises(grading.GradingFailure, match="does not have"):
        grading.check_diagnosis(lambda train: set(cs.PITFALLS), "retracing", seed=11)


@pytest.mark.parametrize("clean_first", [False, True], ids=["the script with the pitfall first", "drawn otherwise"])
def test_the_scripts_place_does_not_tell_which_has_the_pitfall(monkeypatch, clean_first):
    """A procedure that never runs the Profiler and names input-bound on every other call where it counted nothing
    passes where the script with the pitfall always comes first; the order is drawn at every check."""
    from tfperf.grading import diagnoses

    class Drawn:
        def shuffle(self, scripts):
            if clean_first:
                scripts.reverse()

    calls = []

    def by_place(train):
        calls.append(1)
        counted = without_the_profiler(train) & set(cs.PITFALLS)
        return counted or ({"input-bound"} if len(calls) % 2 else set())

    assert isinstance(diagnoses._ORDER, random.SystemRandom)  # what grading draws the order with
    monkeypatch.setattr(diagnoses, "_ORDER", Drawn())
    if clean_first:
        with pytest.raises(grading.GradingFailure, match=r"no pitfall\) named \['input-bound'\]"):
            grading.check_diagnosis(by_place, "input-bound", seed=11)
    else:
        grading.check_diagnosis(by_place, "input-bound", seed=11)


def test_no_profiler_misses_input_bound_and_no_warm_up_names_retracing_everywhere():
    with pytest.raises(grading.GradingFailure, match="missed"):
        grading.check_diagnosis(without_the_profiler, "input-bound", seed=11)
    with pytest.raises(grading.GradingFailure, match="retracing"):
        grading.check_diagnosis(without_warm_up, "host-read-every-step", seed=11)


def test_codes_must_be_plain_strings_in_a_collection():
    class Anything(str):
        def __eq__(self, other):
            return True

        __hash__ = str.__hash__

    with pytest.raises(grading.GradingFailure, match="plain str"):
        grading.check_diagnosis(lambda train: [Anything("x")], "print-in-step", seed=11)
    with pytest.raises(grading.GradingFailure, match="expected a set"):
        grading.check_diagnosis(lambda train: "print-in-step", "print-in-step", seed=11)


def record_honestly(runs, script, steps):
    with runs.record(
        "fixed", hyperparameters={"batch": script.batch, "steps": steps}, data_hash=cs.data_hash(script)
    ) as run:
        run.metrics = {"loss": script.train(steps)}
        run.examples = steps * script.batch
    return run


def row(script, steps, *, duration_s, loss):
    """A finished run of ``steps`` steps of ``script`` as a registry row, its duration and loss as given."""
    return registry.Run(
        "by hand",
        status="finished",
        hyperparameters={"batch": script.batch, "steps": steps},
        data_hash=cs.data_hash(script),
        duration_s=duration_s,
        examples=steps * script.batch,
        metrics={"loss": loss},
    )


def test_an_honest_record_passes_warmed_up_or_not():
    grading.check_recorded_run(record_honestly, section="5. The run registry")

    def warmed_up_first(runs, script, steps):
        script.train(3)  # the first call traces: kept out of the record
        return record_honestly(runs, script, steps)

    grading.check_recorded_run(warmed_up_first)


@pytest.mark.parametrize(
    "record, problem",
    [
        # a run timed by hand, around nothing: a throughput a thousand times too high
        (
            lambda runs, script, steps: runs.add(row(script, steps, duration_s=1e-6, loss=script.train(steps))),
            "a warmed-up copy",
        ),
        # the row says 8 steps; the script ran 2
        (
            lambda runs, script, steps: record_honestly(runs, script, 2) and None,
            "ran 2 steps",
        ),
        # made up without training
        (
            lambda runs, script, steps: runs.add(row(script, steps, duration_s=0.01, loss=1.0)),
            "ran 0 steps",
        ),
    ],
    ids=["duration made up", "fewer steps", "no training"],
)
def test_a_record_that_is_not_the_run_fails(record, problem):
    with pytest.raises(grading.GradingFailure) as failure:
        grading.check_recorded_run(record)
    assert problem is None or problem in str(failure.value)


def test_a_run_slower_than_its_record_says_fails():
    def padded(runs, script, steps):
        start = time.perf_counter()
        loss = script.train(steps)
        took = time.perf_counter() - start
        return runs.add(row(script, steps, duration_s=took * 1000, loss=loss))  # longer than the call itself

    with pytest.raises(grading.GradingFailure, match="duration_s"):
        grading.check_recorded_run(padded)


def make_script(x, y, *, batch, width, seed, keep=()):
    """A learner's fixed script (chapter 8, exercise 3), with the pitfalls in ``keep`` left as the chapter's script
    has them."""
    import keras

    model = cs.make_model(width, seed)
    optimizer = keras.optimizers.SGD(cs.LEARNING_RATE)
    optimizer.build(model.trainable_variables)
    loss_of = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    def step(features, labels, learning_rate):
        with tf.GradientTape() as tape:
            loss = loss_of(labels, model(features, training=True))
        gradients = tape.gradient(loss, model.trainable_variables)
        optimizer.learning_rate.assign(learning_rate)
        optimizer.apply_gradients(zip(gradients, model.trainable_variables))
        return loss

    if "eager-steps" not in keep:
        step = tf.function(step)
    if "input-bound" in keep:
        dataset = tf.data.Dataset.from_tensor_slices((x, y)).map(cs.preprocess, synchronous=True)
        options = tf.data.Options()
        options.autotune.enabled = False
        options.experimental_optimization.inject_prefetch = False
        options.experimental_optimization.map_and_batch_fusion = False
        dataset = dataset.batch(batch, drop_remainder=True).with_options(options)
    else:
        features, labels = cs.preprocess(tf.constant(x), tf.constant(y))
        whole = len(x) // batch * batch  # cut into batches before tf.data takes them, as cs.pipeline does
        features = tf.reshape(features[:whole], (-1, batch, *features.shape[1:]))
        labels = tf.reshape(labels[:whole], (-1, batch, *labels.shape[1:]))
        dataset = tf.data.Dataset.from_tensor_slices((features, labels)).prefetch(tf.data.AUTOTUNE)
    batches = iter(dataset.repeat())
    done = [0]

    def train(steps):
        loss = None
        for _ in range(steps):
            done[0] += 1
            rate = cs.LEARNING_RATE * cs.DECAY ** done[0]
            features, labels = next(batches)
            loss = step(features, labels, rate if "retracing" in keep else tf.constant(rate, tf.float32))
            if "host-read-every-step" in keep:
                float(loss)
            if "print-in-step" in keep:
                print("step", done[0])
        return float(loss)

    return train, model


def test_a_fixed_script_passes_and_its_results_are_the_scripts():
    grading.check_fixed_script(make_script, seed=3, section="4. Fix one cause at a time")
    x, y = cs.make_data(256, seed=1)
    script = cs.make_training(cs.PITFALLS, batch=32, width=64, seed=2, data=(x, y))
    mine, model = make_script(x, y, batch=32, width=64, seed=2)
    with tfperf.runtime.logs.captured_output(), tfperf.runtime.device.full_float32():
        losses = script.train(12), mine(12)
    # On a CPU, bit for bit; a GPU's kernels may sum in another order (on an H100, losses 7e-7 apart relatively).
    tolerance = (
        {"rtol": 0, "atol": 0} if tfperf.runtime.device.device_class() == "cpu" else {"rtol": 1e-5, "atol": 1e-6}
    )
    np.testing.assert_allclose(losses[1], losses[0], **tolerance)
    for theirs, ours in zip(script.model.get_weights(), model.get_weights()):
        np.testing.assert_allclose(ours, theirs, **tolerance)


@pytest.mark.parametrize("waits", [(True,), (True, True, True)], ids=["once", "every time"])
def test_an_input_wait_fails_a_fixed_script_only_if_every_diagnosis_finds_it(monkeypatch, waits):
    """The Profiler's input wait is timed over a few tens of milliseconds, where another process's time slice can
    land (docs/measurements-08_capstone.md): the check diagnoses again, and fails only on a wait found each time.
    Here the reference's first diagnoses are told an input wait they did not measure."""
    from tfperf.diagnosis import findings, run

    real, diagnosed = run.diagnose, []

    def told_a_wait(*args, **kwargs):
        found = real(*args, **kwargs)
        if len(diagnosed) < len(waits):
            found.findings.append(findings.Finding("input-bound", summary="a wait told, not measured", share=0.3))
        diagnosed.append(found)
        return found

    monkeypatch.setattr(run, "diagnose", told_a_wait)
    if len(waits) == 1:  # the second diagnosis measures no wait: the script passes
        grading.check_fixed_script(make_script, seed=3)
        assert len(diagnosed) == 2
    else:
        with pytest.raises(grading.GradingFailure, match="still finds input-bound in your fixed script .a wait told"):
            grading.check_fixed_script(make_script, seed=3)
        assert len(diagnosed) == 3


@pytest.mark.parametrize("pitfall", cs.PITFALLS)
def test_a_script_with_a_pitfall_left_fails_naming_it(pitfall):
    def left(x, y, **sizes):
        return make_script(x, y, keep=(pitfall,), **sizes)

    with pytest.raises(grading.GradingFailure, match=f"still finds {pitfall}"):
        grading.check_fixed_script(left, seed=3)


def test_the_chapters_own_script_does_not_count_as_a_fix_however_it_is_reached():
    def library(x, y, *, batch, width, seed):
        script = cs.make_training((), batch=batch, width=width, seed=seed, data=(x, y))
        return script.train, script.model

    def in_a_thread(x, y, **sizes):
        import threading

        made = []
        thread = threading.Thread(target=lambda: made.append(library(x, y, **sizes)))
        thread.start()
        thread.join()
        return made[0]

    def hook_removed(x, y, **sizes):
        import sys

        sys.setprofile(None)
        return library(x, y, **sizes)

    for answer, problem in (
        (library, "calls cs.make_training"),
        (in_a_thread, "calls cs.make_training"),
        (hook_removed, "profile hook"),
    ):
        with pytest.raises(grading.GradingFailure, match=problem):
            grading.check_fixed_script(answer, seed=3)


def test_what_a_fixed_script_returns_is_checked():
    with pytest.raises(grading.GradingFailure, match="expected a pair"):
        grading.check_fixed_script(lambda x, y, **sizes: make_script(x, y, **sizes)[0], seed=3)
