"""The course's steps in nbgrader (``autograde/nbgrader_config.py`` lists them): where plain nbgrader loses honest
work, lets one student reach another's files, or grades what has no place in an answer. The grades themselves are
decided outside the kernel (:class:`tfperf.autograding.outside.GradeOutsideKernel`).

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

**Students kept apart** (``RefuseLinks``, ``RemoveLinks``): no submission reaches another's files through a link.
``nbgrader autograde`` reads a submission from ``submitted/<student>/<assignment>/``, copies its files
into ``autograded/<student>/<assignment>/`` (following links), runs the notebook with that folder as the
kernel's working folder, and writes the graded notebook there (again following links). A link is all it
takes to cross over: a submitted notebook that links to another student's hands that student's work in,
and a kernel that replaces its own notebook with a link to ``../../<other>/<assignment>/<notebook>``
makes nbgrader write its graded notebook over the other student's (the sandbox hides the other folders
from the kernel, but a link is only a name, and nbgrader follows it outside the sandbox). Hence:

- ``RefuseLinks`` (first of ``Autograde.sanitize_preprocessors``): a submission whose folder holds a link,
  or anything that is neither a file nor a folder (a pipe would block the writer), is not graded at all:
  nbgrader removes what it had copied, and its log names the entries.
- ``RemoveLinks`` (right after the kernel ran): whatever links or special files the kernel left in its
  working folder are removed before anything is written there, so the graded notebook is written in
  the student's own folder.

**The static screen** (``ScreenAnswers``): flagged answers lose their exercise's points.
Runs in ``nbgrader autograde`` after the notebook was executed and before the grades are
saved (``autograde/nbgrader_config.py`` lists it). For every answer cell, it asks
:func:`tfperf.autograding.screen.screen` what has no place in an honest answer (the imports allowed
and the library functions withheld as the instructor's notebook lists them for that exercise); when something
is found, the test cells of that exercise (those after the answer cell, up to the next
answer cell) get an error output that names each finding, so nbgrader scores them 0 and
the feedback says why. Every finding is also appended to a JSON-lines report for the
instructor. With ``ScreenAnswers.penalize = False`` the findings are reported only.

**Student versions whose untouched answer cells run** (``ClearSolutionsWithPlaceholders``, releasing): nbgrader's
``ClearSolutions`` plus placeholders.
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
import os
import re
import stat
import textwrap
from pathlib import Path

import nbformat
from nbclient.exceptions import CellTimeoutError, DeadKernelError
from nbconvert.preprocessors import Preprocessor
from nbformat import NotebookNode
from nbgrader import utils as nbutils
from nbgrader.api import MissingEntry
from nbgrader.preprocessors import ClearHiddenTests, ClearSolutions, Execute, OverwriteCells
from traitlets import Bool, Enum, Unicode

from tfperf.autograding.cells import (
    exercises,
    instructor_notebook,
    is_written,
    released_answers,
    replay_source,
)
from tfperf.autograding.screen import ALLOWED_IMPORTS, allowed_imports, defined_names, screen, withheld_names
from tfperf.grading.specs import is_test, nbgrader_of

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


# ---------------------------------------------------------------- students kept apart


class SubmissionRefused(RuntimeError):
    """A submission that cannot be graded as handed in (the message says why and what to do)."""


def odd_entries(folder: str | os.PathLike) -> list[str]:
    """Entries under ``folder`` that are links, or neither regular files nor folders (relative paths)."""
    root = Path(folder)
    found = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            mode = os.lstat(path).st_mode
            if stat.S_ISLNK(mode) or not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
                found.append(str(path.relative_to(root)))
    return sorted(found)


def _folder(resources: dict) -> str | None:
    return (resources or {}).get("metadata", {}).get("path") or None


class RefuseLinks(Preprocessor):
    """Refuse to grade a submission whose folder holds links or special files."""

    enabled = Bool(True).tag(config=True)

    def preprocess(self, nb: NotebookNode, resources: dict) -> tuple[NotebookNode, dict]:
        folder = _folder(resources)
        found = odd_entries(folder) if folder else []
        if found:
            raise SubmissionRefused(
                f"not graded: the submission's folder holds links or special files ({', '.join(found)}), which could "
                f"reach other students' work. Hand in plain files only."
            )
        return nb, resources


class RemoveLinks(Preprocessor):
    """Remove the links and special files the kernel left in its working folder."""

    enabled = Bool(True).tag(config=True)

    def preprocess(self, nb: NotebookNode, resources: dict) -> tuple[NotebookNode, dict]:
        folder = _folder(resources)
        for entry in odd_entries(folder) if folder else []:
            self.log.warning("Removing %s, which the kernel left in %s (a link or a special file)", entry, folder)
            os.unlink(Path(folder) / entry)
        return nb, resources


# ---------------------------------------------------------------- the static screen


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
            meta = nbgrader_of(cell)
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
            grade_id = nbgrader_of(nb.cells[answer]).get("grade_id", f"cell {answer}")
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
            nbgrader_of(cell)["grade_id"]: (allowed_imports(cell), withheld_names(cell))
            for cell in source.cells
            if nbgrader_of(cell).get("solution") and nbgrader_of(cell).get("grade_id")
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


# ---------------------------------------------------------------- student versions whose untouched answers run


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
