"""Which cell of an nbgrader notebook is what, and what a fresh process runs of it.

Light on purpose (no nbgrader imported at module level): the grading preprocessors, the exercise
workers' parent and ``recheck`` share these, and ``recheck``'s workers import this module's callers.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # nbformat costs close to a second to import: recheck's workers import this module
    from nbformat import NotebookNode


def exercises(nb: NotebookNode) -> list[tuple[int, list[int]]]:
    """``(answer cell index, [indices of its test cells])`` for every answer cell of ``nb``: an exercise is an
    answer cell and the test cells after it, up to the next answer cell."""
    found: list[tuple[int, list[int]]] = []
    for i, cell in enumerate(nb.cells):
        meta = cell.metadata.get("nbgrader", {})
        if cell.cell_type == "code" and meta.get("solution"):
            found.append((i, []))
        elif meta.get("grade") and not meta.get("solution") and found:
            found[-1][1].append(i)
    return found


def imports_only(source: str) -> str:
    """The import statements of a cell (what the graded cells can need from a demonstration cell)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return ""
    return "\n".join(
        ast.get_source_segment(source, node) for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom))
    )


def replay_source(cell: NotebookNode) -> str | None:
    """What a fresh process runs of a cell (a new kernel after a death, an exercise's worker, ``recheck``'s
    workers): instructor cells and answers whole, test cells not at all, a demonstration cell only its
    imports (all that the graded cells can need from it); None: nothing."""
    meta = cell.metadata.get("nbgrader", {})
    if cell.cell_type != "code" or (meta.get("grade") and not meta.get("solution")):
        return None
    return cell.source if meta else imports_only(cell.source) or None


def is_written(answer_source: str, placeholder: str) -> bool:
    """Whether an answer cell holds more than the placeholder it was released with."""
    return answer_source.strip() != placeholder.strip()


def released_answers(db_url: str, notebook: str, assignment: str, course_id: str) -> dict[str, str]:
    """grade_id -> the source each answer cell was released with (its placeholder), from the gradebook."""
    from nbgrader.api import Gradebook

    with Gradebook(db_url, course_id) as gb:
        found = gb.find_notebook(notebook, assignment)
        answers = {cell.name for cell in found.solution_cells}
        return {cell.name: cell.source for cell in found.source_cells if cell.name in answers}


def instructor_notebook(config, resources: dict) -> Path:
    """The instructor's version (``source/``) of the notebook nbgrader is grading, from its configuration and the
    ``resources`` it passes a preprocessor."""
    from nbgrader.coursedir import CourseDirectory

    info = resources["nbgrader"]
    coursedir = CourseDirectory(config=config)
    source = Path(coursedir.format_path(coursedir.source_directory, ".", info["assignment"]))
    return source / f"{info['notebook']}.ipynb"
