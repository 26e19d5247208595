"""Every chapter asks for predictions before its key experiments and ends with concept checks whose
right answers the released notebook does not give away."""

from __future__ import annotations

import re

import nbformat
import pytest

from tests.conftest import REPO, assignments
from tfperf.grading import concepts


def notebook(folder: str, assignment: str) -> nbformat.NotebookNode:
    return nbformat.read(next((REPO / folder / assignment).glob("*.ipynb")), as_version=4)


def grade_ids(nb) -> dict[str, nbformat.NotebookNode]:
    return {c.metadata["nbgrader"]["grade_id"]: c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id")}


@pytest.mark.parametrize("assignment", assignments())
def test_concept_checks_are_graded_from_the_answer_cell_and_the_reference_is_right(assignment):
    cells = grade_ids(notebook("solutions", assignment))
    tests = {g: c.source for g, c in cells.items() if g.startswith("concepts_")}
    assert 3 <= len(tests) <= 6, f"{assignment}: {len(tests)} concept checks"
    outcomes = concepts.grade(tests, cells["concepts"].source)
    assert outcomes is not None and all(error is None for _, error in outcomes.values()), outcomes
    rights = [q.right for source in tests.values() for q in concepts.questions(source)]
    assert len(set(rights)) > 1, f"{assignment}: every right answer is the same letter"


@pytest.mark.parametrize("assignment", assignments())
def test_the_released_notebook_does_not_reveal_the_answers(assignment):
    solution, released = grade_ids(notebook("solutions", assignment)), grade_ids(notebook("notebooks", assignment))
    for grade_id, cell in released.items():
        if grade_id.startswith("concepts_"):
            assert "check_answer" not in cell.source and "HIDDEN" not in cell.source, grade_id
    answer = released["concepts"].source
    assert "section=" not in answer  # a placeholder naming a section would hint at the answer (and be wrong for most)
    for name in concepts.written_answers(solution["concepts"].source):
        assert not re.search(rf"\b{name}\s*=\s*['\"]", answer), f"{assignment}: {name} is answered in the release"
    untouched = concepts.grade({g: c.source for g, c in solution.items() if g.startswith("concepts_")}, answer)
    assert all(error is not None for _, error in untouched.values())


@pytest.mark.parametrize("assignment", assignments())
def test_at_least_two_predictions_each_revealed_beside_its_measurement(assignment):
    source = "\n".join(c.source for c in notebook("solutions", assignment).cells if c.cell_type == "code")
    asked = re.findall(r'predictions\.ask\("([^"]+)"', source)
    revealed = re.findall(r'predictions\.reveal\("([^"]+)"', source)
    assert len(asked) >= 2 and sorted(asked) == sorted(revealed), (asked, revealed)
    assert all(key.startswith(assignment + ".") for key in asked), asked
