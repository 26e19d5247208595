"""No chapter shows a share above the device's own ceilings: a card measured here, then every step whose rate a
chapter compares with a card, measured in the same process, at the small size (what CI runs) and as the chapters
measure them. A share above the card's noise (ceilings.NOISE) would say that the card does not bound the step."""

import os

import pytest

from tfperf.measure import ceilings

tf = pytest.importorskip("tensorflow")
pytestmark = [pytest.mark.slow, pytest.mark.alone]  # a card measured under load is lower than the steps


def _better(cards: list) -> dict:
    return max(cards, key=lambda c: c.get("matmul_float32").value)


@pytest.fixture(scope="module")
def card():
    """The better of two cards (by the float32 matmul rate, the roof every step here is compared with): a card is
    the best the device did, and the first one measured in this process, right after the round trip's grading, fell
    up to 10% short of a step measured minutes later on a 2-core Intel Xeon (docs/measurements-grading.md)."""
    os.environ.setdefault("TFPERF_SIZE", "ci")
    return _better([ceilings.measure("ci") for _ in range(2)])


def above(shares: list[str]) -> list[str]:
    return [s for s in shares if s.startswith("above") or "does not bound" in s]


def shown_under_the_card(card, shares) -> list[str]:
    """``shares(card)``, the shares a chapter shows; where one is above the card, the card (two, the better kept) and
    the steps are measured once more: on the 2-core Intel Xeon both cards of the fixture, measured as the round trip's
    processes ended, once fell 30% short of a matmul measured after them, and their call overhead 1.6 times over a
    tiny step's."""
    shown = shares(card)
    if above(shown):
        shown = shares(_better([ceilings.measure("ci") for _ in range(2)]))
    return shown


def test_chapter_six_steps_and_fusion_stay_under_the_card(card):
    from tfperf.experiments import device_ceilings as dc
    from tfperf.measure import bytes_moved, timing

    def shares(card):
        shown = []
        for xla in (False, True):
            shown += [dc.describe(step, card) for step in dc.measure_steps(card, xla=xla)]
        n = dc.step_sizes()["elementwise chain"]
        args = (tf.random.uniform((n,), 0.5, 1.5), tf.constant(1.1), tf.constant(0.1))
        for xla in (False, True):
            fn = tf.function(dc.gelu_chain, jit_compile=xla)
            moved, _ = bytes_moved.bytes_moved(fn, args)
            seconds = timing.measure(lambda fn=fn: fn(*args), repeats=5, warmup=2).median
            shown.append(ceilings.share(moved / seconds, "memory_bandwidth", card, tensor_bytes=4 * n))
        return shown

    shown = shown_under_the_card(card, shares)
    assert all(shown) and above(shown) == [], shown


def test_chapter_two_and_three_and_eight_fastest_steps_stay_under_the_card(card):
    from tfperf.experiments import capstone as cs
    from tfperf.experiments import eager_vs_graph as eg
    from tfperf.experiments import keras_fit
    from tfperf.measure import timing

    def shares(card):
        shown = []
        for side in (4, 512):  # chapter 2, section 1: one eager matmul
            t = tf.ones([side, side])
            rate = 2 * side**3 / timing.measure(lambda t=t: tf.matmul(t, t)).median
            shown.append(ceilings.share(rate, "matmul_float32", card))
        records = eg.step_throughput([16, 64], [32], min_time=0.01, repeats=1)
        shown.append(ceilings.fastest_share(records, card, lambda r: r["mode"]))
        records = keras_fit.fit_throughput((32,), (1, 4), width=64, steps=16, epochs=2)
        shown.append(ceilings.fastest_share(records, card, lambda r: str(r["steps_per_execution"])))
        ladder = cs.fix_ladder(4, rounds=2, batch=32, width=64)
        shown.append(ceilings.fastest_share(ladder[-1:], card, lambda r: "the fixed script"))
        return shown

    shown = shown_under_the_card(card, shares)
    assert all(shown) and above(shown) == [], shown


def test_a_rate_above_the_card_is_said_to_be_unbounded_by_it_never_a_share_above_100(card):
    roof = card.get(ceilings.float32_roof(card)).value
    assert ceilings.share(roof * 1.05, "matmul_float32", card).endswith(
        "reached (within the few percent the card's own figures vary)"
    )
    over = ceilings.share(roof * 2, "matmul_float32", card)
    assert over.startswith("above the best float32 matmul rate") and "does not bound" in over and "%" not in over
