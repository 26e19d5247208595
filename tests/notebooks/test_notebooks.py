"""The notebooks in git: clean, in sync, and executable top to bottom in a real kernel."""

from __future__ import annotations

import nbformat
import pytest
from nbclient import NotebookClient

from tests.conftest import REPO, assignments
from tfperf.authoring import notebooks as authoring
from tfperf.runtime import as_on_gpu


def test_notebooks_in_git_carry_no_outputs_and_are_normalized():
    assert authoring.normalize_all(REPO, check=True) == []


def test_student_versions_are_exactly_what_nbgrader_generates():
    assert authoring.out_of_sync(REPO) == []


def test_every_solution_notebook_has_a_student_version():
    for assignment in assignments():
        for nb in (REPO / "solutions" / assignment).glob("*.ipynb"):
            assert (REPO / "notebooks" / assignment / nb.name).is_file()


@pytest.mark.parametrize("assignment", assignments())
def test_every_notebook_opens_the_same_way(assignment):
    for path in (REPO / "solutions" / assignment).glob("*.ipynb"):
        nb = nbformat.read(path, as_version=4)
        first = nb.cells[0].source.split("\n")
        if first[0].startswith("[![Open In Colab]"):  # the launch badge (python -m tfperf.authoring launch)
            first = first[1:]
        assert nb.cells[0].cell_type == "markdown" and "\n".join(first).lstrip().startswith("# Chapter")
        assert "What you will learn" in nb.cells[0].source
        setup = nb.cells[1]
        assert setup.metadata["nbgrader"]["grade_id"] == "setup" and setup.metadata["nbgrader"]["locked"]
        assert "course.start()" in setup.source


#: Cells tagged with a key must print its text when they run: a demonstration that claims
#: to show something must really show it (e.g. TensorFlow warns at most twice per function).
EXPECTED_OUTPUT = {
    "expect-retracing-warning": "triggered tf.function retracing",
    "expect-xla-rejects-tf-print": "XLA cannot compile the printing step",
}


def cell_output_text(cell) -> str:
    return "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream")


@pytest.mark.slow
@pytest.mark.parametrize("as_on_a_gpu", [False, True], ids=["cpu", "as-on-gpu"])
@pytest.mark.parametrize("assignment", assignments())
def test_solution_executes_top_to_bottom_at_ci_size(assignment, as_on_a_gpu, monkeypatch):
    """Every cell runs, on the CPU path and, with TFPERF_AS_ON_GPU=1, the way a GPU machine runs it
    (Keras compiles jit_compile="auto" with XLA: tfperf.runtime.as_on_gpu)."""
    monkeypatch.setenv("TFPERF_SIZE", "ci")
    monkeypatch.setenv(as_on_gpu.ENV_VAR, "1" if as_on_a_gpu else "0")
    for path in (REPO / "solutions" / assignment).glob("*.ipynb"):
        nb = nbformat.read(path, as_version=4)
        NotebookClient(
            nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}
        ).execute()
        for cell in nb.cells:
            if cell.cell_type != "code":
                continue
            grade = cell.metadata.get("nbgrader", {}).get("grade")
            stderr = [o.text for o in cell.outputs if o.output_type == "stream" and o.name == "stderr"]
            # nbgrader would score a graded cell that writes to stderr as 0.
            assert not (grade and stderr), f"{cell.id} wrote to stderr: {stderr}"
            for tag in cell.metadata.get("tags", []):
                if tag in EXPECTED_OUTPUT:
                    assert EXPECTED_OUTPUT[tag] in cell_output_text(cell), f"{cell.id} ({tag}) did not show it"
