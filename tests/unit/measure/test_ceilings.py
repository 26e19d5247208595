"""The device card measures real, positive figures on whatever device this is (the small size)."""

import pytest

tf = pytest.importorskip("tensorflow")
from tfperf.measure import ceilings  # noqa: E402
from tfperf.runtime import device  # noqa: E402


def test_a_matmul_sweep_counts_two_n_cubed_flops_per_product():
    rows = ceilings.matmul_sweep("float32", [64, 128])
    assert [r["n"] for r in rows] == [64, 128]
    for r in rows:
        assert r["seconds"] > 0
        assert r["flops"] == pytest.approx(2 * r["n"] ** 3 / r["seconds"])


def test_tf32_setting_is_restored_after_a_sweep():
    before = tf.config.experimental.tensor_float_32_execution_enabled()
    ceilings.matmul_sweep("tf32" if device.device_class() == "gpu" else "float32", [32])
    assert tf.config.experimental.tensor_float_32_execution_enabled() == before


def test_the_card_at_the_small_size():
    seen = []
    card = ceilings.measure("ci", progress=seen.append)
    names = {c.name for c in card.ceilings}
    assert {"matmul_float32", "memory_bandwidth", "eager_op", "function_call", "scalar_read"} <= names
    assert all(c.value > 0 for c in card.ceilings)
    assert card.device_class == device.device_class()
    assert ("copy_h2d" in names) == (card.device_class == "gpu")
    assert seen and seen[0].startswith("matmul")
    assert card.seconds > 0 and card.get("nope") is None
    assert card.to_dict()["ceilings"][0]["unit"] == "FLOP/s"


def _fake_measure(size, progress=None):
    """A card without the measuring (which the test above does for real): these tests are about the cache."""
    _fake_measure.calls += 1
    card = ceilings.Card(device="here", device_class=device.device_class(), tensorflow=tf.__version__)
    card.ceilings.append(ceilings.Ceiling("matmul_float32", 1e12 * _fake_measure.calls, "FLOP/s", "n=256"))
    card.seconds = 0.5
    return card


def test_the_card_is_kept_and_read_back_until_forced(tmp_path, monkeypatch):
    _fake_measure.calls = 0
    monkeypatch.setattr(ceilings, "measure", _fake_measure)
    first, cached = ceilings.card("ci", folder=tmp_path)
    assert cached is None and len(list(tmp_path.glob("*.json"))) == 1
    again, cached = ceilings.card("ci", folder=tmp_path)
    assert cached == ceilings.cache_file(tmp_path, "ci") and again == first and _fake_measure.calls == 1
    forced, cached = ceilings.card("ci", folder=tmp_path, force=True)
    assert cached is None and _fake_measure.calls == 2 and forced != first
    assert ceilings.card("full", folder=tmp_path)[1] is None  # another size, another card
    assert any(line.startswith("  matmul_float32") and "TFLOP/s" in line for line in forced.table())


def test_a_broken_cache_is_measured_again_and_an_unwritable_one_is_reported(tmp_path, monkeypatch):
    _fake_measure.calls = 0
    monkeypatch.setattr(ceilings, "measure", _fake_measure)
    path = ceilings.cache_file(tmp_path, "ci")
    path.write_text("{not json")
    notes = []
    card, cached = ceilings.card("ci", folder=tmp_path, progress=notes.append)
    assert cached is None and _fake_measure.calls == 1
    assert any("cannot be read" in n for n in notes)
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    notes.clear()
    card, cached = ceilings.card("ci", folder=blocked / "below", progress=notes.append)
    assert cached is None and any("could not be kept" in n for n in notes)


def test_a_measurement_as_a_share_of_the_cached_card_never_measures(tmp_path, monkeypatch):
    _fake_measure.calls = 0
    monkeypatch.setattr(ceilings, "measure", _fake_measure)
    assert ceilings.cached("ci", folder=tmp_path) is None and _fake_measure.calls == 0
    assert ceilings.share(1e9, "matmul_float32", None) == ""
    ceilings.card("ci", folder=tmp_path)  # measured once (1e12 FLOP/s, faked), and kept
    card = ceilings.cached("ci", folder=tmp_path)
    assert card is not None and _fake_measure.calls == 1
    assert ceilings.share(3e10, "matmul_float32", card) == "3% of the best float32 matmul rate on your device card"
    assert ceilings.share(1.8e7, "matmul_float32", card).startswith("0.0018% of")
    assert ceilings.share(5e11, "matmul_float32", card).startswith("50% of")
    assert ceilings.share(1.0, "copy_h2d", card) == ""  # not on this card


def _card_with(*rows):
    card = ceilings.Card(device="made up", device_class="gpu", tensorflow=tf.__version__)
    card.ceilings += [ceilings.Ceiling(name, value, unit) for name, value, unit in rows]
    return card


def test_float32_matmuls_run_at_the_tf32_row_where_tensorfloat_32_is_on():
    """TensorFlow runs float32 matmuls with TensorFloat-32 by default on Ampere and later: there the card's tf32 row
    is float32's roof (an H100's 51.5 against 384 TFLOP/s), for the shares, the floors and the roofline alike."""
    card = _card_with(("matmul_float32", 51.5e12, "FLOP/s"), ("matmul_tf32", 384e12, "FLOP/s"))
    assert ceilings.float32_roof(card, tf32=True) == "matmul_tf32"
    assert ceilings.float32_roof(card, tf32=False) == "matmul_float32"
    assert ceilings.float32_roof(_card_with(("matmul_float32", 1e12, "FLOP/s")), tf32=True) == "matmul_float32"
    before = tf.config.experimental.tensor_float_32_execution_enabled()
    try:
        tf.config.experimental.enable_tensor_float_32_execution(True)
        assert ceilings.share(192e12, "matmul_float32", card) == (
            "50% of the best float32 matmul rate (with TensorFloat-32, on here) on your device card"
        )
        assert ceilings.roofs(card)["matmul_float32"] == 384e12
        tf.config.experimental.enable_tensor_float_32_execution(False)
        assert ceilings.share(25.75e12, "matmul_float32", card).startswith("50% of the best float32 matmul rate on")
    finally:
        tf.config.experimental.enable_tensor_float_32_execution(before)


def test_a_step_is_compared_with_the_bandwidth_measured_at_its_tensors_size():
    card = _card_with(("memory_bandwidth", 20e9, "B/s"))
    card.sweeps["memory"] = [
        {"elements": 2**16, "tensor_bytes": 2**18, "bytes_per_second": 300e9, "how": "x"},
        {"elements": 2**20, "tensor_bytes": 2**22, "bytes_per_second": 100e9, "how": "x"},
        {"elements": 2**24, "tensor_bytes": 2**26, "bytes_per_second": 20e9, "how": "x"},
    ]
    assert ceilings.memory_roof(card, 2**22) == (100e9, "at tensors of 4 MiB")
    assert ceilings.memory_roof(card, 2**26)[0] == 20e9
    assert ceilings.memory_roof(card, 2**10)[0] == 300e9  # smaller than any measured: the nearest size
    assert ceilings.memory_roof(card)[0] == 20e9  # no size: the card's main-memory figure
    assert ceilings.share(50e9, "memory_bandwidth", card, tensor_bytes=2**22) == (
        "50% of the memory bandwidth on your device card at tensors of 4 MiB"
    )
