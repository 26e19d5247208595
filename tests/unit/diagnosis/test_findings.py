"""The findings' prices and ranking (tfperf.diagnosis.findings): made-up counts, no TensorFlow run."""

from tfperf.diagnosis.findings import NOISE_FLOOR, Counts, MemoryGrowth, UnitCosts, decide


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
