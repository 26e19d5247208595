"""The learner's own copies of the notebooks, which updates to the course never touch.

``make lab`` calls :func:`prepare`: every student notebook of ``notebooks/`` that the
learner does not have yet is copied into ``my-work/`` (git-ignored); existing copies are
left exactly as they are, so pulling a new version of the course, or regenerating
``notebooks/``, cannot lose a learner's answers.
"""

from __future__ import annotations

import shutil
from pathlib import Path

WORK_DIR = "my-work"


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
        shutil.copy2(notebook, destination)
        copied.append(destination)
    return copied, kept
