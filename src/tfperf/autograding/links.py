"""Students kept apart while nbgrader grades them: no submission reaches another's files through a link.

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
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from nbconvert.preprocessors import Preprocessor
from nbformat import NotebookNode
from traitlets import Bool


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
