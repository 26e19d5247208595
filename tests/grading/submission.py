"""Submissions for the nbgrader round trip, built from the reference notebook.

A chapter lists its submissions in ``tests/grading/submissions/<assignment>.py`` as
``SUBMISSIONS = [Submission(...), ...]``.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

import nbformat


@dataclass(frozen=True)
class Submission:
    """The reference notebook with some solution cells replaced.

    ``edits`` maps a solution cell's grade_id to its new source. ``expected`` maps a test
    cell's grade_id to the points it must get; unlisted test cells must get full points.
    """

    name: str
    edits: dict[str, str]
    expected: dict[str, float] = field(default_factory=dict)

    def notebook(self, reference: nbformat.NotebookNode) -> nbformat.NotebookNode:
        nb = copy.deepcopy(reference)
        ids = {c.metadata.get("nbgrader", {}).get("grade_id"): c for c in nb.cells}
        for grade_id, source in self.edits.items():
            cell = ids.get(grade_id)
            assert cell is not None and cell.metadata["nbgrader"].get("solution"), f"{grade_id} is not a solution cell"
            cell.source = source
        return nb
