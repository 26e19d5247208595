"""Chapter 5 experiments: every strategy trains the same weights; the records have what the plots need."""

import statistics

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")

from tests.cpu_only import run_on_cpu  # noqa: E402
from tfperf.experiments import gpu_sync  # noqa: E402
from tfperf.lesson.plots import Run  # noqa: E402
from tfperf.measure import host_syncs  # noqa: E402
from tfperf.runtime import device  # noqa: E402


def test_report_steps():
    assert gpu_sync.report_steps(10, 4) == [3, 7, 9]
    assert gpu_sync.report_steps(3, 1) == [0, 1, 2]


def test_strategies_train_the_same_weights_with_the_expected_reads():
    w0, xs, ys = gpu_sync.make_problem(23)
    weights, reads = {}, {}
    for strategy in gpu_sync.STRATEGIES:
        reports = []
        loop = gpu_sync.loop_for(strategy, w0, xs, ys, 5, lambda s, v: reports.append(s))
        loop()
        reports.clear()
        with host_syncs.counting() as syncs:
            final = loop()
        weights[strategy], reads[strategy] = final.numpy(), syncs.count
        assert reports == (list(range(23)) if strategy == "read every step" else [4, 9, 14, 19, 22])
    first = weights[gpu_sync.STRATEGIES[0]]
    assert all(np.allclose(w, first, rtol=1e-5, atol=1e-6) for w in weights.values())
    assert reads == {
        "read every step": 23,
        "read every N steps": 5,
        "sum on device, read every N": 5,
        "N steps per tf.function": 5,
    }
    with pytest.raises(ValueError):
        gpu_sync.loop_for("nope", w0, xs, ys, 5)


def _steps_eagerly(w0, xs, ys):
    w = tf.Variable(w0)
    for i in range(int(xs.shape[0])):
        gpu_sync.train_step(w, xs[i], ys[i])
    return w.numpy()


def _steps_of_its_own(w0, xs, ys):
    """train_step's arithmetic written out: what the count of runs does not see."""
    w = tf.Variable(w0)
    for i in range(int(xs.shape[0])):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(tf.matmul(xs[i], w) - ys[i]))
        w.assign_sub(gpu_sync.LEARNING_RATE * tape.gradient(loss, w))
    return w.numpy()


def test_marked_runs_match_only_the_same_runs_in_the_same_order():
    w0, xs, ys = gpu_sync.make_problem(40, seed=3)
    unmarked = _steps_eagerly(w0, xs, ys)
    assert np.array_equal(unmarked, _steps_of_its_own(w0, xs, ys))  # no marks: the step exactly as written
    seed = gpu_sync.draw_marks()
    with gpu_sync.marked(seed) as first:
        eagerly = _steps_eagerly(w0, xs, ys)
    with gpu_sync.marked(seed) as second:
        w = tf.Variable(w0)
        gpu_sync.train_steps(w, xs, ys)  # the runs inside one graph, in order
        in_a_graph = w.numpy()
    with gpu_sync.marked(seed) as on_a_copy:  # the same runs, each given the batch and a copy of the weights
        w, copy = tf.Variable(w0), tf.Variable(w0)
        for i in range(int(xs.shape[0])):
            copy.assign(w)
            gpu_sync.train_step(copy, xs[i], ys[i])
            w.assign(copy)
    with gpu_sync.marked(seed) as on_a_probe:
        probe = tf.Variable(tf.zeros([1, 1]))
        for _run in range(int(xs.shape[0])):
            gpu_sync.train_step(probe, tf.ones([1, 1]), tf.ones([1, 1]))
    assert first.same_given(second.given) and first.same_given(on_a_copy.given)
    assert not first.same_given(on_a_probe.given)
    with gpu_sync.marked(seed):
        own = _steps_of_its_own(w0, xs, ys)
    with gpu_sync.marked(gpu_sync.draw_marks()):
        other_marks = _steps_eagerly(w0, xs, ys)
    assert np.allclose(eagerly, in_a_graph, rtol=1e-6, atol=1e-7)
    for other in (unmarked, own, other_marks):
        assert not np.allclose(other, eagerly, rtol=1e-4, atol=1e-5)
    assert np.array_equal(_steps_eagerly(w0, xs, ys), unmarked)  # the block over: no marks again
    assert np.array_equal(gpu_sync.marks_of(seed), gpu_sync.marks_of(seed))
    assert np.all(np.abs(gpu_sync.marks_of(seed) - 1) <= gpu_sync.MARK_SIZE)


def test_unit_marks_train_as_unmarked_and_the_tally_of_work_tells_a_probe_from_the_runs():
    """Marks of 1 (``UNIT_MARKS``) leave each step as written and still sum what the runs were given; the tally a speed
    check keeps around each timed call (``work_done``, each run weighted from the call's seed) grows by the same for the
    same runs on the same data, and by other sums for as many runs on a probe, or runs whose plain sum was made to
    match, or the same runs under another seed."""
    w0, xs, ys = gpu_sync.make_problem(12, seed=5)
    assert np.array_equal(gpu_sync.marks_of(gpu_sync.UNIT_MARKS), np.ones(gpu_sync.MARKED_RUNS, np.float32))
    with gpu_sync.marked(gpu_sync.UNIT_MARKS) as unit:
        under_unit_marks = _steps_eagerly(w0, xs, ys)
    assert np.array_equal(under_unit_marks, _steps_eagerly(w0, xs, ys))
    with gpu_sync.marked(gpu_sync.UNIT_MARKS) as on_a_probe:
        probe = tf.Variable(tf.zeros([1, 1]))
        for _run in range(int(xs.shape[0])):
            gpu_sync.train_step(probe, tf.ones([1, 1]), tf.ones([1, 1]))
    assert unit.given is not None and not unit.same_given(on_a_probe.given)

    def tallied(work, seed=7):
        with gpu_sync.work_done(seed) as tally:
            work()
        return tally.added()

    def in_a_graph():
        gpu_sync.train_steps(tf.Variable(w0), xs, ys)

    def probe_runs():
        for _run in range(12):
            gpu_sync.train_step(probe, tf.ones([1, 1]), tf.ones([1, 1]))

    def lump():  # 12 runs whose plain sum is the training's: 11 given zeros, one given all of it
        zeros = (tf.zeros([1, 1]), tf.zeros([1, 1]))
        for _run in range(11):
            probe.assign(-tf.ones([1, 1]))  # sum of w plus its size: 0
            gpu_sync.train_step(probe, *zeros)
        probe.assign(tf.zeros([1, 1]))
        gpu_sync.train_step(probe, tf.constant([[plain - 1.0]]), tf.zeros([1, 1]))

    with gpu_sync.work_done(gpu_sync.UNIT_MARKS) as unweighted:
        _steps_eagerly(w0, xs, ys)
    runs, given = list(unweighted.added())
    plain = unweighted.added()[given]
    eagerly, graphed = tallied(lambda: _steps_eagerly(w0, xs, ys)), tallied(in_a_graph)
    assert np.array_equal(_steps_eagerly(w0, xs, ys), under_unit_marks)  # a tally leaves the steps as they are
    assert eagerly[runs] == graphed[runs] == tallied(probe_runs)[runs] == tallied(lump)[runs] == 12
    assert np.isclose(eagerly[given], graphed[given], rtol=1e-5, atol=1e-3)
    assert np.isclose(plain, unit.given, rtol=1e-5, atol=1e-3)
    assert np.isclose(tallied(lump, gpu_sync.UNIT_MARKS)[given], plain, rtol=1e-5, atol=1e-3)  # forges a plain sum
    drawn = gpu_sync.unit_marks()  # marks of 1 whose sum is weighted: the steps as unmarked, the lump refused
    with gpu_sync.marked(drawn) as honest:
        assert np.array_equal(_steps_eagerly(w0, xs, ys), under_unit_marks)
    with gpu_sync.marked(drawn) as again:
        _steps_eagerly(w0, xs, ys)
    with gpu_sync.marked(drawn) as forged:
        lump()
    assert honest.same_given(again.given) and not honest.same_given(forged.given)
    for other in (tallied(probe_runs), tallied(lump), tallied(lambda: _steps_eagerly(w0, xs, ys), seed=8)):
        assert not np.isclose(eagerly[given], other[given], rtol=1e-5, atol=1e-3)


def test_sync_costs_records_and_plot():
    import matplotlib.pyplot as plt

    records = gpu_sync.sync_costs(
        gpu_sync.STRATEGIES[::3], steps=20, every=5, repeats=1, min_time=0.01, busy_seconds=0.05
    )
    assert [r["host_syncs"] for r in records] == [20, 4]
    assert all(r["timeline"] and r["ms_per_step"] > 0 for r in records)
    fig = plt.figure()
    gpu_sync.plot_sync_costs(fig, [Run("a", {}, records)])
    plt.close(fig)


def test_epoch_times_show_retracing():
    steady = gpu_sync.epoch_times("tensor argument", epochs=2, steps=3)
    retracing = gpu_sync.epoch_times("Python float argument (retraces)", epochs=2, steps=3)
    assert [r["traces"] for r in steady] == [1, 1]
    assert [r["traces"] for r in retracing] == [3, 6]


def test_feed_strategies_agree_and_count_uploads():
    w0, x, y = gpu_sync.make_numpy_data(4, batch=8, features=4)
    results = [gpu_sync.feed_loop_for(s, w0, x, y, 8)().numpy() for s in gpu_sync.FEED_STRATEGIES]
    assert all(np.allclose(r, results[0], rtol=1e-5, atol=1e-6) for r in results)
    records = gpu_sync.feed_costs(4, batch=8, features=4, repeats=1, min_time=0.001)
    assert [r["uploads"] for r in records] == [8, 2, 10]  # tf.data copies every batch, ahead of time
    assert "prefetch_to_device" in records[2]["uploads_how"]


def test_dispatch_vs_work_returns_both_times():
    r = gpu_sync.dispatch_vs_work(64, ops=2, asynchronous=False)
    assert r["dispatch_ms"] > 0 and r["work_ms"] > 0


@pytest.fixture(scope="module")
def asynchronous_on_cpu():
    """Asynchronous eager execution on the CPU path (GPUs hidden): what chapter 5 shows without a GPU."""
    return run_on_cpu("""
        import json
        from tfperf.experiments import gpu_sync
        print(json.dumps({"dispatch": gpu_sync.dispatch_vs_work(400, ops=10, asynchronous=True),
                          "waits": [gpu_sync.attribute_waits(1000, asynchronous=True) for _ in range(3)],
                          "synchronous_waits": sorted(gpu_sync.attribute_waits(64, asynchronous=False))}))
    """)


def test_asynchronous_dispatch_returns_before_the_work_is_done(asynchronous_on_cpu):
    r = asynchronous_on_cpu["dispatch"]
    assert r["dispatch_ms"] < r["work_ms"] / 2  # queued, not run; device.sync() waited for the work


def test_shape_waits_in_asynchronous_mode_and_dtype_does_not(asynchronous_on_cpu):
    """The median of three tries: one read of a clock pair can lose the wait to a preemption on a loaded
    machine (seen once in a clean run: 0.07 ms for a 600x600 product, the other core grading)."""
    tries = asynchronous_on_cpu["waits"]
    shape, dtype = (statistics.median(t[name] for t in tries) for name in ("shape", "dtype"))
    assert shape > 5 * max(dtype, 0.05), tries
    assert asynchronous_on_cpu["synchronous_waits"] == ["device", "dtype", "shape"]


def test_feed_pipeline_yields_every_batch():
    w0, x, y = gpu_sync.make_numpy_data(3, batch=8)
    batches = list(gpu_sync.feed_pipeline(x, y, 8))
    assert len(batches) == 3 and batches[0][0].shape == (8, 32)


def test_memory_probe_reports_the_gpu_when_there_is_one():
    probe = gpu_sync.memory_reserved(growth=True)
    if device.device_class() == "cpu":
        assert probe is None
    else:  # the probe put 4 MB of tensors on GPU 0
        assert probe["in_use_mb"] >= 4.0


_MODEL_LOOPS = """
import json
from tfperf.experiments import gpu_sync
print(json.dumps({kind: gpu_sync.models_in_a_loop(kind, models=6) for kind in gpu_sync.MODEL_LOOP_KINDS[2:]}))
"""


@pytest.fixture(scope="module")
def model_loops():
    """In a fresh process: in this one, memory that earlier tests freed absorbs the first models' growth (seen in a
    full run: +1.6 MB over 5 trained models, against +4 MB a model in a fresh process)."""
    import json
    import os
    import subprocess
    import sys

    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="")
    done = subprocess.run([sys.executable, "-c", _MODEL_LOOPS], env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("kind", ["built and trained", "built and trained, clear_session"])
def test_each_model_trained_in_a_loop_leaves_a_registered_gradient_and_memory(model_loops, kind):
    """What chapter 5 section 8 says of TF 2.21 with Keras 3: every trained model's traced step registers a gradient
    function for the whole process, clear_session or not, and the process holds more after each model (about 4 MB
    a model here; 1 MB a model asked)."""
    rs = model_loops[kind]
    assert rs[-1]["registered_gradients"] - rs[0]["registered_gradients"] >= len(rs) - 1, rs
    assert rs[-1]["held_mb"] > 1.0 * (len(rs) - 1), rs


def test_one_model_trained_again_registers_nothing_more_and_stays_flat(model_loops):
    rs = model_loops["one model trained again, weights reset"]
    assert rs[-1]["registered_gradients"] == rs[0]["registered_gradients"], rs
    assert max(r["held_mb"] for r in rs) < 1.0, rs


def test_the_model_loop_plot_draws_a_line_per_kind(model_loops):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig = plt.figure()
    gpu_sync.plot_models_in_a_loop(fig, [Run("here", records=[r for rs in model_loops.values() for r in rs])])
    assert len(fig.axes[0].get_lines()) == len(model_loops)
    plt.close(fig)
