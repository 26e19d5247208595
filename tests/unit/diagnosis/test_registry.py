"""The run registry (tfperf.diagnosis.registry) in SQLite and in a real PostgreSQL server, and ``python -m tfperf runs``."""

import json
import math

import numpy as np
import pytest

from tests.classgrading.pg_server import postgres  # noqa: F401 (the fixture)
from tfperf import cli
from tfperf.diagnosis import registry
from tfperf.diagnosis.registry import Registry, Run, data_hash

DEVICE = "CPU only: a test machine, 2 cores"


def sqlite_url(tmp_path):
    return f"sqlite:///{tmp_path / 'runs.sqlite'}"


def record_one(runs: Registry, name="baseline", examples=640, metrics=None):
    with runs.record(name, hyperparameters={"batch": 64, "lr": 0.01}, data_hash=data_hash(np.arange(4))) as run:
        run.framework, run.device = "TensorFlow 2.x", DEVICE
        run.examples = examples
        run.metrics = {"loss": 0.25} if metrics is None else metrics
    return run


def test_a_recorded_run_is_read_back_whole_with_its_throughput(tmp_path):
    runs = Registry(sqlite_url(tmp_path))
    run = record_one(runs)
    [stored] = Registry(sqlite_url(tmp_path)).runs()  # a new connection reads what the first one wrote
    assert stored == run
    assert stored.status == "finished" and stored.error is None
    assert stored.hyperparameters == {"batch": 64, "lr": 0.01} and stored.metrics == {"loss": 0.25}
    assert stored.duration_s > 0 and math.isclose(stored.throughput, 640 / stored.duration_s)
    assert stored.missing() == []


def test_a_run_that_fails_is_kept_with_its_error_and_the_error_is_raised(tmp_path):
    runs = Registry(sqlite_url(tmp_path))
    with pytest.raises(ZeroDivisionError), runs.record("broken", hyperparameters={"batch": 1}) as run:
        run.device = DEVICE
        1 / 0  # noqa: B018
    [stored] = runs.runs("broken")
    assert stored.status == "failed" and stored.error.startswith("ZeroDivisionError")
    assert "examples" in stored.missing() and "metrics" in stored.missing()


def test_missing_names_every_empty_field_and_a_metric_that_is_not_a_number(tmp_path):
    assert Run("empty").missing() == list(Run.REQUIRED)
    runs = Registry(sqlite_url(tmp_path))
    nan = record_one(runs, "nan", metrics={"loss": float("nan")})
    assert nan.missing() == ["metrics"]
    assert record_one(runs, "no examples", examples=None).missing() == ["examples", "throughput"]


def test_runs_are_listed_oldest_first_and_by_name(tmp_path):
    runs = Registry(sqlite_url(tmp_path))
    first, second, third = (record_one(runs, name) for name in ("baseline", "fixed", "baseline"))
    assert [r.id for r in runs.runs()] == [first.id, second.id, third.id]
    assert [r.id for r in runs.runs("baseline")] == [first.id, third.id]
    table = runs.table()
    assert "baseline" in table and "fixed" in table and DEVICE in table


def test_the_data_hash_changes_with_values_dtype_and_shape():
    x = np.arange(12, dtype=np.float32)
    assert data_hash(x) == data_hash(x.copy())
    others = [x + 1, x.astype(np.float64), x.reshape(3, 4)]
    assert len({data_hash(x), *map(data_hash, others)}) == 4
    assert data_hash(x, x) != data_hash(x)


def test_the_command_lists_the_runs_as_text_and_json(tmp_path, capsys):
    url = sqlite_url(tmp_path)
    record_one(Registry(url), "fixed")
    assert cli.main(["runs", "--db-url", url]) == 0
    assert "fixed" in capsys.readouterr().out
    assert cli.main(["runs", "--db-url", url, "--json"]) == 0
    [listed] = json.loads(capsys.readouterr().out)
    assert listed["name"] == "fixed" and listed["metrics"] == {"loss": 0.25}


def test_the_command_says_briefly_when_it_cannot_open_the_database(tmp_path, capsys):
    url = "postgresql+psycopg://nobody:wrong@127.0.0.1:9/none"
    assert cli.main(["runs", "--db-url", url]) == 2
    err = capsys.readouterr().err
    assert err.startswith("tfperf runs: cannot read") and len(err.splitlines()) == 1
    assert "wrong" not in err  # the password


def test_the_default_database_is_sqlite_in_the_data_folder_or_the_environment_s(tmp_path, monkeypatch):
    monkeypatch.delenv(registry.URL_ENV_VAR, raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    assert registry.default_url() == f"sqlite:///{tmp_path}/tfperf-course/runs.sqlite"
    monkeypatch.setenv(registry.URL_ENV_VAR, "sqlite:///elsewhere.sqlite")
    assert registry.default_url() == "sqlite:///elsewhere.sqlite"


def test_the_device_and_framework_are_filled_in_from_tensorflow(tmp_path):
    tf = pytest.importorskip("tensorflow")
    runs = Registry(sqlite_url(tmp_path))
    with runs.record("filled", hyperparameters={}) as run:
        run.examples = 1
    [stored] = runs.runs()
    assert f"TensorFlow {tf.__version__}" in stored.framework and stored.device.startswith("TensorFlow")


def test_the_registry_works_the_same_in_postgresql(postgres):  # noqa: F811
    url = postgres.create_database("runs")
    run = record_one(Registry(url), "on postgres")
    [stored] = Registry(url).runs()
    assert stored == run and stored.missing() == []
