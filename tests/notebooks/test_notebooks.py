"""The notebooks in git: clean, in sync, and opening the same way."""

from __future__ import annotations

import nbformat
import pytest

from tests.conftest import REPO, assignments
from tfperf.authoring import notebooks as authoring


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
        assert "info = course.start(" in setup.source.splitlines()[-1]


# Every reference notebook is executed top to bottom, at the small size, on the CPU path and as on a GPU
# (TFPERF_AS_ON_GPU=1), by the nbgrader round trip
# (tests/grading/test_roundtrip.py::test_reference_runs_top_to_bottom_without_errors): executing it here too
# proved the same thing twice, for minutes of CI.
