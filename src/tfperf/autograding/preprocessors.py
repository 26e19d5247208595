"""nbgrader's steps for this course where plain nbgrader loses honest work (``autograde/nbgrader_config.py``).

- ``GradingExecute``: a kernel that dies (``os._exit``, a crash in native code, the sandbox's
  CPU limit) or that does not stop when interrupted at the time limit costs the rest of that
  notebook only. nbgrader 0.9 would abandon the whole submission: no grade at all, not even
  for the test cells that had already passed. Here
  the cell that killed the kernel and every code cell after it get an error output (so each
  later test cell scores 0, and the feedback says why), and grading goes on.
- ``RestoreCells``: every cell the instructor wrote is identified by its grade_id and
  restored from the gradebook, metadata included: a learner who edits a locked cell, its
  points, or its ``grade``/``locked`` flags gets the original back, and a test cell whose
  grade_id was changed or that was deleted is put back (nbgrader's ``add_missing_cells``),
  so it still runs and scores what the answer earns.
"""

from __future__ import annotations

import textwrap

from nbclient.exceptions import CellTimeoutError, DeadKernelError
from nbformat import NotebookNode
from nbgrader.api import MissingEntry
from nbgrader.preprocessors import Execute, OverwriteCells
from traitlets import Bool

KERNEL_DIED = "KernelDied"
#: Characters per line of the errors this course writes into a graded notebook: the feedback shows an
#: error as preformatted text, which does not wrap by itself.
ERROR_WIDTH = 88


def error_output(ename: str, message: str) -> NotebookNode:
    """An error output (nbgrader scores a test cell with one 0), its traceback wrapped at ERROR_WIDTH."""
    lines = textwrap.wrap(f"{ename}: {message}", ERROR_WIDTH, break_on_hyphens=False)
    lines[0] = lines[0].replace(ename, f"\x1b[0;31m{ename}\x1b[0m", 1)
    return NotebookNode(output_type="error", ename=ename, evalue=message, traceback=lines)


def not_run_output(reason: str) -> NotebookNode:
    """An error output for a cell that could not run: nbgrader scores a test cell with it 0."""
    return error_output(KERNEL_DIED, reason)


class GradingExecute(Execute):
    """nbgrader's Execute, except that a dying kernel costs only the cells from where it died."""

    def preprocess(self, nb, resources=None, km=None):
        self.died_in_cell: int | None = None
        return super().preprocess(nb, resources, km)

    def preprocess_cell(self, cell, resources, index):
        if cell.cell_type != "code":
            return cell, resources
        if self.died_in_cell is not None:
            cell.outputs = [
                not_run_output(
                    f"not run: the kernel stopped in an earlier cell (cell {self.died_in_cell + 1}); "
                    "see that cell's output."
                )
            ]
            return cell, resources
        try:
            return super().preprocess_cell(cell, resources, index)
        except DeadKernelError:
            reason = (
                "the kernel stopped while this cell ran (the process exited or crashed, or it went over "
                "the grading sandbox's CPU-time or memory limit)."
            )
        except CellTimeoutError:
            # Interrupted at the time limit, the kernel did not stop (the code ignores the
            # interrupt, or is stuck in native code): it cannot run anything else.
            reason = f"this cell ran past the time limit ({self.timeout} s) and did not stop when interrupted."
        self.died_in_cell = index
        self.log.warning("The kernel was lost in cell %d; the notebook's later cells score 0.", index + 1)
        cell.outputs.append(not_run_output(reason + " This cell and every later cell were not graded."))
        return cell, resources


class RestoreCells(OverwriteCells):
    """nbgrader's OverwriteCells, restoring every instructor cell's nbgrader metadata too."""

    add_missing_cells = Bool(True, help="Put back graded cells that a submission lacks.").tag(config=True)

    def preprocess_cell(self, cell, resources, cell_index):
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id is not None:
            try:
                source = self.gradebook.find_source_cell(grade_id, self.notebook_id, self.assignment_id)
            except MissingEntry:
                # Not the instructor's: a plain cell now (nbgrader would keep its grade flag and
                # crash on it), and the instructor's cell of that place is put back as missing.
                self.log.warning("Cell '%s' is not in the gradebook: graded as an ordinary cell", grade_id)
                del cell.metadata["nbgrader"]
                return cell, resources
            self._restore_flags(cell, grade_id, source)
        return super().preprocess_cell(cell, resources, cell_index)

    def _restore_flags(self, cell, grade_id, source) -> None:
        """Set grade / solution / locked / points to what the instructor's version says."""
        meta = cell.metadata.nbgrader
        try:
            graded = self.gradebook.find_graded_cell(grade_id, self.notebook_id, self.assignment_id)
        except MissingEntry:
            graded = None
        try:
            self.gradebook.find_solution_cell(grade_id, self.notebook_id, self.assignment_id)
            solution = True
        except MissingEntry:
            solution = False
        wanted = {"grade": graded is not None, "solution": solution, "locked": source.locked}
        if graded is not None:
            wanted["points"] = float(graded.max_score)
        for key, value in wanted.items():
            if meta.get(key) != value:
                self.report_change(grade_id, key, value, meta.get(key))
                meta[key] = value
        if graded is None:
            meta.pop("points", None)
