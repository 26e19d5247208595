"""Predictions: committed, read back beside the measurement, summarized; a skipped one breaks nothing."""

import math

import matplotlib

from tfperf.lesson import predictions

matplotlib.use("Agg")


def test_a_prediction_is_saved_read_back_and_plotted(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv(predictions.STORE_ENV_VAR, str(tmp_path / "p.jsonl"))
    three_to_ten = predictions.SPEEDUPS[2]
    predictions.commit("02_eager_vs_graph.function_speedup", three_to_ten)
    assert predictions.latest_prediction("02_eager_vs_graph.function_speedup") == three_to_ten
    predictions.reveal("02_eager_vs_graph.function_speedup", 4.2)
    assert "You predicted 3x to 10x; measured here: 4.2x, inside your range." in capsys.readouterr().out
    predictions.commit("01_tensors.copy_cost", predictions.SPEEDUPS[4])
    predictions.reveal("01_tensors.copy_cost", 10.0)
    assert "1.0 powers of ten outside your range" in capsys.readouterr().out
    figure = predictions.summary()
    table = capsys.readouterr().out
    assert "01_tensors" in table and "02_eager_vs_graph" in table
    assert [line.get_ydata().tolist() for line in figure.axes[0].get_lines()[:2]] == [[1.0], [0.0]]


def test_a_skipped_prediction_saves_nothing(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv(predictions.STORE_ENV_VAR, str(tmp_path / "p.jsonl"))
    predictions.reveal("03_keras_fit.steps_per_execution", 2.0)
    assert "No prediction was committed" in capsys.readouterr().out
    assert predictions.rows() == [] and predictions.summary() is None
    (tmp_path / "p.jsonl").write_text("not json\n")
    assert predictions.rows() == []


def test_the_store_is_the_learners_workspace(tmp_path, monkeypatch):
    monkeypatch.delenv(predictions.STORE_ENV_VAR, raising=False)
    chapter = tmp_path / "my-work" / "01_tensors"
    chapter.mkdir(parents=True)
    monkeypatch.chdir(chapter)
    assert predictions.store() == tmp_path / "my-work" / "predictions.jsonl"
    monkeypatch.chdir(tmp_path)
    assert predictions.store() == tmp_path / "predictions.jsonl"


def test_ranges_and_the_widget(tmp_path, monkeypatch):
    monkeypatch.setenv(predictions.STORE_ENV_VAR, str(tmp_path / "p.jsonl"))
    more = predictions.SPEEDUPS[-1]
    assert more.error_decades(1000) == 0 and math.isclose(more.error_decades(10), 1.0)
    panel = predictions.ask("01_tensors.copy_cost", "How much faster?")
    options, button, status = panel.children[1:]
    button.click()
    assert "Choose one of the ranges first" in status.value
    options.value = more
    button.click()
    assert "Saved" in status.value and predictions.latest_prediction("01_tensors.copy_cost") == more
