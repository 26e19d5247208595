"""The static screen as an nbgrader preprocessor: flagged answers lose their exercise's points.

Runs in ``nbgrader autograde`` after the notebook was executed and before the grades are
saved (``autograde/nbgrader_config.py`` lists it). For every answer cell, it asks
:func:`tfperf.autograding.screen.screen` what has no place in an honest answer (the imports allowed
and the library functions withheld as the instructor's notebook lists them for that exercise); when something
is found, the test cells of that exercise (those after the answer cell, up to the next
answer cell) get an error output that names each finding, so nbgrader scores them 0 and
the feedback says why. Every finding is also appended to a JSON-lines report for the
instructor. With ``ScreenAnswers.penalize = False`` the findings are reported only.
"""

from __future__ import annotations

import json
from pathlib import Path

from nbconvert.preprocessors import Preprocessor
from nbformat import NotebookNode
from traitlets import Bool, Unicode

from tfperf.autograding.cells import exercises, instructor_notebook
from tfperf.autograding.preprocessors import KERNEL_DIED, LEFT_TO_OUTSIDE, error_output
from tfperf.autograding.screen import ALLOWED_IMPORTS, allowed_imports, defined_names, screen, withheld_names


def _nbgrader(cell: NotebookNode) -> dict:
    return cell.metadata.get("nbgrader", {})


class ScreenAnswers(Preprocessor):
    """Flag answer cells that tamper with the grading; zero their exercise's test cells."""

    # nbconvert's Preprocessor is disabled unless told otherwise, and nbconvert calls preprocess()
    # only for an enabled one: without this, the screen never ran inside nbgrader autograde.
    enabled = Bool(True, help="Whether to screen answers when autograding").tag(config=True)
    penalize = Bool(True, help="Score the exercise's test cells 0 when its answer is flagged").tag(config=True)
    report = Unicode("", help="JSON-lines file to append every finding to (empty: no report)").tag(config=True)

    def preprocess(self, nb: NotebookNode, resources: dict) -> tuple[NotebookNode, dict]:
        given: set[str] = set()
        flagged: dict[int, list[str]] = {}
        rules = self._rules(resources)
        for i, cell in enumerate(nb.cells):
            meta = _nbgrader(cell)
            if cell.cell_type != "code":
                continue
            if meta.get("solution"):
                imports, withheld = rules.get(meta.get("grade_id"), (ALLOWED_IMPORTS, ()))
                findings = screen(cell.source, given_names=given, allowed_imports=imports, withheld=withheld)
                if findings:
                    flagged[i] = [f.describe() for f in findings]
            elif meta.get("locked"):
                given |= defined_names(cell.source)
        for answer, tests in exercises(nb):
            if answer not in flagged:
                continue
            grade_id = _nbgrader(nb.cells[answer]).get("grade_id", f"cell {answer}")
            self._report(resources, grade_id, flagged[answer])
            if not self.penalize:
                continue
            message = (
                f"The answer cell '{grade_id}' was not graded: it contains code that has no place in an "
                f"answer to this exercise ({'; '.join(flagged[answer])}). Remove it; your instructor "
                f"can see this message."
            )
            for t in tests:  # the reason first, instead of the kernel's "left to the grading outside it"
                kept = [o for o in nb.cells[t].get("outputs", []) if not _left_to_outside(o)]
                nb.cells[t].outputs = [error_output("ScreenFailure", message), *kept]
        return nb, resources

    def _rules(self, resources: dict) -> dict[str, tuple[tuple[str, ...], tuple[str, ...]]]:
        """answer grade_id -> (what it may import, the library functions it may not use), as the instructor's
        notebook lists them (never the submission's metadata); empty where that notebook cannot be read (every
        answer then gets the course's defaults)."""
        import nbformat

        try:
            source = nbformat.read(instructor_notebook(self.config, resources), as_version=4)
        except Exception:  # noqa: BLE001 (not graded by nbgrader, or no source: the default list)
            return {}
        return {
            _nbgrader(cell)["grade_id"]: (allowed_imports(cell), withheld_names(cell))
            for cell in source.cells
            if _nbgrader(cell).get("solution") and _nbgrader(cell).get("grade_id")
        }

    def _report(self, resources: dict, grade_id: str, findings: list[str]) -> None:
        if not self.report:
            return
        info = resources.get("nbgrader", {})
        row = {
            "assignment": info.get("assignment"),
            "student": info.get("student"),
            "notebook": info.get("notebook"),
            "cell": grade_id,
            "findings": findings,
            "penalized": bool(self.penalize),
        }
        path = Path(self.report)
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8") as f:
            f.write(json.dumps(row) + "\n")


__all__ = ["ScreenAnswers", "exercises"]


def _left_to_outside(output: NotebookNode) -> bool:
    """The kernel's placeholder for a test cell that the grading outside it decides (which a zeroed one skips)."""
    return output.get("ename") == KERNEL_DIED and LEFT_TO_OUTSIDE in str(output.get("evalue", ""))
