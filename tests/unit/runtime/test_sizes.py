import pytest

from tfperf.runtime import sizes


def test_default_is_full_scale(monkeypatch):
    monkeypatch.delenv(sizes.ENV_VAR, raising=False)
    assert sizes.course_size() == "full"
    assert sizes.pick(full=100, ci=1) == 100


def test_ci_switch_picks_small_values(monkeypatch):
    monkeypatch.setenv(sizes.ENV_VAR, "CI")
    assert sizes.pick(full=100, ci=1) == 1


def test_unknown_size_is_a_clear_error(monkeypatch):
    monkeypatch.setenv(sizes.ENV_VAR, "huge")
    with pytest.raises(ValueError, match="full, ci"):
        sizes.course_size()


def test_ladder():
    assert sizes.ladder(0.01, 0.2) == pytest.approx([0.01, 0.04, 0.16])
    assert sizes.ladder(0.01, 0.001) == [0.01]
    assert sizes.ladder(16, 1024) == [16, 64, 256, 1024]


def test_ladder_to_ends_at_the_chosen_largest_size():
    assert sizes.ladder_to(0.2, 0.01) == pytest.approx([0.0125, 0.05, 0.2])
    assert sizes.ladder_to(64, 0.01)[-1] == 64 and min(sizes.ladder_to(64, 0.01)) >= 0.01
    assert sizes.ladder_to(0.005, 0.01) == [0.005]
