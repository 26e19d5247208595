"""tfperf.measure.profile_analysis: the input wait read from XProf's input-pipeline analyzer, on captures that the
TensorFlow Profiler writes here of chapter 4's own pipelines."""

import os
import sys

import pytest

tf = pytest.importorskip("tensorflow")
pytest.importorskip("xprof")
from tfperf.experiments import tf_data as td  # noqa: E402
from tfperf.measure import profile_analysis  # noqa: E402

FIXED = dict(parallel=True, vectorized=True, cache="before augment", prefetch=True)


def captured(tmp_path, run):
    return profile_analysis.capture(run, tmp_path)


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
    """The fixed pipeline's capture that waited least of up to three: a load from outside only adds waiting (beside
    the suite's other part, on a slow 2-core machine, one capture of it waited 21% of its steps, 2026-11-27)."""
    unfixed = profile_analysis.input_wait(*captured(tmp_path / "unfixed", chapter_4_steps({})))
    fixed = None
    for attempt in range(3):
        found = profile_analysis.input_wait(*captured(tmp_path / f"fixed-{attempt}", chapter_4_steps(FIXED)))
        fixed = found if fixed is None or found.share < fixed.share else fixed
        if fixed.share < profile_analysis.HIGHLY_INPUT_BOUND and unfixed.share > 3 * fixed.share:
            break
    assert unfixed.calls == fixed.calls == 8  # one GetNext a step
    assert unfixed.share >= profile_analysis.HIGHLY_INPUT_BOUND, unfixed
    assert fixed.share < profile_analysis.HIGHLY_INPUT_BOUND and unfixed.share > 3 * fixed.share, (unfixed, fixed)
    assert 0 < unfixed.seconds <= unfixed.step_seconds
    # XProf's own step-time breakdown of the marked step says the same, in its words
    assert unfixed.conclusion.startswith("Your program is HIGHLY input-bound"), unfixed.conclusion
    # the sequential reads and maps are where the unfixed pipeline spends its time
    name, seconds = unfixed.slowest_stage()
    assert name.startswith(profile_analysis.ROOT + "::") and seconds > fixed.slowest_stage()[1]


def test_two_captures_in_one_folder_each_keep_their_own_analysis(tmp_path):
    """The Profiler names a capture's folder by its second: a second capture right after the first gets a folder of its
    own (else it overwrote the first, and XProf read its analysis cached beside it)."""
    first, first_seconds = captured(tmp_path, chapter_4_steps({}))
    x = tf.ones([64, 64])
    second, second_seconds = captured(tmp_path, lambda: [tf.linalg.matmul(x, x) for _ in range(20)])
    assert first != second and first.is_file() and second.is_file()
    assert profile_analysis.input_wait(first, first_seconds).calls == 8
    assert profile_analysis.input_wait(second, second_seconds).calls == 0


def test_a_run_without_tf_data_waits_for_no_input(tmp_path):
    x = tf.ones([64, 64])
    wait = profile_analysis.input_wait(*captured(tmp_path, lambda: [tf.linalg.matmul(x, x) for _ in range(20)]))
    assert wait.calls == 0 and wait.seconds == 0 and wait.share == 0 and wait.slowest_stage() is None
    assert wait.step_seconds > 0  # the marked step


def test_the_capture_is_one_marked_step_that_xprofs_overview_page_reads(tmp_path):
    """Without a step marker XProf's step-time breakdown is empty ("No step marker observed")."""
    capture, seconds = profile_analysis.capture(lambda: tf.reduce_sum(tf.ones([8, 8])), tmp_path)
    assert capture.parent.parent == tmp_path / "plugins" / "profile" and seconds > 0
    summary = profile_analysis.step_summary(profile_analysis.tool_data(capture, "input_pipeline_analyzer"))
    assert float(summary["steptime_ms_average"]) > 0 and summary["input_conclusion"]
    overview = profile_analysis.tool_data(capture, "overview_page")
    summaries = [t["p"] for t in overview if "steptime_ms_average" in t.get("p", {})]
    assert summaries and float(summaries[0]["steptime_ms_average"]) > 0


def test_without_xprof_it_says_how_to_install_it(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "xprof.convert", None)  # as if the package were not installed
    with pytest.raises(profile_analysis.ProfilerAnalysisUnavailable, match="pip install xprof"):
        profile_analysis.tool_data(tmp_path / "none.xplane.pb", "input_pipeline_analyzer")


def test_the_slowest_stage_is_one_that_does_the_pipelines_work():
    """A prefetch that tf.data added waits there for the stage below it, which runs on another thread: the slowest
    stage named is the user's own (a generator, a map)."""
    wait = profile_analysis.InputWait(
        seconds=0.9,
        step_seconds=1.0,
        calls=5,
        stages={
            "Iterator::Root": 0.001,
            "Iterator::Root::Prefetch": 0.85,
            "Iterator::Root::Prefetch::BatchV2::FlatMap[0]::Generator": 0.6,
            "Iterator::Root::Prefetch::BatchV2": 0.01,
        },
    )
    assert wait.slowest_stage() == ("Iterator::Root::Prefetch::BatchV2::FlatMap[0]::Generator", 0.6)


@pytest.mark.alone  # it counts other processes' CPU: another part's tests running beside it are counted too
def test_the_cpu_other_processes_use_during_a_span_is_measured():
    """A busy process beside this one, not its child: its core's worth is counted as another process's; this
    process's own spin, and its child's, are not."""
    import subprocess
    import time

    from tests.conftest import busy_elsewhere, stop_busy

    start = profile_analysis.cpu_counters()
    if start is None or len(os.sched_getaffinity(0)) < 2:
        pytest.skip("no /proc/stat here, or a single core")
    others = busy_elsewhere(1, 30)
    child = subprocess.Popen(
        [sys.executable, "-c", "import time\nend = time.time() + 1.5\nwhile time.time() < end: pass"]
    )
    try:
        end = time.time() + 1.0
        while time.time() < end:  # this process, busy too
            pass
        cpu = profile_analysis.cpu_use_since(start)
    finally:
        stop_busy(others)
        child.wait()
    # three busy processes: on 2 cores each gets about two thirds of one, the one elsewhere counted as others'
    assert cpu is not None and cpu.busy >= 1.6, cpu
    assert 0.4 <= cpu.others <= 1.15 and cpu.busy - cpu.others >= 1.0, cpu  # this process's and its child's: its own
    assert profile_analysis.cpu_use_since(profile_analysis.cpu_counters()) is None  # too short a span to read
