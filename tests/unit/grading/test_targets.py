import re

import pytest

from tfperf.grading import targets


def test_defaults_have_both_device_classes():
    table = targets.load()
    assert table
    for exercise, values in table.items():
        assert set(values) == {"cpu", "gpu"}, exercise
        assert all(v > 1.0 for v in values.values()), exercise


def test_every_exercise_in_the_notebooks_has_a_target(repo_root):
    used = set()
    for nb in (repo_root / "solutions").glob("*/*.ipynb"):
        used |= set(re.findall(r'exercise=\\"([\w.]+)\\"', nb.read_text()))
    assert used, "no throughput exercise found"
    assert used <= set(targets.load())


def test_instructor_override(tmp_path, monkeypatch):
    override = tmp_path / "targets.toml"
    override.write_text('["01_tensors.keep_data_on_device"]\ncpu = 1.75\n')
    monkeypatch.setenv(targets.ENV_VAR, str(override))
    assert targets.target_for("01_tensors.keep_data_on_device", "cpu") == 1.75
    assert (
        targets.target_for("01_tensors.keep_data_on_device", "gpu")
        == targets.load()["01_tensors.keep_data_on_device"]["gpu"]
    )


def test_unknown_exercise_is_a_clear_error():
    with pytest.raises(KeyError, match="No throughput target"):
        targets.target_for("99_nothing.here", "cpu")


def test_dumps_reads_back(tmp_path, monkeypatch):
    table = {"a.b": {"cpu": 2.5, "gpu": 4.0}}
    path = tmp_path / "t.toml"
    path.write_text(targets.dumps(table, header="measured\nby a test"))
    monkeypatch.setenv(targets.ENV_VAR, str(path))
    assert targets.load()["a.b"] == {"cpu": 2.5, "gpu": 4.0}
    assert path.read_text().startswith("# measured")
