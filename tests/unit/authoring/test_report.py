"""``python -m tfperf report``: what it records, and the report it writes."""

from __future__ import annotations

import datetime
import json
import re
import statistics
from pathlib import Path

import matplotlib
import nbformat
import numpy as np
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

matplotlib.use("Agg")

from tests.conftest import REPO  # noqa: E402
from tfperf import cli
from tfperf.authoring import report
from tfperf.lesson import plots
from tfperf.runtime import device  # noqa: E402

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def test_show_records_the_runs_it_draws_when_asked(tmp_path, monkeypatch):
    import matplotlib.pyplot as plt

    monkeypatch.setattr(plt, "show", lambda: None)
    plots.show(lambda fig, runs: None, plots.Run("not recorded"))
    record = tmp_path / "runs.jsonl"
    monkeypatch.setenv(plots.RUNS_RECORD_ENV_VAR, str(record))
    assert not record.exists()

    def plot_demo(fig, runs):
        pass

    class Timeline:
        def summary(self):
            return "3 elements in 0.1 s"

    plots.show(
        plot_demo,
        [plots.Run("a", {"n": 3}, [{"ms": np.float32(1.5), "xs": np.arange(3), "t": Timeline()}]), plots.Run("b")],
    )
    rows = [json.loads(line) for line in record.read_text().splitlines()]
    assert rows == [
        {
            "plot": "plot_demo",
            "runs": [
                {
                    "label": "a",
                    "settings": {"n": 3},
                    "records": [{"ms": 1.5, "xs": [0, 1, 2], "t": "3 elements in 0.1 s"}],
                },
                {"label": "b", "settings": {}, "records": []},
            ],
        }
    ]


def test_a_ratio_row_is_the_median_of_the_recorded_pairs_against_the_target():
    row = report.ratio_row(
        {
            "exercise": "01_tensors.x",
            "device_class": "gpu",
            "target": 4.0,
            "ratios": [2.0, 6.0, 5.0, 3.0, 4.5],
            "candidate_s": 0.002,
            "baseline_s": 0.009,
        }
    )
    assert row["median"] == 4.5 and (row["low"], row["high"], row["pairs"]) == (2.0, 6.0, 5)
    assert row["margin"] == pytest.approx(4.5 / 4.0) and row["met"]
    assert (row["reference_ms"], row["unfixed_ms"]) == pytest.approx((2.0, 9.0))
    assert not report.ratio_row({**row, "ratios": [3.9], "candidate_s": 1, "baseline_s": 1})["met"]


def test_records_table_shows_scalars_summarizes_lists_and_stops_at_the_limit():
    records = [{"size": 0.5 * i, "name": "a|b", "timeline": [1, 2, 3]} for i in range(5)] + [{"extra": True}]
    lines = report.records_table(records, limit=4)
    assert lines[0] == "| size | name | timeline | extra |"
    assert lines[2] == "| 0 | a\\|b | (3 values) |  |"
    assert len([line for line in lines if line.startswith("| ")]) == 2 + 4  # header, rule, 4 records
    assert "2 more records" in lines[-1]


def test_the_report_folder_is_named_after_the_device_and_the_date(tmp_path):
    gpu = {"kind": "gpu", "name": "NVIDIA H100 80GB HBM3", "cpu": "x"}
    cpu = {"kind": "cpu", "name": "AMD EPYC 7B13", "cpu": "Intel(R) Xeon(R) CPU @ 2.20GHz"}
    day = datetime.date(2026, 11, 23)
    assert report.report_dir(tmp_path, gpu, day).name == "nvidia-h100-80gb-hbm3-2026-11-23"
    assert report.report_dir(tmp_path, cpu, day).name == "cpu-intel-xeon-2026-11-23"
    (tmp_path / "nvidia-h100-80gb-hbm3-2026-11-23").mkdir()
    assert report.report_dir(tmp_path, gpu, day).name == "nvidia-h100-80gb-hbm3-2026-11-23-2"  # never overwritten


def _only_report(out: Path) -> str:
    (folder,) = [p for p in out.iterdir() if p.is_dir()]
    return (folder / "report.md").read_text()


@pytest.mark.slow
def test_a_notebook_that_fails_is_reported_and_the_command_exits_1(tmp_path, capsys):
    nb = new_notebook(
        cells=[
            new_markdown_cell("# Chapter 0 — Demo"),
            new_markdown_cell("## 1. A plot"),
            new_code_cell(
                "import matplotlib.pyplot as plt\nfrom tfperf.lesson import plots\n"
                "def plot_demo(fig, runs):\n    fig.add_subplot().plot([r['x'] for r in runs[0].records])\n"
                "plots.show(plot_demo, plots.Run('this run', {'n': 2}, [{'x': 1.0}, {'x': 3.0}]))\n"
                "print('plotted')"
            ),
            new_markdown_cell("## 2. A failure"),
            new_code_cell("raise ValueError('the demo broke')"),
        ],
        metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
    )
    path = tmp_path / "00_demo" / "demo.ipynb"
    path.parent.mkdir()
    nbformat.write(nb, path)
    out = tmp_path / "reports"
    assert cli.main(["report", "--size", "ci", "--out", str(out), str(path)]) == 1
    text = _only_report(out)
    assert "# Course measurements:" in text and "Chapter 0 — Demo" in text
    assert "- 00_demo: cell 4, section '2. A failure': ValueError: the demo broke" in text
    assert "### 1. A plot" in text and "plotted" in text
    assert 'Records of `plot_demo`, run "this run" (n=2):' in text and "| 3 |" in text
    assert "No speed check ran." in text
    printed = capsys.readouterr().out
    assert "[1/1]" in printed and "1. A plot" in printed and "done in" in printed and "1 failures" in printed
    assert "cell 4 failed after 0 s: ValueError: the demo broke" in printed  # said when it failed, not at the end
    assert sorted(p.name for p in path.parent.iterdir()) == ["demo.ipynb"]  # nothing left beside the notebook


@pytest.mark.slow
def test_report_on_chapter_1_at_the_small_size(tmp_path, capsys):
    notebook = REPO / "solutions" / "01_tensors" / "tensors_and_devices.ipynb"
    out = tmp_path / "reports"
    assert cli.main(["report", "--size", "ci", "--out", str(out), str(notebook)]) == 0
    (folder,) = [p for p in out.iterdir() if p.is_dir()]
    text = (folder / "report.md").read_text()

    # the machine, as TensorFlow sees it here
    assert f"- Device: {device.detect().summary()}" in text
    assert "tf.sysconfig.get_build_info()" in text and "NVIDIA driver:" in text
    assert "at experiment size **ci**" in text

    # every speed check the kernel recorded has its row: median ratio, target, margin, verdict
    recorded = [json.loads(line) for line in (folder / "speed-checks.jsonl").read_text().splitlines()]
    assert len(recorded) >= 1 and {r["exercise"] for r in recorded} == {"01_tensors.keep_data_on_device"}
    rows = [line for line in text.splitlines() if line.startswith("| 01_tensors | `01_tensors.keep_data_on_device`")]
    assert len(rows) == len(recorded)
    for row, r in zip(rows, recorded):
        median = statistics.median(r["ratios"])
        assert f"| {r['target']:.2f}x [{r['device_class']}" in row and f"| {median:.2f}x |" in row
        assert f"| {median / r['target']:.2f} |" in row and ("| met |" in row) == (median >= r["target"])

    # the plots: PNG files next to the report, each referenced by it; the records behind them
    images = re.findall(r"!\[[^\]]*\]\(([^)]+\.png)\)", text)
    assert images and all((folder / name).read_bytes().startswith(PNG_MAGIC) for name in images)
    assert sorted(images) == sorted(p.name for p in folder.glob("*.png"))
    assert "Records of `plot_copy_costs`" in text and "| size_mb | strategy | ms_per_step |" in text
    assert "None: every cell of every notebook ran without an error." in text
    assert (folder / "notebooks" / notebook.name).is_file()
    printed = capsys.readouterr().out
    assert "[1/1] solutions/01_tensors/tensors_and_devices.ipynb" in printed and "5. What a copy costs" in printed
