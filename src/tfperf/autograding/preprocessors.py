"""nbgrader's steps for this course where plain nbgrader loses honest work (``autograde/nbgrader_config.py``).

- ``GradingExecute``: a kernel that dies (``os._exit``, a crash in native code, the sandbox's
  CPU limit) or that does not stop when interrupted at the time limit costs the exercise it died
  in only. nbgrader 0.9 would abandon the whole submission: no grade at all, not even
  for the test cells that had already passed. Here the cell that killed the kernel and the rest of
  its exercise get an error output (so its test cells score 0, and the feedback says why), a new
  kernel is brought to the state of the earlier cells, and grading goes on with the next exercise.
  With the grades decided outside the kernel (``tests_outside``), ``run_kernel = False`` grades without
  starting a kernel at all: the grades are the same, the feedback shows no outputs of the learner's cells.
- ``RestoreCells``: every cell the instructor wrote is identified by its grade_id and
  restored from the gradebook, metadata included: a learner who edits a locked cell, its
  points, or its ``grade``/``locked`` flags gets the original back, and a test cell whose
  grade_id was changed or that was deleted is put back (nbgrader's ``add_missing_cells``),
  so it still runs and scores what the answer earns.
"""

from __future__ import annotations

import textwrap

import nbformat
from nbclient.exceptions import CellTimeoutError, DeadKernelError
from nbformat import NotebookNode
from nbgrader import utils as nbutils
from nbgrader.api import MissingEntry
from nbgrader.preprocessors import ClearHiddenTests, Execute, OverwriteCells
from traitlets import Bool, Enum

from tfperf.autograding.cells import exercises, is_test, is_written, released_answers, replay_source

KERNEL_DIED = "KernelDied"
#: The output of a test cell left to GradeOutsideKernel, until that step writes its outcome over it.
LEFT_TO_OUTSIDE = "not graded: this check is graded outside the kernel, and that grading left no outcome here."
#: The output of a demonstration cell run for its imports only (``demonstrations = "imports"``).
IMPORTS_ONLY = "Not run while grading: the grader ran this demonstration cell for its imports only.\n"
#: Characters per line of the errors this course writes into a graded notebook: the feedback shows an
#: error as preformatted text, which does not wrap by itself.
ERROR_WIDTH = 88
#: The output of every other code cell of a notebook graded with ``run_kernel = False`` (wrapped: the feedback shows
#: it as preformatted text too).
WITHOUT_A_KERNEL = (
    textwrap.fill(
        "Not run while grading: this notebook was graded without a kernel; its grades come from each exercise's own "
        "process, which ran your answer.",
        ERROR_WIDTH,
    )
    + "\n"
)


def error_output(ename: str, message: str) -> NotebookNode:
    """An error output (nbgrader scores a test cell with one 0), its traceback wrapped at ERROR_WIDTH."""
    lines = textwrap.wrap(f"{ename}: {message}", ERROR_WIDTH, break_on_hyphens=False)
    lines[0] = lines[0].replace(ename, f"\x1b[0;31m{ename}\x1b[0m", 1)
    return NotebookNode(output_type="error", ename=ename, evalue=message, traceback=lines)


def not_run_output(reason: str) -> NotebookNode:
    """An error output for a cell that could not run: nbgrader scores a test cell with it 0."""
    return error_output(KERNEL_DIED, reason)


def _exercise_cells(nb: NotebookNode, index: int) -> set[int]:
    """The answer and test cells of the exercise that cell ``index`` belongs to (empty: none)."""
    groups = [{answer, *tests} for answer, tests in exercises(nb)]
    return next((group for group in groups if index in group), set())


class GradingExecute(Execute):
    """nbgrader's Execute, except that a dying kernel costs only the exercise it died in.

    When the kernel dies or ignores the interrupt at the time limit, that cell gets an error output, a
    new kernel is started, and the earlier cells are run again in it, quietly, without the cells of the
    exercise that killed it (test cells never; demonstration cells for their imports only); then grading
    goes on with the next cell. If no other exercise's test cell comes later, or the new kernel cannot be
    brought back that far, every later cell is marked not run.
    """

    restart_after_death = Bool(True, help="Start a new kernel after one dies, for the exercises after it").tag(
        config=True
    )

    tests_outside = Bool(
        False,
        help="Leave the test cells of written answers to GradeOutsideKernel (tfperf.autograding.outside): they "
        "are not run in the kernel, and score 0 unless that step grades them",
    ).tag(config=True)

    demonstrations = Enum(
        ["run", "imports"],
        default_value="run",
        help="How the kernel runs the demonstration cells (no nbgrader metadata): 'run' whole, as the learner did "
        "(their outputs in the feedback); 'imports' for their imports only, as an exercise's worker does (faster; "
        "no grade changes, because no grade is read from the kernel when tests_outside is on)",
    ).tag(config=True)

    run_kernel = Bool(
        True,
        help="Run the notebook in the kernel, for the learner's outputs in the feedback. With tests_outside, no grade "
        "is read from the kernel, so False grades the same without starting one (the exercises' workers only: "
        "re-grading a class after a check was corrected, say); the feedback then shows the cells without outputs",
    ).tag(config=True)

    def preprocess(self, nb, resources=None, km=None):
        self.died_in_cell: int | None = None
        self.skipped: set[int] = set()  # cells of exercises that killed a kernel: never run again
        self.outside: set[int] = self._graded_outside(nb, resources) if self.tests_outside else set()
        if not self.run_kernel:
            if not self.tests_outside:
                raise ValueError(
                    "GradingExecute.run_kernel = False needs GradingExecute.tests_outside = True: otherwise the test "
                    "cells are graded in the kernel"
                )
            if self._every_test_in_an_exercise(nb):
                return self._without_kernel(nb), resources
            self.log.warning("A test cell outside every exercise is graded in the kernel: the kernel runs after all")
        return super().preprocess(nb, resources, km)

    @staticmethod
    def _every_test_in_an_exercise(nb) -> bool:
        """Whether every test cell follows an answer cell (GradeOutsideKernel grades those, written or not)."""
        in_exercises = {test for _, tests in exercises(nb) for test in tests}
        return all(i in in_exercises for i, cell in enumerate(nb.cells) if is_test(cell))

    def _without_kernel(self, nb):
        """``nb`` with no cell run (``run_kernel = False``): each code cell's output says why."""
        from nbformat.v4 import new_output

        for cell in nb.cells:
            if cell.cell_type != "code":
                continue
            if is_test(cell):  # GradeOutsideKernel writes every exercise's outcome over this
                cell.outputs = [not_run_output(LEFT_TO_OUTSIDE)]
            else:
                cell.outputs = [new_output("stream", name="stdout", text=WITHOUT_A_KERNEL)]
            cell.execution_count = None
        return nb

    def _graded_outside(self, nb, resources) -> set[int]:
        """The test cells of every exercise whose answer is not its released placeholder."""
        from nbgrader.coursedir import CourseDirectory

        info = resources["nbgrader"]
        course_id = CourseDirectory(config=self.config).course_id
        placeholders = released_answers(info["db_url"], info["notebook"], info["assignment"], course_id)
        return {
            test
            for answer, tests in exercises(nb)
            if is_written(
                nb.cells[answer].source, placeholders.get(nb.cells[answer].metadata.nbgrader.get("grade_id"), "")
            )
            for test in tests
        }

    def _graded_after(self, index: int) -> bool:
        """Whether a test cell of another exercise comes after cell ``index`` (else a new kernel would grade nothing)."""
        dead = _exercise_cells(self.nb, index) | self.skipped
        return any(
            (c.metadata.get("nbgrader", {}).get("grade") and not c.metadata["nbgrader"].get("solution"))
            for i, c in enumerate(self.nb.cells)
            if i > index and i not in dead and i not in self.outside  # those need no kernel
        )

    def _restart_and_replay(self, index: int) -> bool:
        """A new kernel with the state of the cells before ``index``, except the dead exercise's."""
        import copy

        from nbclient.util import run_sync

        self.skipped |= _exercise_cells(self.nb, index) | {index}
        try:
            run_sync(self.km.restart_kernel)(now=True)
            if self.kc is not None:
                self.kc.stop_channels()
            run_sync(self.async_start_new_kernel_client)()
            for i, earlier in enumerate(self.nb.cells[:index]):
                source = None if i in self.skipped else replay_source(earlier)
                if source:
                    quiet = copy.deepcopy(earlier)
                    quiet.source = source
                    quiet.outputs = []
                    super().preprocess_cell(quiet, self.resources, i)
                    self.nb.cells[i] = earlier  # nbclient stores the cell it ran in the notebook: keep the original
        except Exception as err:  # noqa: BLE001 (whatever failed, the notebook's later cells are not run)
            self.log.warning("Could not start a new kernel after cell %d: %s", index + 1, err)
            return False
        return True

    def preprocess_cell(self, cell, resources, index):
        if cell.cell_type != "code":
            return cell, resources
        if index in self.skipped:
            cell.outputs = [
                not_run_output(
                    "not run: the kernel stopped earlier in this exercise (see the output of the cell where "
                    "it stopped), and the exercise is not graded further."
                )
            ]
            return cell, resources
        if index in self.outside:
            cell.outputs = [not_run_output(LEFT_TO_OUTSIDE)]
            return cell, resources
        if self.demonstrations == "imports" and not cell.metadata.get("nbgrader"):
            return self._imports_of(cell, resources, index)
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
        if self.restart_after_death and self._graded_after(index) and self._restart_and_replay(index):
            self.log.warning("The kernel was lost in cell %d; graded on in a new kernel.", index + 1)
            cell.outputs.append(
                not_run_output(
                    reason + " This cell was not graded, nor were the later checks of its exercise; the "
                    "exercises after it were graded in a new kernel."
                )
            )
            return cell, resources
        self.died_in_cell = index
        self.log.warning("The kernel was lost in cell %d; the notebook's later cells score 0.", index + 1)
        cell.outputs.append(not_run_output(reason + " This cell and every later cell were not graded."))
        return cell, resources

    def _imports_of(self, cell, resources, index):
        """Run a demonstration cell's imports only (``demonstrations = "imports"``); its output says so."""
        import copy

        from nbformat.v4 import new_output

        source = replay_source(cell)
        if source and self.died_in_cell is None:
            imports = copy.deepcopy(cell)
            imports.source = source
            imports.outputs = []
            super().preprocess_cell(imports, resources, index)
            self.nb.cells[index] = cell  # nbclient stores the cell it ran in the notebook: keep the original
        cell.outputs = [new_output("stream", name="stdout", text=IMPORTS_ONLY)]
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

    def report_change(self, name, attr, old, new) -> None:
        """nbgrader's warning, except for the one change every submission has: a test cell with hidden
        tests, released without them (its checksum is the released cell's). nbgrader puts them back
        either way; a test cell that was really edited is still reported."""
        if attr == "checksum" and new == self._released_checksum(name):
            self.log.debug("Cell %s: its hidden tests put back", name)
            return
        super().report_change(name, attr, old, new)

    def _released_checksum(self, grade_id: str) -> str | None:
        try:
            source = self.gradebook.find_source_cell(grade_id, self.notebook_id, self.assignment_id)
        except MissingEntry:
            return None
        try:
            points = float(self.gradebook.find_graded_cell(grade_id, self.notebook_id, self.assignment_id).max_score)
        except MissingEntry:
            points = None
        try:
            self.gradebook.find_solution_cell(grade_id, self.notebook_id, self.assignment_id)
            solution = True
        except MissingEntry:
            solution = False
        return released_checksum(source, points, solution)

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


def released_checksum(source_cell, points: float | None, solution: bool) -> str:
    """The checksum of an instructor cell as ``generate_assignment`` released it: its hidden tests
    removed (``ClearHiddenTests``), after the gradebook's checksum was taken."""
    meta = {"grade": points is not None, "solution": solution, "locked": bool(source_cell.locked)}
    meta |= {"grade_id": source_cell.name} | ({"points": points} if points is not None else {})
    cell = nbformat.from_dict(
        {"cell_type": source_cell.cell_type, "source": source_cell.source, "metadata": {"nbgrader": meta}}
    )
    cell, _ = ClearHiddenTests().preprocess_cell(cell, {}, 0)
    return nbutils.compute_checksum(cell)
