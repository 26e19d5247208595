"""What the class believed (tfperf.classgrading.beliefs): predictions carried by submitted notebooks, the page
the class report gets, names hidden, the learner's opt-out, and nothing but clean fields read from a notebook."""

from __future__ import annotations

import math

import nbformat
import pytest
from nbclient import NotebookClient
from nbformat.v4 import new_code_cell, new_notebook, new_output

from tests.classgrading import toy
from tfperf.classgrading import beliefs, report
from tfperf.classgrading.ledger import GRADED, Entry, Ledger
from tfperf.lesson.predictions import OUTPUT_KEY


def shared(key, label, low, high, measured, unit="x"):
    return {"key": key, "label": label, "low": low, "high": high, "measured": measured, "unit": unit}


def carrying(*rows) -> nbformat.NotebookNode:
    """A submitted notebook whose cells carry these shared predictions in their outputs."""
    nb = new_notebook()
    for row in rows:
        cell = new_code_cell("predictions.reveal(...)")
        cell.outputs = [
            new_output("display_data", data={"text/plain": "You predicted ..."}, metadata={OUTPUT_KEY: row})
        ]
        nb.cells.append(cell)
    return nb


FUSION = "06_device_ceilings.fusion"
BF16 = "06_device_ceilings.bfloat16_matmul"
LOW, MID, HIGH = ("1.5x to 3x", 1.5, 3.0), ("3x to 10x", 3.0, 10.0), ("more than 100x", 100.0, None)

#: Six made-up students of chapter 6: what each shared (ann opted out: nothing).
CLASS = {
    "ann": [],
    "bob": [shared(FUSION, *LOW, 4.0), shared(BF16, *MID, 5.0)],  # fusion too low; bf16 inside
    "cat": [shared(FUSION, *MID, 4.2), shared(BF16, *HIGH, 6.0)],  # inside; bf16 too high
    "dan": [shared(FUSION, *LOW, 12.0)],  # too low
    "eve": [shared(FUSION, *MID, 2.0)],  # too high
    "fay": [shared(FUSION, *HIGH, 3.5)],  # too high
}


def entries(students: dict[str, list[dict]], assignment="06_device_ceilings") -> list[Entry]:
    return [Entry(s, assignment, "c", GRADED, score=1, max_score=1, beliefs=rows) for s, rows in students.items()]


def test_the_page_counts_each_experiment_without_names(tmp_path):
    report.write(tmp_path, "06_device_ceilings", entries(CLASS), ["This run: test"])
    page = (tmp_path / "06_device_ceilings" / "beliefs.md").read_text()
    assert "Students whose notebook shared predictions: 5 of 6 graded." in page
    # predictions | measured min / median / max | inside | too low | too high | ranges chosen
    assert f"| {FUSION} | 5 | 2x / 4x / 12x | 1 | 2 | 2 | 1.5x to 3x: 2, 3x to 10x: 2, more than 100x: 1 |" in page
    assert f"| {BF16} | 2 | 5x / 5.5x / 6x | 1 | 0 | 1 | 3x to 10x: 1, more than 100x: 1 |" in page
    assert "## Per student" not in page
    for student in CLASS:
        assert f"| {student} |" not in page
    assert "![beliefs.png](beliefs.png)" in page
    assert (tmp_path / "06_device_ceilings" / "beliefs.png").read_bytes()[:4] == b"\x89PNG"
    summary = (tmp_path / "06_device_ceilings" / "summary.md").read_text()
    assert "[beliefs.md](beliefs.md)" in summary


def test_names_only_when_asked_and_never_the_named_reference(tmp_path):
    with_reference = CLASS | {"solution-run": [shared(FUSION, *MID, 4.0)]}
    report.write(tmp_path, "06_device_ceilings", entries(with_reference), [], "solution-run", beliefs_names=True)
    page = (tmp_path / "06_device_ceilings" / "beliefs.md").read_text()
    assert f"| dan | {FUSION} | 1.5x to 3x | 12x | too low |" in page
    assert "solution-run" not in page  # the reference is the comparison, not a learner
    assert f"| {FUSION} | 5 |" in page


def test_across_chapters_the_direction_of_errors_is_followed(tmp_path):
    """Chapter 2 graded first: bob and dan guessed too low there; here dan does again, bob does not."""
    chapter2 = {
        "bob": [shared("02_eager_vs_graph.graph_vs_eager", *LOW, 20.0)],
        "dan": [shared("02_eager_vs_graph.graph_vs_eager", *MID, 50.0)],
        "eve": [shared("02_eager_vs_graph.graph_vs_eager", *MID, 5.0)],
    }
    for entry in entries(chapter2, "02_eager_vs_graph"):
        Ledger(tmp_path, "02_eager_vs_graph").write(entry)
    report.write(tmp_path, "06_device_ceilings", entries(CLASS), [])
    page = (tmp_path / "06_device_ceilings" / "beliefs.md").read_text()
    assert "| 02_eager_vs_graph | 3 | 1 | 2 | 0 |" in page
    assert "| 06_device_ceilings | 7 | 2 | 2 | 3 |" in page
    # bob in chapter 6: one too low, one inside -> mostly too low; dan: too low. Both again.
    assert "Of the 2 student(s) who mostly guessed too low in an earlier chapter, 2 still did here." in page


def test_no_shared_prediction_says_so(tmp_path):
    report.write(tmp_path, "06_device_ceilings", entries({"ann": [], "bob": []}), [])
    page = (tmp_path / "06_device_ceilings" / "beliefs.md").read_text()
    assert "No submitted notebook carried a prediction with its measurement." in page
    assert not (tmp_path / "06_device_ceilings" / "beliefs.png").exists()


@pytest.mark.parametrize(
    "bad",
    [
        "not a dict",
        {"key": FUSION},  # fields missing
        shared(FUSION, *MID, math.nan),
        shared(FUSION, *MID, True),  # a bool is not a measurement
        shared("../../etc/passwd", *MID, 4.0),
        shared(FUSION, "x" * 500, 3.0, 10.0, 4.0),
        shared(FUSION, "upside down", 10.0, 3.0, 4.0),
    ],
)
def test_a_notebook_field_that_is_not_a_clean_prediction_is_dropped(tmp_path, bad):
    nbformat.write(carrying(bad, shared(BF16, *MID, 5.0)), tmp_path / "n.ipynb")
    assert [r["key"] for r in beliefs.from_notebooks([tmp_path / "n.ipynb"])] == [BF16]


def _run(tmp_path, share: bool) -> nbformat.NotebookNode:
    """A real kernel runs commit + reveal, as a chapter's cells do; the notebook as the learner saves it."""
    store = tmp_path / f"store-{share}.jsonl"
    nb = new_notebook(metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}})
    nb.cells = [
        new_code_cell(
            f"import os; os.environ['TFPERF_PREDICTIONS'] = {str(store)!r}\n"
            "from tfperf.lesson import predictions\n"
            f"predictions.share({share})"
        ),
        new_code_cell(f"predictions.commit({FUSION!r}, predictions.SPEEDUPS[2])\nprint('measuring')"),
        new_code_cell(f"predictions.reveal({FUSION!r}, 4.5)"),
    ]
    NotebookClient(nb, timeout=120, kernel_name="python3").execute()
    return nb


def test_reveal_in_a_kernel_puts_the_prediction_in_the_notebook_and_the_opt_out_keeps_it_out(tmp_path):
    nb = _run(tmp_path, share=True)
    [output] = nb.cells[2].outputs
    assert output.output_type == "display_data"
    assert output.data["text/plain"].startswith("You predicted 3x to 10x; measured here: 4.5x, inside your range.")
    nbformat.write(nb, tmp_path / "shared.ipynb")
    [row] = beliefs.from_notebooks([tmp_path / "shared.ipynb"])
    assert row == shared(FUSION, "3x to 10x", 3.0, 10.0, 4.5)

    kept = _run(tmp_path, share=False)
    [output] = kept.cells[2].outputs
    assert output.output_type == "stream" and "inside your range" in output.text
    nbformat.write(kept, tmp_path / "kept.ipynb")
    assert beliefs.from_notebooks([tmp_path / "kept.ipynb"]) == []


def test_grade_reads_them_before_nbgrader_clears_the_outputs(toy_course):
    """``python -m tfperf grade`` on the toy course: the ledger keeps what the submitted notebook carried."""
    nb = toy.variant("reference", toy.released(toy_course))
    nb.cells[2].outputs = carrying(shared(FUSION, *MID, 4.0)).cells[0].outputs  # the answer cell's output
    toy.submit(toy_course, "bob", nb)
    result = toy.grade(toy_course)
    assert result.returncode == 0, result.stdout + result.stderr
    assert Ledger(toy_course / "reports", toy.ASSIGNMENT).read("bob").beliefs == [shared(FUSION, *MID, 4.0)]
    page = (toy_course / "reports" / toy.ASSIGNMENT / "beliefs.md").read_text()
    assert f"| {FUSION} | 1 | 4x / 4x / 4x | 1 | 0 | 0 | 3x to 10x: 1 |" in page
