"""GradingExecute: a kernel that dies costs the cells from where it died, and grading goes on."""

import nbformat
from nbformat.v4 import new_code_cell, new_notebook
from nbgrader.utils import determine_grade

from tfperf.autograding.preprocessors import KERNEL_DIED, GradingExecute


def _test_cell(source: str, grade_id: str):
    cell = new_code_cell(source)
    cell.metadata["nbgrader"] = {
        "grade": True,
        "grade_id": grade_id,
        "locked": True,
        "points": 1,
        "solution": False,
        "schema_version": 3,
    }
    return cell


def test_cells_before_the_death_keep_their_outputs_and_later_cells_are_marked_not_run(tmp_path):
    nb = new_notebook(
        cells=[
            new_code_cell("x = 1"),
            _test_cell("assert x == 1\nprint('passed')", "before"),
            new_code_cell("import os\nos._exit(1)"),
            _test_cell("assert x == 1", "after"),
            nbformat.v4.new_markdown_cell("text"),
        ]
    )
    executed, _ = GradingExecute(kernel_name="python3", timeout=60).preprocess(
        nb, {"metadata": {"path": str(tmp_path)}}
    )
    before, death, after = executed.cells[1], executed.cells[2], executed.cells[3]
    assert [o.get("text") for o in before.outputs] == ["passed\n"]
    assert determine_grade(before) == (1, 1)
    assert [o.ename for o in death.outputs] == [KERNEL_DIED] and "kernel stopped" in death.outputs[0].evalue
    assert [o.ename for o in after.outputs] == [KERNEL_DIED] and "cell 3" in after.outputs[0].evalue
    assert determine_grade(after) == (0, 1)
    assert executed.cells[4].cell_type == "markdown"


def test_a_cell_that_ignores_the_interrupt_costs_the_rest_of_the_notebook_only(tmp_path):
    nb = new_notebook(
        cells=[
            _test_cell("print('passed')", "before"),
            new_code_cell("import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True:\n    pass"),
            _test_cell("print('never')", "after"),
        ]
    )
    executed, _ = GradingExecute(kernel_name="python3", timeout=3).preprocess(nb, {"metadata": {"path": str(tmp_path)}})
    before, stuck, after = executed.cells
    assert determine_grade(before) == (1, 1) and determine_grade(after) == (0, 1)
    assert "did not stop when interrupted" in stuck.outputs[-1].evalue


def test_an_exercise_is_its_answer_cell_and_the_test_cells_after_it():
    from nbformat.v4 import new_code_cell, new_notebook

    from tfperf.autograding.preprocessors import _exercise_cells, _replay_source

    def cell(source, **meta):
        return new_code_cell(source, metadata={"nbgrader": meta} if meta else {})

    nb = new_notebook(
        cells=[
            cell("import os, sys\nx = 1", grade_id="setup", locked=True),
            cell("import numpy as np\nplot(np.ones(3))"),  # a demonstration
            cell("def f(): ...", grade_id="answer_f", solution=True),
            cell("assert f() is None", grade_id="f_tests", grade=True, points=1),
            cell("G = 2", grade_id="given_g", locked=True),
            cell("def g(): ...", grade_id="answer_g", solution=True),
            cell("assert g() is None", grade_id="g_tests", grade=True, points=1),
            cell("assert g() is None", grade_id="g_more_tests", grade=True, points=1),
        ]
    )
    assert _exercise_cells(nb, 3) == {2, 3}
    assert _exercise_cells(nb, 5) == _exercise_cells(nb, 7) == {5, 6, 7}
    assert _exercise_cells(nb, 0) == set()
    replayed = [_replay_source(c) for c in nb.cells]
    assert replayed == [
        "import os, sys\nx = 1",
        "import numpy as np",
        "def f(): ...",
        None,
        "G = 2",
        "def g(): ...",
        None,
        None,
    ]
