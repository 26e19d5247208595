"""tfperf.measure.profile_analysis: the input wait read from XProf's input-pipeline analyzer, on captures that the
TensorFlow Profiler writes here of chapter 4's own pipelines."""

import sys

import pytest

tf = pytest.importorskip("tensorflow")
pytest.importorskip("xprof")
from tfperf.experiments import tf_data as td  # noqa: E402
from tfperf.measure import profile_analysis, timing  # noqa: E402

FIXED = dict(parallel=True, vectorized=True, cache="before augment", prefetch=True)


def captured(tmp_path, run):
    """Run ``run()`` under the Profiler: its capture and its wall time."""
    tf.profiler.experimental.start(str(tmp_path))
    try:
        _, seconds = timing.stopwatch(run)
    finally:
        tf.profiler.experimental.stop()
    [capture] = tmp_path.rglob("*.xplane.pb")
    return capture, seconds


def chapter_4_steps(settings, steps=8):
    """``steps`` steps of chapter 4's loop (its simulated 2 ms device step) on its pipeline, after one epoch."""
    store = td.SimulatedStorage(64, latency=0.001, seed=0)
    batches = iter(td.build_pipeline(store, 8, **settings).repeat())
    for _ in range(8):  # one epoch: the cache is full
        next(batches)

    def run():
        for _ in range(steps):
            td.device_step(*next(batches))

    return run


def test_the_unfixed_pipeline_waits_most_of_the_time_and_the_fixed_one_hardly(tmp_path):
    unfixed = profile_analysis.input_wait(*captured(tmp_path / "unfixed", chapter_4_steps({})))
    fixed = profile_analysis.input_wait(*captured(tmp_path / "fixed", chapter_4_steps(FIXED)))
    assert unfixed.calls == fixed.calls == 8  # one GetNext a step
    assert unfixed.share >= profile_analysis.HIGHLY_INPUT_BOUND, unfixed
    assert fixed.share < profile_analysis.MODERATELY_INPUT_BOUND, fixed
    assert 0 < unfixed.seconds <= unfixed.wall_seconds
    # the sequential reads and maps are where the unfixed pipeline spends its time
    name, seconds = unfixed.slowest_stage()
    assert name.startswith(profile_analysis.ROOT + "::") and seconds > fixed.slowest_stage()[1]


def test_a_run_without_tf_data_waits_for_no_input(tmp_path):
    x = tf.ones([64, 64])
    wait = profile_analysis.input_wait(*captured(tmp_path, lambda: [tf.linalg.matmul(x, x) for _ in range(20)]))
    assert wait.calls == 0 and wait.seconds == 0 and wait.share == 0 and wait.slowest_stage() is None


def test_without_xprof_it_says_how_to_install_it(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "xprof.convert", None)  # as if the package were not installed
    with pytest.raises(profile_analysis.ProfilerAnalysisUnavailable, match="pip install xprof"):
        profile_analysis.tool_data(tmp_path / "none.xplane.pb", "input_pipeline_analyzer")
