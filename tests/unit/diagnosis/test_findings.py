"""The findings' prices and ranking (tfperf.diagnosis.findings): made-up counts, no TensorFlow run."""

from tfperf.diagnosis.findings import KERAS_SLICES, NOISE_FLOOR, Counts, MemoryGrowth, UnitCosts, decide
from tfperf.measure.profile_analysis import CpuUse, InputWait


def counts(**changed) -> Counts:
    base = dict(
        steps=20,
        seconds=0.2,  # 10 ms a step
        host_reads=0,
        read_kinds={},
        uploads=0,
        upload_kinds={},
        keras_calls=0,
        function_call=None,
        matmul_dtypes={},
        low_precision=None,
        traces=0,
        traced={},
        pipeline_traces=0,
        eager_ops=0,
        graph_calls=20,
        printed_lines=0,
        costs=UnitCosts(host_read=20e-6, eager_op=30e-6, function_call=300e-6, print_line=5e-6),
    )
    return Counts(**{**base, **changed})


def test_findings_are_ranked_by_their_share_of_a_step_and_cheap_ones_are_checked_apart():
    found = decide(
        counts(traces=20, traced={"step": 20}, trace_seconds=0.12, host_reads=20, read_kinds={"float()": 20})
    )
    assert [(f.code, f.worth) for f in found] == [("retracing", True), ("host-read-every-step", False)]
    assert abs(found[0].share - 0.6) < 1e-9 and found[1].share < NOISE_FLOOR
    assert "on a GPU each one would also wait" in found[1].note  # a CPU: said what it would do on a GPU


def test_uploads_cost_nothing_without_a_device_and_their_copies_where_there_is_one():
    on_cpu = decide(counts(uploads=20, upload_kinds={"x": 20}, upload_bytes=20 * 8 << 20))
    assert [(f.code, f.worth, f.share) for f in on_cpu] == [("per-batch-upload", False, 0.0)]
    gpu_costs = UnitCosts(
        host_read=20e-6, eager_op=30e-6, function_call=300e-6, print_line=5e-6, h2d_bytes_per_second=8e9
    )
    on_gpu = decide(
        counts(uploads=20, upload_kinds={"x": 20}, upload_bytes=20 * 8 << 20, device_class="gpu", costs=gpu_costs)
    )
    (upload,) = on_gpu
    assert upload.worth and abs(upload.share - (8 << 20) / 8e9 / 0.01) < 1e-6  # 8 MiB a step at 8 GB/s, of 10 ms


def test_a_printed_tensor_is_priced_by_its_characters_not_as_one_line():
    """A line a step of 100 characters, or of a whole tensor's 80,000: the same count of lines, priced apart."""
    costs = UnitCosts(host_read=20e-6, eager_op=30e-6, function_call=300e-6, print_line=5e-6, print_char=50e-9)
    (short,) = decide(counts(printed_lines=20, printed_chars=20 * 100, costs=costs))
    (whole,) = decide(counts(printed_lines=20, printed_chars=20 * 80_000, costs=costs))
    assert short.code == whole.code == "print-in-step"
    assert not short.worth and abs(short.share - (5e-6 + 100 * 50e-9) / 0.01) < 1e-9
    assert whole.worth and abs(whole.share - (5e-6 + 80_000 * 50e-9) / 0.01) < 1e-9  # 4 ms of a 10 ms step


def test_low_precision_is_advised_only_where_the_products_are_a_large_share_of_a_step():
    card_says = UnitCosts(
        host_read=20e-6,
        eager_op=30e-6,
        function_call=300e-6,
        print_line=5e-6,
        float32_flops_per_second=1e12,
        low_precision=("bfloat16", 4.0),
    )
    big = decide(
        counts(matmul_dtypes={"float32": 3}, low_precision=("bfloat16", 4.0), matmul_flops=8e9, costs=card_says)
    )
    small = decide(
        counts(matmul_dtypes={"float32": 3}, low_precision=("bfloat16", 4.0), matmul_flops=1e6, costs=card_says)
    )
    unknown = decide(counts(matmul_dtypes={"float32": 3}, low_precision=("bfloat16", 4.0), costs=card_says))
    assert big[0].worth and abs(big[0].share - 0.8 * 0.75) < 1e-9  # 8 ms of 10 at float32, 3/4 of it saved
    assert not small[0].worth and not unknown[0].worth and "not known" in unknown[0].note


def test_memory_growth_needs_growth_in_both_halves():
    steady = MemoryGrowth(resident_bytes=0, tensors=20, halves=[(0, 10), (0, 10)])
    filled_once = MemoryGrowth(resident_bytes=0, tensors=20, halves=[(0, 20), (0, 0)])
    allocator_only = MemoryGrowth(resident_bytes=40 << 20, tensors=0, halves=[(20 << 20, 0), (20 << 20, 0)])
    assert [f.code for f in decide(counts(memory=steady))] == ["memory-growth"]
    assert decide(counts(memory=filled_once)) == []
    assert decide(counts(memory=allocator_only)) == []  # resident memory alone: an allocator's moves
    assert [f.code for f in decide(counts(memory=allocator_only, traces=20, traced={"f": 20}, trace_seconds=0.1))] == [
        "retracing",
        "memory-growth",
    ]


def test_waiting_for_batches_keras_slices_from_arrays_is_checked_not_named():
    """fit on in-memory arrays feeds its steps from a pipeline of Keras's own: a wait there (a batch of one, a busy
    machine) has no stage of the script's to fix; the same wait on the script's own dataset is a problem."""
    wait = InputWait(
        seconds=0.003, step_seconds=0.009, calls=5, stages={"Iterator::Root::Prefetch::ParallelMapV2": 5e-3}
    )
    on_arrays = decide(counts(input_wait=wait, keras_inputs={"ArrayDataAdapter": 1}))
    assert [(f.code, f.worth, f.note) for f in on_arrays] == [("input-bound", False, KERAS_SLICES)]
    on_its_dataset = decide(counts(input_wait=wait, keras_inputs={"TFDatasetAdapter": 1}))
    assert [(f.code, f.worth, f.note) for f in on_its_dataset] == [("input-bound", True, "")]
    in_a_loop = decide(counts(input_wait=wait))
    assert [(f.code, f.worth) for f in in_a_loop] == [("input-bound", True)]


def test_a_wait_measured_while_other_processes_filled_the_cores_is_checked_not_named():
    """Other processes held a core of two while the steps were profiled: the pipeline's threads may have waited for
    a core. The same wait on a machine left to the script, or on a big machine with room left, is named."""
    wait = dict(seconds=0.004, step_seconds=0.01, calls=5, stages={"Iterator::Root::Prefetch::ParallelMapV2": 5e-3})
    loaded = decide(counts(input_wait=InputWait(**wait, cpu=CpuUse(cores=2, busy=1.95, others=1.0))))
    assert [(f.code, f.worth) for f in loaded] == [("input-bound", False)]
    assert "other processes kept 1.0 of the machine's 2 cores busy" in loaded[0].note
    for cpu in (CpuUse(cores=2, busy=1.9, others=0.1), CpuUse(cores=16, busy=3.0, others=2.0), None):
        found = decide(counts(input_wait=InputWait(**wait, cpu=cpu)))
        assert [(f.code, f.worth, f.note) for f in found] == [("input-bound", True, "")], cpu


def test_a_wait_longer_than_the_others_share_of_the_cores_is_named_under_their_load():
    """Other processes held 1.2 of 2 cores (60%): a wait of 40% of the steps may be theirs, one of 94% cannot be."""
    cpu = CpuUse(cores=2, busy=2.0, others=1.2)
    stages = {"Iterator::Root::Prefetch::FlatMap[0]::Generator": 0.02}
    some = decide(counts(input_wait=InputWait(seconds=0.004, step_seconds=0.01, calls=5, stages=stages, cpu=cpu)))
    assert [(f.code, f.worth) for f in some] == [("input-bound", False)]
    assert "for up to 60% of the time" in some[0].note
    most = decide(counts(input_wait=InputWait(seconds=0.0094, step_seconds=0.01, calls=5, stages=stages, cpu=cpu)))
    assert [(f.code, f.worth, f.note) for f in most] == [("input-bound", True, "")]
    assert abs(most[0].share - 0.94) < 1e-9


def test_a_report_whose_only_cost_is_set_aside_says_so_rather_than_no_cost():
    from tfperf.diagnosis.run import Diagnosis

    wait = InputWait(seconds=0.004, step_seconds=0.01, calls=5, cpu=CpuUse(cores=2, busy=1.95, others=1.0))
    found = decide(counts(input_wait=wait))
    assert found[0].aside == "other processes filled the cores"
    capture = "/tmp/logdir/plugins/profile/run/host.xplane.pb"
    report = Diagnosis(found, "a CPU", 2, counts(input_wait=wait), capture, None, keep_profile=False).report()
    assert "input-bound (40.0% of a step, set aside: other processes filled the cores)" in report, report
    assert "no cause costs as much as" not in report, report


def test_a_pipeline_that_takes_the_cores_beside_a_cpu_step_is_named_though_the_step_hardly_waits():
    """The step waited 1% of its time, but the pipeline, taken alone, cost 12 ms of CPU a batch: 60% of two cores
    over a 10 ms step. On a GPU the step's work is the device's: its wait alone decides there."""
    from tfperf.measure.pipeline_alone import PipelineAlone

    wait = InputWait(seconds=0.0001, step_seconds=0.01, calls=5)
    heavy = PipelineAlone(batches=20, seconds=0.16, cpu_seconds=0.24, taken=40, cores=2)
    found = decide(counts(input_wait=wait, pipeline_alone=heavy))
    assert [(f.code, f.worth) for f in found] == [("input-bound", True)]
    assert abs(found[0].share - 0.6) < 1e-9
    assert "12.0 ms of CPU a batch" in found[0].summary and "hardly waited" in found[0].summary
    light = PipelineAlone(batches=20, seconds=0.02, cpu_seconds=0.06, taken=40, cores=2)  # 15% of the cores
    assert decide(counts(input_wait=wait, pipeline_alone=light)) == []
    assert decide(counts(input_wait=wait, pipeline_alone=heavy, device_class="gpu")) == []
    # its CPU time is the pipeline's own work, whatever load was beside it: not set aside as a wait would be
    loaded = InputWait(seconds=0.004, step_seconds=0.01, calls=5, cpu=CpuUse(cores=2, busy=1.95, others=1.0))
    found = decide(counts(input_wait=loaded, pipeline_alone=heavy))
    assert [(f.code, f.worth, f.aside) for f in found] == [("input-bound", True, "")]


def test_a_wait_for_stages_below_the_pipelines_cache_is_the_first_epochs_only():
    """The slowest stage runs below cache(): later epochs read the cache, so the early steps' wait is set aside."""
    below = "Iterator::Root::Prefetch::PaddedBatchV2::Shuffle::MemoryCacheImpl::FlatMap[0]::Generator"
    wait = InputWait(seconds=0.07, step_seconds=0.17, calls=5, stages={below: 0.16, "Iterator::Root": 0.07})
    found = decide(counts(input_wait=wait))
    assert [(f.code, f.worth, f.aside) for f in found] == [("input-bound", False, "the first epoch fills a cache")]
    assert "slowest stage (Generator) runs below the pipeline's cache()" in found[0].note
    above = "Iterator::Root::Prefetch::ParallelMapV2"  # the work above a cache, or no cache: named
    wait = InputWait(seconds=0.07, step_seconds=0.17, calls=5, stages={above: 0.16, "Iterator::Root::Prefetch": 0.01})
    assert [(f.code, f.worth) for f in decide(counts(input_wait=wait))] == [("input-bound", True)]


def test_a_container_explains_resident_growth_only_where_it_holds_a_share_of_it():
    """A history of one float a step grew beside 1.4 MB a step of resident memory: it does not explain it. A list of
    a 400 KB array a step does."""
    import numpy as np

    from tfperf.diagnosis.run import _added_bytes

    floats, arrays = [0.5] * 30, [np.ones(50_000)] * 30  # 10 added in the measured steps
    grew = dict(resident_bytes=14_000_000, tensors=0, halves=[(7_000_000, 0), (7_000_000, 0)])
    small = MemoryGrowth(**grew, holders=["history (+10 items)"], held_bytes=_added_bytes(floats, 20))
    large = MemoryGrowth(**grew, holders=["kept (+10 items)"], held_bytes=_added_bytes(arrays, 20))
    assert _added_bytes(floats, 20) < 1000 and _added_bytes(arrays, 20) == 4_000_000
    assert not small.grows_steadily(10) and large.grows_steadily(10)
    assert small.grows_steadily(10, explained=True)  # graphs that accumulated explain it, whatever the list holds
    assert MemoryGrowth(**grew, holders=["history (+10 items)"]).grows_steadily(10)  # what it holds not read
