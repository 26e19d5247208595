"""The learner's own copies of the notebooks, which updates to the course never touch.

``make lab`` calls :func:`prepare`: every student notebook of ``notebooks/`` that the
learner does not have yet is copied into ``my-work/`` (git-ignored); existing copies are
left exactly as they are, so pulling a new version of the course, or regenerating
``notebooks/``, cannot lose a learner's answers.

A copy leaves out the "Open in Colab" badge of the published notebook: the learner already
runs it, and offline the badge is a broken image.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat

WORK_DIR = "my-work"
#: The notebook JupyterLab opens the first time it starts on the learner's copies (:func:`first_start`).
FIRST_NOTEBOOK = "01_tensors/tensors_and_devices.ipynb"
#: The file in ``my-work/`` that records that JupyterLab was started on it.
STARTED = ".jupyterlab-started"
#: The "Open in Colab" badge line that ``python -m tfperf.authoring launch`` puts first in a notebook.
COLAB_BADGE_LINE = re.compile(r"^\[!\[Open In Colab\]\([^)]*\)\]\([^)]*\)\n?")


def without_launch_badge(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """``nb`` without the Colab badge at the top of its first cell."""
    if nb.cells and nb.cells[0].cell_type == "markdown":
        nb.cells[0].source = COLAB_BADGE_LINE.sub("", nb.cells[0].source).lstrip("\n")
    return nb


def prepare(root: Path, work_dir: str = WORK_DIR) -> tuple[list[Path], list[Path]]:
    """Copy missing notebooks from ``root/notebooks`` to ``root/work_dir``.

    Returns ``(copied, kept)``: the new copies, and the learner's existing notebooks that
    were left alone.
    """
    source, target = root / "notebooks", root / work_dir
    copied, kept = [], []
    for notebook in sorted(source.glob("*/*.ipynb")):
        destination = target / notebook.relative_to(source)
        if destination.exists():
            kept.append(destination)
            continue
        destination.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(without_launch_badge(nbformat.read(notebook, as_version=4)), destination)
        copied.append(destination)
    return copied, kept


def first_start(root: Path, work_dir: str = WORK_DIR) -> str | None:
    """The notebook to open in JupyterLab (a path in ``work_dir``) if it is the first time JupyterLab starts on the
    learner's copies, which this records; None later, when JupyterLab reopens what the learner left open. A new
    learner then lands in chapter 1 instead of a bare Launcher over eight folders."""
    marker = root / work_dir / STARTED
    if marker.exists() or not (root / work_dir / FIRST_NOTEBOOK).exists():
        return None
    marker.write_text("JupyterLab was started on these notebooks (make lab); delete this to open chapter 1 again.\n")
    return FIRST_NOTEBOOK
