"""The screen as an nbgrader preprocessor: a flagged answer zeroes its own exercise only, with a reason."""

import json

from nbformat.v4 import new_code_cell, new_notebook
from nbgrader.utils import determine_grade

from tfperf.autograding.preprocessors import ScreenAnswers, exercises


def _cell(source, grade_id, **flags):
    meta = {"grade_id": grade_id, "grade": False, "locked": False, "solution": False, "schema_version": 3} | flags
    if meta["grade"]:
        meta["points"] = 2
    return new_code_cell(source, metadata={"nbgrader": meta})


def _notebook(first_answer):
    return new_notebook(
        cells=[
            _cell("def slow(x):\n    return x", "given", locked=True),
            _cell(first_answer, "answer_1", solution=True),
            _cell("assert True", "tests_1a", grade=True, locked=True),
            _cell("assert True", "tests_1b", grade=True, locked=True),
            _cell("def other(x):\n    return x", "answer_2", solution=True),
            _cell("assert True", "tests_2", grade=True, locked=True),
        ]
    )


def _scores(nb):
    return {
        c.metadata["nbgrader"]["grade_id"]: determine_grade(c)[0] for c in nb.cells if c.metadata["nbgrader"]["grade"]
    }


def test_exercises_pair_answers_with_the_tests_that_follow():
    assert exercises(_notebook("x = 1")) == [(1, [2, 3]), (4, [5])]


def test_a_flagged_answer_zeroes_its_exercise_and_is_reported(tmp_path):
    report = tmp_path / "screen.jsonl"
    nb, _ = ScreenAnswers(report=str(report)).preprocess(
        _notebook(
            "import tfperf.grading.targets\ntfperf.grading.targets.target_for = lambda *a: 0.0\ndef slow(x):\n    return x"
        ),
        {"nbgrader": {"assignment": "01_tensors", "student": "s1", "notebook": "nb"}},
    )
    assert _scores(nb) == {"tests_1a": 0, "tests_1b": 0, "tests_2": 2}
    message = nb.cells[2].outputs[-1]["evalue"]
    assert "answer_1" in message and "tfperf.grading.targets.target_for" in message and "redefines slow" in message
    row = json.loads(report.read_text())
    assert row["student"] == "s1" and row["cell"] == "answer_1" and len(row["findings"]) == 2


def test_a_zeroed_test_cell_shows_the_screens_reason_not_the_kernels_placeholder():
    """Issue 47: the feedback showed "KernelDied: not graded: this check is graded outside the kernel..." first."""
    from tfperf.autograding.preprocessors import LEFT_TO_OUTSIDE, not_run_output

    nb = _notebook("def fast(x):\n    import os\n    os.environ['X'] = '1'\n    return x")
    nb.cells[2].outputs = [not_run_output(LEFT_TO_OUTSIDE)]
    nb, _ = ScreenAnswers().preprocess(nb, {})
    assert [o["ename"] for o in nb.cells[2].outputs] == ["ScreenFailure"]
    assert _scores(nb)["tests_1a"] == 0


def test_an_honest_answer_is_untouched_and_reporting_alone_costs_nothing(tmp_path):
    nb, _ = ScreenAnswers().preprocess(_notebook("def fast(x):\n    return x * 2"), {})
    assert _scores(nb) == {"tests_1a": 2, "tests_1b": 2, "tests_2": 2}
    nb, _ = ScreenAnswers(penalize=False, report=str(tmp_path / "r.jsonl")).preprocess(
        _notebook("tf.config.run_functions_eagerly(True)"), {}
    )
    assert _scores(nb) == {"tests_1a": 2, "tests_1b": 2, "tests_2": 2}
    assert "run_functions_eagerly" in (tmp_path / "r.jsonl").read_text()


def test_nbgrader_runs_the_screen_as_configured():
    # nbconvert calls a preprocessor through __call__, which skips a disabled one (nbconvert's default).
    nb, _ = ScreenAnswers()(_notebook("def fast(x):\n    import os\n    os.environ['X'] = '1'\n    return x"), {})
    assert any(o.get("ename") == "ScreenFailure" for c in nb.cells for o in c.get("outputs", []))


def test_the_imports_allowed_are_the_instructors_list_for_each_exercise(tmp_path):
    """Read from the instructor's notebook (source/), never from the submission's cell metadata."""
    import nbformat
    from traitlets.config import Config

    source = _notebook("def fast(x):\n    return x")
    source.cells[1].metadata["tfperf"] = {"imports": ["numpy"]}
    folder = tmp_path / "source" / "ps1"
    folder.mkdir(parents=True)
    nbformat.write(source, folder / "nb.ipynb")
    config = Config()
    config.CourseDirectory.root = str(tmp_path)
    resources = {"nbgrader": {"assignment": "ps1", "notebook": "nb"}}

    submitted = _notebook("import tempfile\ndef fast(x):\n    return x")
    submitted.cells[1].metadata["tfperf"] = {"imports": ["tempfile"]}  # the submission's own word counts for nothing
    submitted.cells[4].source = "import tempfile\ndef other(x):\n    return x"  # answer_2: the course's default list
    nb, _ = ScreenAnswers(config=config).preprocess(submitted, resources)
    assert _scores(nb) == {"tests_1a": 0, "tests_1b": 0, "tests_2": 2}
    message = next(o["evalue"] for o in nb.cells[2].outputs if o.get("ename") == "ScreenFailure")
    assert "imports tempfile, which no answer to this exercise needs (its answers import numpy)" in message
