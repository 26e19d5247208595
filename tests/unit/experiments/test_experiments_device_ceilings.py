"""Chapter 6's experiments: the floors and regime a card gives a step, measured steps, the roofline."""

import pytest

tf = pytest.importorskip("tensorflow")
from tfperf.experiments import device_ceilings as dc  # noqa: E402
from tfperf.lesson import plots  # noqa: E402
from tfperf.measure import ceilings  # noqa: E402


def made_up_card() -> ceilings.Card:
    """A card with round figures (1 TFLOP/s, 100 GB/s, 100 µs a call), so that the floors are easy to check."""
    return ceilings.Card(
        device="made up",
        device_class="cpu",
        tensorflow=tf.__version__,
        ceilings=[
            ceilings.Ceiling("matmul_float32", 1e12, "FLOP/s"),
            ceilings.Ceiling("memory_bandwidth", 1e11, "B/s"),
            ceilings.Ceiling("function_call", 1e-4, "s"),
        ],
    )


def test_the_highest_floor_names_the_regime():
    card = made_up_card()
    assert dc.floors(card, 1e9, 1e6) == pytest.approx({"overhead": 1e-4, "memory": 1e-5, "compute": 1e-3})
    assert dc.regime(card, 1e9, 1e6) == "compute"
    assert dc.regime(card, 1e6, 1e8) == "memory"
    assert dc.regime(card, 10.0, 100.0) == "overhead"


def test_a_card_without_a_ceiling_says_how_to_measure_it():
    card = made_up_card()
    card.ceilings = card.ceilings[:1]
    with pytest.raises(ValueError, match="python -m tfperf ceilings --force"):
        dc.floors(card, 1.0, 1.0)


def test_measured_steps_carry_their_bytes_floors_and_regime(monkeypatch):
    monkeypatch.setattr(dc, "step_sizes", lambda: {"tiny add": 16, "elementwise chain": 4096, "matmul": 64})
    card = made_up_card()
    seen = []
    records = dc.measure_steps(card, xla=True, repeats=2, progress=lambda done, total: seen.append((done, total)))
    assert [r["step"] for r in records] == ["tiny add", "elementwise chain", "matmul"]
    assert seen[-1] == (3, 3)
    chain = records[1]
    assert chain["bytes"] == 2 * 4 * 4096 + 8 and chain["bytes_read_as"] == "as compiled by XLA"
    assert chain["flops"] == dc.CHAIN_OPS_PER_ELEMENT * 4096
    for r in records:
        assert r["seconds"] > 0 and r["regime"] == dc.regime(card, r["flops"], r["bytes"])
        assert r["flops_per_s"] == pytest.approx(r["flops"] / r["seconds"])
    assert "-bound" in dc.describe(records[0], card)


def test_the_example_chain_computes_gelu_of_the_scaled_shifted_input():
    x = tf.constant([-1.0, 0.0, 2.0])
    expected = tf.nn.gelu(x * 1.5 - 0.25, approximate=True)
    assert dc.gelu_chain(x, 1.5, -0.25).numpy() == pytest.approx(expected.numpy(), rel=1e-5, abs=1e-6)


def test_the_roofline_draws_the_roofs_and_one_marker_per_step():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    card = made_up_card()
    records = [
        {"step": "matmul", "xla": False, "intensity": 50.0, "flops_per_s": 5e11, "regime": "compute"},
        {"step": "elementwise chain", "xla": True, "intensity": 0.1, "flops_per_s": 5e9, "regime": "memory"},
    ]
    fig = plt.figure()
    dc.plot_roofline(fig, [plots.Run("r", records=records)], card)
    ax = fig.axes[0]
    labels = [line.get_label() for line in ax.get_lines()]
    assert labels[:2] == ["memory roof, memory: 100 GB/s", "compute roof: float32 matmuls, 1e+03 GFLOP/s"]
    assert "matmul: compute-bound" in labels and "elementwise chain (XLA): memory-bound" in labels
    roof = ax.get_lines()[0].get_ydata()
    assert max(roof) == pytest.approx(1e12)  # flat at the matmul rate
    plt.close(fig)

    card.sweeps["memory"] = [  # a cache-aware roofline: one memory roof per tensor size the card measured
        {"elements": n, "tensor_bytes": 4 * n, "bytes_per_second": rate, "how": "x"}
        for n, rate in ((2**16, 4e11), (2**18, 3e11), (2**20, 2e11), (2**22, 1e11))
    ]
    fig = plt.figure()
    dc.plot_roofline(fig, [plots.Run("r", records=records)], card)
    labels = [line.get_label() for line in fig.axes[0].get_lines()]
    assert labels[:3] == [
        "memory roof, tensors of 256 KiB: 400 GB/s",
        "memory roof, tensors of 4 MiB: 200 GB/s",
        "memory roof, tensors of 16 MiB: 100 GB/s",
    ]
    plt.close(fig)


def test_memory_by_batch_reads_the_weights_and_grows_with_the_batch():
    records = dc.memory_by_batch([16, 256], width=64, depth=2, dtypes=("float32", "bfloat16"))
    assert [(r["dtype"], r["batch"]) for r in records] == [
        ("float32", 16),
        ("float32", 256),
        ("bfloat16", 16),
        ("bfloat16", 256),
    ]
    weights = (32 * 64 + 64 + 64 * 64 + 64 + 64 * 10 + 10) * 4  # chapter 2's MLP: 32 features, 10 classes
    assert {r["weights"] for r in records} == {weights}
    for r in records:
        assert r["parameters"] >= r["weights"] + r["batch"] * 32 * 4
        assert r["temporaries_per_sample"] == pytest.approx(r["temporaries"] / r["batch"])
    assert records[1]["temporaries"] > records[0]["temporaries"]


def test_the_largest_batch_follows_the_line_through_the_two_largest_measured():
    records = [
        {"dtype": "float32", "batch": 64, "total": 1000 + 64 * 10},
        {"dtype": "float32", "batch": 256, "total": 1000 + 256 * 10},
        {"dtype": "bfloat16", "batch": 256, "total": 500},
    ]
    assert dc.largest_batch(records, "float32", 1000 + 10 * 5000) == 5000
    assert dc.largest_batch(records, "float32", 900) is None  # not even the fixed part fits
    assert dc.largest_batch(records, "bfloat16", 10**9) is None  # one batch measured: no line


def test_the_memory_plot_draws_both_readings_per_dtype():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    records = dc.memory_by_batch([16, 64], width=32, depth=1, dtypes=("float32",))
    fig = plt.figure()
    dc.plot_memory(fig, [plots.Run("r", records=records)])
    labels = [line.get_label() for line in fig.axes[0].get_lines()]
    assert any("total, float32" in label for label in labels)
    assert any("temporaries, float32" in label for label in labels)
    plt.close(fig)


def test_gradient_accumulation_is_the_whole_batch_update():
    assert dc.accumulation_agrees(width=64, depth=2, batch=256, pieces=4) < 1e-5


def test_a_step_over_its_budget_runs_out_of_memory_and_its_fixes_run():
    """Chapter 6, section 5: under a budget of 90% of the whole batch's plan, the whole batch raises
    ResourceExhaustedError in its own process; half the batch and gradient accumulation run."""
    width, depth, batch = 512, 2, 2048
    plan = dc.memory_by_batch([batch], width=width, depth=depth, dtypes=("float32",))[0]
    budget = 0.9 * (plan["temporaries"] + plan["results"]) / 1e6
    outcomes = {
        way: dc.under_budget(way, width=width, depth=depth, batch=batch, budget_mb=budget)
        for way in ("whole batch", "half the batch", "gradient accumulation")
    }
    assert not outcomes["whole batch"]["ran"] and "ResourceExhaustedError" in outcomes["whole batch"]["error"], outcomes
    assert outcomes["half the batch"]["ran"] and outcomes["gradient accumulation"]["ran"], outcomes
    assert outcomes["gradient accumulation"]["planned_mb"] < outcomes["half the batch"]["planned_mb"] < budget


def test_an_unknown_way_is_refused():
    with pytest.raises(ValueError, match="choose from"):
        dc.under_budget("smaller model", width=8, depth=1, batch=8, budget_mb=1)


def test_predicting_by_batches_holds_a_fraction_of_one_whole_batch():
    """Chapter 6, section 5: the same outputs, and predict by batches of 256 holds well under a third of what one
    call on every row holds (here at 8192 rows, width 1024: 12.3 MB against 69.2 and 138.8 MB)."""
    whole, on_batch, batched = dc.predict_memory(16384, width=512)
    assert all(r["agrees"] < 1e-4 for r in (whole, on_batch, batched))
    assert batched["held"] < on_batch["held"] / 3 and batched["held"] < whole["held"] / 3, (whole, on_batch, batched)


def test_a_batch_that_does_not_split_evenly_is_refused():
    x, y = tf.ones([10, 32]), tf.zeros([10], tf.int32)
    with pytest.raises(ValueError, match="equal micro-batches"):
        dc.accumulated_step([], x, y, 0.1, pieces=4)
    with pytest.raises(ValueError, match="equal micro-batches"):
        dc.under_budget("gradient accumulation", width=8, depth=1, batch=10, budget_mb=1, pieces=4)
