"""grading.check_diagnosis and grading.check_recorded_run (chapter 8): the reference answers pass; answers that
guess, skip the warm-up or the Profiler, or record a run that is not the one they ran, fail."""

import tempfile
import time

import pytest

tf = pytest.importorskip("tensorflow")
pytest.importorskip("xprof")
import tfperf  # noqa: E402
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


@pytest.mark.parametrize("pitfall", ["input-bound", "retracing"])
def test_the_reference_procedure_passes_on_fixed_and_fresh_scripts(pitfall):
    grading.check_diagnosis(reference, pitfall, seed=11)
    grading.check_diagnosis(reference, pitfall, seed=None)


def test_a_guess_fails_on_the_script_without_a_pitfall():
    with pytest.raises(grading.GradingFailure, match="does not have"):
        grading.check_diagnosis(lambda train: {"input-bound"}, "input-bound", seed=11)
    with pytest.raises(grading.GradingFailure, match="does not have"):
        grading.check_diagnosis(lambda train: set(cs.PITFALLS), "retracing", seed=11)


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
