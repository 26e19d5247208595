"""Predictions: committed, read back beside the measurement, summarized; a skipped one breaks nothing."""

import math
import os

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
    assert "measured here: 10x, 0.1 times the bottom of your range (100x)." in capsys.readouterr().out
    figure = predictions.summary(show=False)
    table = capsys.readouterr().out
    assert "01_tensors" in table and "02_eager_vs_graph" in table
    assert [line.get_ydata().tolist() for line in figure.axes[0].get_lines()[:2]] == [[1.0], [0.0]]


def test_the_verdict_is_said_in_the_quantitys_own_terms(tmp_path, monkeypatch, capsys):
    """A ratio beyond the range as a multiple of the range's nearer end; another quantity (chapter 7's efficiency)
    as how far beyond it, in its unit (never in powers of ten)."""
    monkeypatch.setenv(predictions.STORE_ENV_VAR, str(tmp_path / "p.jsonl"))
    efficiency = predictions.Choice("0.7 to 0.9", 0.7, 0.9)
    predictions.commit("07_beyond_one_device.efficiency", efficiency)
    predictions.reveal("07_beyond_one_device.efficiency", 0.62, what="efficiency", unit="")
    assert "measured here: 0.62, 0.08 below your range." in capsys.readouterr().out
    assert (
        efficiency.verdict(0.95, "%") == "0.05% above your range" and efficiency.verdict(0.8, "") == "inside your range"
    )
    assert predictions.SPEEDUPS[1].verdict(0.75) == "0.5 times the bottom of your range (1.5x)"


def test_the_summary_draws_its_plot_once_in_a_notebook(tmp_path):
    """summary() is the last line of each chapter's cell: it shows its figure, and returns nothing for the notebook
    to draw a second time."""
    from jupyter_client.manager import start_new_kernel

    store = tmp_path / "p.jsonl"
    env = {k: v for k, v in os.environ.items() if k != "MPLBACKEND"}  # the notebook's inline backend, as a learner's
    manager, client = start_new_kernel(kernel_name="python3", env={**env, predictions.STORE_ENV_VAR: str(store)})
    try:
        code = (
            "from tfperf.lesson import predictions\n"
            "predictions.commit('01_tensors.copy_cost', predictions.SPEEDUPS[2])\n"
            "predictions.reveal('01_tensors.copy_cost', 4.0)\n"
            "predictions.summary()"
        )
        images = []

        def keep(msg):
            if msg["msg_type"] in ("display_data", "execute_result") and "image/png" in msg["content"]["data"]:
                images.append(msg["msg_type"])

        reply = client.execute_interactive(code, timeout=120, output_hook=keep)
        assert reply["content"]["status"] == "ok" and images == ["display_data"]
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)


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
