"""Student versions whose untouched answer cells run: nbgrader's ``ClearSolutions`` plus placeholders.

nbgrader's stub for a solution region (``ClearSolutions.code_stub`` in autograde/nbgrader_config.py) raises
where it stands. Inside a function that is what a learner should meet; at the top level of a cell it
defines nothing, so every Check after it fails with a ``NameError``. :class:`ClearSolutionsWithPlaceholders`
replaces such a stub by placeholders, ``name = grading.not_written("name", section=...)``, for each name the
answer defines: the answer cell then runs quietly and its Check says "... is not written yet. Reread the
section ...". It stands where ``ClearSolutions`` stands in ``GenerateAssignment.preprocessors``, so
``nbgrader generate_assignment``, Formgrader's *Generate* and ``make student`` release the same notebooks.
"""

from __future__ import annotations

import ast
import copy
import json
import re

import nbformat
from nbgrader.preprocessors import ClearSolutions

_REGION = re.compile(r"^### BEGIN SOLUTION\n(.*?)^### END SOLUTION$", re.M | re.S)
#: nbgrader's stub for a solution region (autograde/nbgrader_config.py, ClearSolutions.code_stub) at the top level.
_TOP_LEVEL_STUB = re.compile(r"^# YOUR CODE HERE\nraise NotImplementedError\(.*\)$", re.M)


def top_level_answers(source: str) -> list[list[str]]:
    """For each solution region of a cell that is not inside a definition: the names it defines."""
    regions = []
    for region in _REGION.findall(source):
        names = []
        for node in ast.parse(region).body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names.append(node.name)
            elif isinstance(node, ast.Assign):
                names += [t.id for t in node.targets if isinstance(t, ast.Name)]
        regions.append(names)
    return regions


_SECTION = re.compile(r"""section=(?P<q>['"])(?P<section>.+?)(?P=q)""")


def placeholders(names: list[str], section: str | None) -> str:
    """What a top-level solution region becomes: placeholders that the Check cells report as not written yet."""
    where = "" if section is None else f", section={json.dumps(section)}"
    lines = [f'{name} = grading.not_written("{name}"{where})' for name in names]
    what = "the placeholder below" if len(names) == 1 else "the placeholders below"
    return "\n".join([f"# YOUR CODE HERE: replace {what} with your answer.", *lines])


def with_placeholders(student: nbformat.NotebookNode, solution: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """The student version, with nbgrader's top-level stubs (which raise where they stand and define nothing) made placeholders.

    Run as it is, an answer cell then runs quietly (Run All goes on), and its Check says
    "... is not written yet. Reread the section ..." instead of a ``NameError``.
    """
    sources = {c.metadata.get("nbgrader", {}).get("grade_id"): c.source for c in solution.cells}
    for i, cell in enumerate(student.cells):
        meta = cell.metadata.get("nbgrader", {})
        if cell.cell_type != "code" or not meta.get("solution"):
            continue
        regions = iter(top_level_answers(sources.get(meta.get("grade_id"), "")))
        section = _section_of_next_check(student.cells[i + 1 :])
        cell.source = _TOP_LEVEL_STUB.sub(lambda _: placeholders(next(regions), section), cell.source)
    return student


def _section_of_next_check(cells: list) -> str | None:
    """The section that the first Check cell among ``cells`` tells the learner to reread (none for concept
    checks: each question names its own, in its hidden test)."""
    for cell in cells:
        if cell.metadata.get("nbgrader", {}).get("grade"):
            if "concepts.check_" in cell.source:
                return None
            found = _SECTION.search(cell.source)
            return found["section"] if found else None
    return None


class ClearSolutionsWithPlaceholders(ClearSolutions):
    """nbgrader's ``ClearSolutions``, then :func:`with_placeholders` against the notebook as it was."""

    def preprocess(self, nb, resources):
        solution = copy.deepcopy(nb)
        nb, resources = super().preprocess(nb, resources)
        return with_placeholders(nb, solution), resources
