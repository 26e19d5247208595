"""Chapter 4 experiments and the library modules behind them: small sizes, fast."""

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")

from tfperf.experiments import tf_data  # noqa: E402
from tfperf.lesson.plots import Run  # noqa: E402
from tfperf.measure import dataset_graph, pipeline_timeline  # noqa: E402


def test_every_setting_delivers_what_the_naive_pipeline_delivers_except_cache_after_augment():
    store = tf_data.SimulatedStorage(20, latency=0.0, seed=3)
    naive = tf_data.train_epochs(tf_data.build_pipeline(store, 4), 2, step=lambda k, f: None)
    assert sorted(naive[0][0].numpy().tolist()) == list(range(20))
    assert not np.allclose(naive[0][1].numpy(), naive[1][1].numpy()), "the augmentation must differ per epoch"
    for settings in (
        dict(parallel=True),
        dict(vectorized=True),
        dict(parallel=True, cache="before augment", prefetch=True),
        dict(parallel=True, vectorized=True, cache="before augment"),
    ):
        got = tf_data.train_epochs(tf_data.build_pipeline(store, 4, **settings), 2, step=lambda k, f: None)
        assert tf_data.same_epochs(got, naive), settings
    wrong = tf_data.train_epochs(tf_data.build_pipeline(store, 4, cache="after augment"), 2, step=lambda k, f: None)
    assert not tf_data.same_epochs(wrong, naive)
    with pytest.raises(ValueError):
        tf_data.build_pipeline(store, 4, cache="somewhere")


def test_cache_reads_each_record_once_and_stages_are_seen():
    store = tf_data.SimulatedStorage(12, latency=0.0)
    ds = tf_data.build_pipeline(store, 4, parallel=True, cache="before augment", prefetch=True)
    tf_data.train_epochs(ds, 3, step=lambda k, f: None)
    assert store.reads == 12
    chain = dataset_graph.stages(ds)
    kinds = [s.kind for s in chain]
    assert kinds[-1] == "prefetch" and "cache" in kinds
    read_at = dataset_graph.stages_calling(chain, store.reader)
    assert len(read_at) == 1 and dataset_graph.runs_in_parallel(chain[read_at[0]])
    assert (
        dataset_graph.stages_calling(chain, tf_data.decode)[0]
        < kinds.index("cache")
        < dataset_graph.stages_calling(chain, tf_data.augment)[0]
    )
    naive = dataset_graph.stages(tf_data.build_pipeline(store, 4))
    assert any(s.python_generator for s in naive)
    assert not any(dataset_graph.runs_in_parallel(s) for s in naive if s.kind == "map" and s.stateful)


def test_rewritten_ops_show_what_tf_data_runs_and_synchronous_maps_stay_sequential():
    stateless = tf.data.Dataset.range(8).map(lambda x: x * 2)
    assert dataset_graph.rewritten_ops(stateless)[:2] == ["RangeDataset", "ParallelMapDatasetV2"]
    assert dataset_graph.runs_in_parallel(dataset_graph.stages(stateless)[-1])
    kept = tf.data.Dataset.range(8).map(lambda x: x * 2, synchronous=True)
    assert dataset_graph.rewritten_ops(kept)[:2] == ["RangeDataset", "MapDataset"]
    assert dataset_graph.rewritten_ops(kept)[-1] == "PrefetchDataset"  # a synchronous end gets a prefetch injected
    assert not dataset_graph.runs_in_parallel(dataset_graph.stages(kept)[-1])


def test_the_naive_pipeline_is_sequential_and_its_end_is_fused_not_prefetched():
    store = tf_data.SimulatedStorage(8, latency=0.0)
    naive = dataset_graph.rewritten_ops(tf_data.build_pipeline(store, 4))
    assert "ParallelMapDatasetV2" not in naive  # map_parallelization would otherwise parallelize decode
    assert "MapAndBatchDataset" in naive and "PrefetchDataset" not in naive  # map_and_batch_fusion, no injection
    assert "ParallelMapDatasetV2" in dataset_graph.rewritten_ops(tf_data.build_pipeline(store, 4, parallel=True))


def test_parallel_map_gain_and_threads():
    sleep = tf_data.parallel_map_gain(tf_data.WORK_KINDS[0], elements=16, ms=2.0, repeats=1)
    assert sleep["sequential_s"] >= 16 * 0.002 and sleep["speedup"] > 0
    assert tf_data.threads_in_flight(4, elements=16, latency=0.002) <= 4
    with pytest.raises(ValueError):
        tf_data.parallel_map_gain("nothing")


def test_pipeline_runs_records_timeline_and_plot():
    import matplotlib.pyplot as plt

    rows = tf_data.pipeline_runs(16, 4, 2, parallel=True, cache="before augment", prefetch=True, latency=0.0)
    assert [r["epoch"] for r in rows] == [1, 2] and rows[0]["same_as_naive"]
    timeline = rows[0]["timeline"]
    assert len(timeline.elements) == 8 and timeline.threads() >= 1
    assert all(e["ready"] <= e["delivered"] + 1e-3 for e in timeline.elements)
    fig = plt.figure()
    tf_data.plot_pipeline_runs(fig, [Run("a", records=rows)])
    plt.close(fig)

    # five runs of the panel: every pipeline's label is written level, inside the figure, none on another
    fig = plt.figure(figsize=(14, 4.5), layout="constrained")
    long_names = [dict(r, pipeline="parallel + vectorized + cache before augment + prefetch") for r in rows]
    tf_data.plot_pipeline_runs(fig, [Run(f"run {i + 1}", records=long_names) for i in range(5)])
    fig.canvas.draw()
    ax_bars = fig.axes[0]
    labels = [t for t in ax_bars.get_yticklabels() if t.get_text()]
    assert len(labels) == 5 and all(t.get_rotation() == 0 for t in labels)
    boxes = [t.get_window_extent() for t in labels]
    figure_box = fig.bbox
    assert all(b.x0 >= figure_box.x0 and b.x1 <= figure_box.x1 for b in boxes)
    assert not any(a.overlaps(b) for i, a in enumerate(boxes) for b in boxes[i + 1 :])
    plt.close(fig)


def test_input_bound_scenarios():
    ds = tf_data.sleeping_pipeline(3, 1.0)
    assert len(list(ds)) == 3
    tf_data.sleeping_step(1.0)(next(iter(ds)))
    assert tf_data.bound_by(2.0, 1.0) == "input-bound" and tf_data.bound_by(1.0, 2.0) == "compute-bound"


def test_recorder_times_and_spans():
    recorder = pipeline_timeline.Recorder()

    def slow(x):
        return x

    timed = recorder.timed(slow, "slow")
    ds = tf.data.Dataset.range(6).map(lambda x: tf.py_function(timed, [x], tf.int64)).prefetch(2)
    seen = []
    timeline = recorder.run(ds, step=lambda e: seen.append(int(e)), epochs=2)
    assert seen == list(range(6)) * 2
    assert len(timeline.elements) == 12 and len(timeline.epochs) == 2
    assert timeline.max_overlap("slow") >= 1 and len(timeline.spans) == 12
    assert timeline.waiting >= 0 and timeline.stepping >= 0 and "12 elements" in timeline.summary()
    assert pipeline_timeline._pack([{"start": 0, "end": 2}, {"start": 1, "end": 3}, {"start": 2, "end": 4}]) == [
        0,
        1,
        0,
    ]


def test_storage_measures_its_waits_and_its_latency_is_fixed():
    store = tf_data.SimulatedStorage(4, latency=0.002)
    for key in range(4):
        store.read_now(key)
    assert store.reads == 4 and store.seconds_waited >= 4 * 0.002 * 0.9
    with pytest.raises(AttributeError):
        store.latency = 0.0
    store.reset_counts()
    assert store.reads == 0 and store.seconds_waited == 0.0


def test_storage_counters_are_out_of_reach_of_its_attributes():
    store = tf_data.SimulatedStorage(3, latency=0.0)
    for name in ("reads", "seconds_waited", "max_in_flight"):
        with pytest.raises(AttributeError):
            setattr(store, name, 10**6)
    store._reads = store._seconds_waited = 10**6  # what a learner's answer might try (the screen flags it too)
    store.read_now(0)
    assert store.reads == 1 and store.seconds_waited < 1.0


def test_prefetch_overlap_measures_three_variants():
    rows = tf_data.prefetch_overlap(batches=3, pipeline_ms=1.0, step_ms=1.0, repeats=1)
    assert [r["variant"] for r in rows] == list(tf_data.PREFETCH_VARIANTS)
    assert all(r["both_s"] >= 3 * 0.001 and r["pipeline_s"] >= 3 * 0.001 for r in rows)


def test_fit_runs_times_epochs_and_samples_the_device():
    import matplotlib.pyplot as plt

    rows = tf_data.fit_runs(16, 8, 2, [dict(), dict(parallel=True, cache="before augment", prefetch=True)], latency=0.0)
    assert [r["pipeline"] for r in rows] == ["naive", "parallel + cache before augment + prefetch"]
    assert all(len(r["epoch_seconds"]) == 2 and r["source"] in ("cpu", "nvml") for r in rows)
    fig = plt.figure()
    tf_data.plot_fit_runs(fig, [Run("a", records=rows)])
    plt.close(fig)


def test_vectorized_map_gain_times_both_orders_on_the_same_values():
    for fn in (tf_data.decode, tf_data.augment):
        r = tf_data.vectorized_map_gain(fn, 64, 16, repeats=1)
        assert r["same_values"] and r["function"] == fn.__name__
        assert r["per_element_s"] > 0 and r["vectorized_s"] > 0
        assert r["speedup"] == pytest.approx(r["per_element_s"] / r["vectorized_s"])


def _two_runs_with_a_timeline():
    from tfperf.lesson import plots
    from tfperf.measure.pipeline_timeline import Timeline

    names = ["naive", "parallel", "parallel + cache before augment", "parallel + cache before augment + prefetch"]
    runs = []
    for label, scale in (("run 1", 1.0), ("run 2", 1.3)):
        records = [
            {"pipeline": name, "epoch": epoch, "elements_per_s": scale * (200 + 400 * i) * (1 + epoch * (i > 1))}
            for i, name in enumerate(names)
            for epoch in range(3)
        ]
        elements = [
            {"epoch": e, "index": k, "ready": e * 0.5 + k * 0.1 - 0.02, "requested": e * 0.5 + k * 0.1}
            | {"delivered": e * 0.5 + k * 0.1 + 0.05, "step_end": e * 0.5 + k * 0.1 + 0.09}
            for e in range(2)
            for k in range(4)
        ]
        records[-1]["timeline"] = Timeline(elements=elements, epochs=[(0.0, 0.45), (0.5, 0.95)])
        runs.append(plots.Run(label, records=records))
    return runs


def test_pipeline_plot_legends_hide_no_bar_note_and_name_every_line():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from tfperf.lesson import plots

    fig = plt.figure(figsize=plots.FIGSIZE, layout="constrained")
    tf_data.plot_pipeline_runs(fig, _two_runs_with_a_timeline())
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    ax_bars, ax_time = fig.axes[:2]
    legend = ax_bars.get_legend().get_window_extent(renderer)
    notes = [t for t in ax_bars.texts if t.get_text()]
    assert len(notes) == 16
    assert [t.get_text() for t in notes if t.get_window_extent(renderer).overlaps(legend)] == []
    entries = [t.get_text() for t in ax_time.get_legend().get_texts()]
    assert "a new epoch starts" in entries  # the dotted lines
    assert "ready until received" in entries  # the grey lines
    plt.close(fig)


def test_the_epoch_variable_lives_on_the_cpu_where_tf_data_runs():
    # On a GPU machine a variable made without a device goes to the GPU, and tf.data then cannot
    # serialize a pipeline that reads it (seen on an H100); on every machine it must be on the CPU.
    assert tf_data.epoch_variable().device.endswith("CPU:0")
