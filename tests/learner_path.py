"""What the tests of a learner's path write in a chapter: per chapter, one exercise with a speed Check, and its
reference answer as a learner would type it."""

from __future__ import annotations

import re

import nbformat

from tests.conftest import REPO

#: Per chapter: the exercise's given cell, its answer cell and its speed Check (grade_ids).
EXERCISES = {
    "01_tensors": ("row_scores_given", "row_scores", "row_scores_tests"),
    "02_eager_vs_graph": ("predict_given", "predict", "predict_tests"),
    "03_keras_fit": ("predict_given", "predict_fast", "predict_fast_speed_tests"),
    "04_tf_data": ("pipeline_given", "fast_pipeline", "pipeline_speed_tests"),
    "05_gpu_sync": ("incident_given", "train", "train_speed_tests"),
    "06_device_ceilings": ("activation_given", "activation", "activation_speed_tests"),
    "07_beyond_one_device": ("served_given", "served", "served_speed_tests"),
    "08_capstone": ("fixed_script_given", "fixed_script", "fixed_script_speed_tests"),
}
SOLUTION_MARKS = re.compile(r"^\s*### (BEGIN|END) SOLUTION\s*$\n?", re.M)


def grade_id(cell) -> str | None:
    return cell.metadata.get("nbgrader", {}).get("grade_id")


def notebook_of(chapter: str, folder: str = "notebooks") -> nbformat.NotebookNode:
    (path,) = sorted((REPO / folder / chapter).glob("*.ipynb"))
    return nbformat.read(path, as_version=4)


def reference_answer(chapter: str, answer: str) -> str:
    """The reference answer of an answer cell, as a learner would type it (the solution without nbgrader's marks)."""
    (cell,) = [c for c in notebook_of(chapter, "solutions").cells if grade_id(c) == answer]
    return SOLUTION_MARKS.sub("", cell.source)
