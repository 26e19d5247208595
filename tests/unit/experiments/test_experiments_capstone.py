"""Chapter 8's script (tfperf.experiments.capstone): the pitfalls change the time, not the results; each of its
variants gets the code of its pitfall from tfperf diagnose, and the fixed script none; the fix ladder and its plot."""

import math
import tempfile

import pytest

tf = pytest.importorskip("tensorflow")
pytest.importorskip("xprof")
from tfperf.diagnosis.run import diagnose  # noqa: E402
from tfperf.experiments import capstone as cs  # noqa: E402


def test_every_pitfall_leaves_the_losses_as_they_are():
    with_all = cs.make_training(cs.PITFALLS, batch=32, width=64, records=256)
    fixed = cs.make_training([], batch=32, width=64, records=256)
    losses = [(with_all.train(4), fixed.train(4)) for _ in range(2)]
    for slow, fast in losses:
        assert math.isfinite(slow) and slow == pytest.approx(fast, rel=1e-5)
    assert cs.data_hash(with_all) == cs.data_hash(fixed)
    with pytest.raises(ValueError, match="unknown pitfalls"):
        cs.make_training(["slow"])


@pytest.mark.alone  # scripts without input-bound must not be named so: see tests/unit/grading/test_grading_diagnoses.py
@pytest.mark.parametrize("pitfall", [None, *cs.PITFALLS])
def test_each_variant_is_diagnosed_as_its_pitfall(pitfall):
    """The chapter's reference procedure: a warm-up, ten counted steps, the Profiler on ten more."""
    script = cs.variant(pitfall, seed=3)
    with tempfile.TemporaryDirectory() as logdir:
        found = diagnose(script.train, steps=10, warmup=3, card=None, profile_dir=logdir)
    planted = set(found.codes()) & set(cs.PITFALLS)
    assert planted == ({pitfall} if pitfall else set()), found.report()


def test_variants_differ_by_seed_and_fresh_ones_by_draw():
    assert cs.variant(None, 1).seed == cs.variant(None, 1).seed
    assert len({cs.variant("retracing", None).seed for _ in range(4)}) > 1


def test_the_ladder_fixes_one_pitfall_at_a_time_and_its_plot_draws_each_gain():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    assert [label for label, _ in cs.ladder()] == ["as written", *(f"fix {p}" for p in cs.PITFALLS)]
    assert [sorted(left) for _, left in cs.ladder(["input-bound", "retracing"])] == [
        ["input-bound", "retracing"],
        ["input-bound"],
        [],
    ]
    seen = []
    records = cs.fix_ladder(4, rounds=2, batch=32, width=64, progress=lambda done, total: seen.append(done))
    assert seen == [1, 2] and [r["label"] for r in records] == [label for label, _ in cs.ladder()]
    assert len({r["loss"] for r in records}) == 1  # the same training, whatever is fixed
    assert all(len(r["all_seconds"]) == 2 and r["examples_per_second"] > 0 for r in records)
    from tfperf.lesson.plots import Run

    fig = plt.figure()
    cs.plot_waterfall(fig, [Run("earlier"), Run("ladder", records=records)])  # the latest run
    assert "in all" in fig.axes[0].get_title() and len(fig.axes[0].patches) == len(records)
    plt.close(fig)


@pytest.mark.alone  # scripts without input-bound must not be named so: see tests/unit/grading/test_grading_diagnoses.py
def test_the_fit_variant_trains_the_loops_weights_and_is_diagnosed_as_its_pitfalls(tmp_path):
    """make_fit_training: the custom loop's script with fit (the same batches, loss, optimizer and learning rate step by
    step): the same weights after the same steps; as written it is named input-bound and one-step-per-call (with
    Keras's host read of its logs), fixed nothing."""
    import numpy as np

    data = cs.make_data(512, seed=4)
    loop = cs.make_training((), batch=32, width=64, seed=5, data=data)
    fit = cs.make_fit_training((), batch=32, width=64, seed=5, data=data)
    loop.train(32)
    fit.train(32)
    for ours, theirs in zip(loop.model.get_weights(), fit.model.get_weights()):
        np.testing.assert_allclose(ours, theirs, rtol=1e-4, atol=1e-5)
    with pytest.raises(ValueError, match="multiple of 16"):
        fit.train(5)

    pitfalls = (("input-bound", "one-step-per-call"), ())
    for pitfall, expected in zip(pitfalls, ({"input-bound", "one-step-per-call", "host-read-every-step"}, set())):
        script = cs.make_fit_training(pitfall, batch=512, width=256, records=4096)  # steps of a few ms
        found = diagnose(
            script.train, steps=32, warmup=16, card=None, profile_dir=tmp_path / str(len(pitfall)), profile_steps=16
        )
        assert set(found.codes()) == expected, found.report()
