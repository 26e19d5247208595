"""The student notebooks as a learner first meets them: every Check cell of an untouched notebook
says, in a short message, that the answer is not written yet and which section to reread.

Run All must not stop on a traceback before the first Check: an untouched answer cell runs quietly.
"""

from __future__ import annotations

import re

import nbformat
import pytest
from nbclient import NotebookClient

from tests.conftest import REPO, assignments

#: What IPython shows for the course's own short failures (GradingFailure._render_traceback_).
SHORT_ERRORS = ("GradingFailure", "NotWritten")
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def shown(output) -> str:
    return _ANSI.sub("", "\n".join(output.get("traceback", [])))


@pytest.mark.slow
@pytest.mark.parametrize("assignment", assignments())
def test_untouched_student_notebook_shows_only_not_written_yet(assignment, monkeypatch):
    monkeypatch.setenv("TFPERF_SIZE", "ci")
    for path in (REPO / "notebooks" / assignment).glob("*.ipynb"):
        nb = nbformat.read(path, as_version=4)
        NotebookClient(
            nb,
            timeout=300,
            kernel_name="python3",
            allow_errors=True,
            resources={"metadata": {"path": str(path.parent)}},
        ).execute()
        problems = []
        for cell in nb.cells:
            if cell.cell_type != "code":
                continue
            errors = [o for o in cell.outputs if o.output_type == "error"]
            is_check = cell.metadata.get("nbgrader", {}).get("grade", False)
            if not is_check:
                problems += [f"{cell.id}: {e.ename}: {e.evalue}" for e in errors]
                continue
            if len(errors) != 1:
                problems.append(f"{cell.id}: an untouched Check passed or showed no error")
                continue
            error, text = errors[0], shown(errors[0])
            if (
                error.ename not in SHORT_ERRORS
                or "not written yet" not in text
                or "reread" not in text.lower()
                or "Traceback" in text
                or len(text.splitlines()) > 3
            ):
                problems.append(f"{cell.id}: {error.ename}:\n{text}")
        assert not problems, f"{path.relative_to(REPO)}:\n" + "\n".join(problems)
