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
    cs.plot_waterfall(fig, [Run("earlier"), Run("ladder", records=records)])  # a run without records draws nothing
    assert "in all" in fig.axes[0].get_title() and len(fig.axes[0].patches) == len(records)
    plt.close(fig)


def _rungs(ms_per_step, rounds=((0.97, 1.0, 1.03)), pitfalls=cs.PITFALLS):
    """Ladder records as fix_ladder returns them, with made-up times (4 steps, three rounds each)."""
    return [
        {"label": label, "steps": 4, "seconds": ms * 4e-3, "all_seconds": [ms * 4e-3 * f for f in rounds]}
        for (label, _), ms in zip(cs.ladder(pitfalls), ms_per_step)
    ]


def test_the_waterfall_keeps_every_run_side_by_side_and_explains_its_colours():
    """The panel's status line says "run again to compare": every run's ladder is drawn, each rung's bars side by
    side, with a legend for the colours and the runs."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from tfperf.lesson.plots import Run

    first = _rungs([40, 55, 6, 4, 3.2, 3.0])
    second = _rungs([30, 12, 5, 5.1], pitfalls=["eager-steps", "input-bound", "print-in-step"])
    fig = plt.figure()
    cs.plot_waterfall(fig, [Run("run 1", records=first), Run("run 2", records=second)])
    ax = fig.axes[0]
    assert len(ax.patches) == len(first) + len(second)
    assert [t.get_text() for t in ax.get_xticklabels()] == [label for label, _ in cs.ladder()]
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == ["as written", "faster", "slower", "run 1", "run 2"]
    colors = [matplotlib.colors.to_hex(p.get_facecolor()) for p in ax.patches]
    assert colors.count(matplotlib.colors.to_hex("tab:red")) == 2  # fix eager-steps in run 1, print-in-step in run 2
    plt.close(fig)


def test_a_fix_that_measured_slower_is_explained_from_its_rounds():
    slower_every_round = _rungs([40, 55, 6])  # fix eager-steps: 55 ms against 40, the rounds apart
    within_noise = _rungs([40, 6, 6.05], rounds=(0.9, 1.0, 1.1))  # fix retracing: 6.05 against 6, the rounds overlap
    assert cs.slower_fixes(slower_every_round) == [
        "fix eager-steps: 1.38x the time of the rung before it; slower in every round: it made this script slower "
        "here (a fix can uncover another cause)."
    ]
    (line,) = cs.slower_fixes(within_noise)
    assert line.startswith("fix retracing: 1.01x") and "the rounds' times overlap" in line
    assert cs.slower_fixes(_rungs([40, 20, 10])) == []


@pytest.mark.alone  # scripts without input-bound must not be named so: see tests/unit/grading/test_grading_diagnoses.py
def test_the_fit_variant_trains_the_loops_weights_and_is_diagnosed_as_its_pitfalls(tmp_path):
    """make_fit_training: the custom loop's script with fit (the same batches, loss, optimizer and learning rate step by
    step): the same weights after the same steps; as written it is named input-bound and one-step-per-call (whose
    evidence holds Keras's host reads of its logs: not the script's host-read-every-step), fixed nothing."""
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
    for pitfall, expected in zip(pitfalls, ({"input-bound", "one-step-per-call"}, set())):  # Keras's reads: its own
        script = cs.make_fit_training(pitfall, batch=512, width=256, records=4096)  # steps of a few ms
        found = diagnose(
            script.train, steps=32, warmup=16, card=None, profile_dir=tmp_path / str(len(pitfall)), profile_steps=16
        )
        assert set(found.codes()) == expected, found.report()
