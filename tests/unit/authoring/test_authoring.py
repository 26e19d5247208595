import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from tfperf.authoring import notebooks as authoring


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
