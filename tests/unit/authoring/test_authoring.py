import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from tfperf.authoring import notebooks as authoring
from tfperf.autograding.preprocessors import with_placeholders


def test_normalize_strips_outputs_and_gives_stable_unique_ids():
    nb = new_notebook(
        cells=[new_code_cell("1 + 1"), new_code_cell("1 + 1"), new_markdown_cell("# hi")],
        metadata={
            "kernelspec": {"name": "python3", "display_name": "P", "language": "python"},
            "widgets": {"state": "big"},
        },
    )
    nb.cells[0].outputs = [new_output("execute_result", data={"text/plain": "2"}, execution_count=1)]
    nb.cells[0].execution_count = 1
    nb.cells[0].metadata["scrolled"] = True
    nb.cells[1].id = nb.cells[0].id  # duplicate
    nb.cells[2].metadata["nbgrader"] = {
        "grade_id": "intro",
        "grade": False,
        "solution": False,
        "locked": True,
        "schema_version": 3,
        "task": False,
    }
    out = authoring.normalize(nb)
    assert out.cells[0].outputs == [] and out.cells[0].execution_count is None
    assert "scrolled" not in out.cells[0].metadata and "widgets" not in out.metadata
    assert len({c.id for c in out.cells}) == 3 and out.cells[2].id == "intro"
    text = nbformat.writes(out)
    assert nbformat.writes(authoring.normalize(nbformat.reads(text, 4))) == text  # idempotent


def _answer_cell(source: str, grade_id: str):
    return new_code_cell(source, metadata={"nbgrader": {"solution": True, "grade": False, "grade_id": grade_id}})


STUB = '# YOUR CODE HERE\nraise NotImplementedError("Not written yet: replace this line.")'


def test_a_top_level_answer_becomes_placeholders_for_the_names_it_defines():
    solution = new_notebook(
        cells=[
            _answer_cell(
                "# train_step, train\n### BEGIN SOLUTION\n@tf.function\ndef train_step(x):\n    return x\n\n\n"
                "class Model:\n    pass\n\n\nrate = 0.1\n### END SOLUTION",
                "train",
            )
        ]
    )
    check = new_code_cell(
        "grading.check_same_as(train, train_unfixed, (), section='6. Python numbers')",
        metadata={"nbgrader": {"grade": True, "grade_id": "train_tests", "points": 1}},
    )
    student = new_notebook(cells=[_answer_cell("# train_step, train\n" + STUB, "train"), check])
    source = with_placeholders(student, solution).cells[0].source
    assert "raise" not in source
    assert source.splitlines()[0] == "# train_step, train"
    assert source.splitlines()[-3:] == [
        'train_step = grading.not_written("train_step", section="6. Python numbers")',
        'Model = grading.not_written("Model", section="6. Python numbers")',
        'rate = grading.not_written("rate", section="6. Python numbers")',
    ]


def test_a_stub_inside_a_definition_is_kept():
    body = "def weighted_mean(c, w):\n    ### BEGIN SOLUTION\n    return c\n    ### END SOLUTION"
    stub = "def weighted_mean(c, w):\n    " + STUB.replace("\n", "\n    ")
    solution = new_notebook(cells=[_answer_cell(body, "weighted_mean")])
    student = new_notebook(cells=[_answer_cell(stub, "weighted_mean")])
    assert with_placeholders(student, solution).cells[0].source == stub
