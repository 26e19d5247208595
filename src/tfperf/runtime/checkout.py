"""Where the course's checkout is: the folder holding ``solutions/``, ``notebooks/`` and ``autograde/``.

Imports nothing of the course, so every layer may use it.
"""

from __future__ import annotations

from pathlib import Path

MARKER = Path("autograde") / "nbgrader_config.py"


def course_root(start: Path | None = None) -> Path:
    """The checkout's top folder: the nearest folder holding ``autograde/nbgrader_config.py``.

    Searched from ``start`` (default: the working directory) upwards, then from this
    library's own location (an editable install inside a checkout), so commands work
    from any folder of the checkout and, with an editable install, from outside it.
    """
    start = (start or Path.cwd()).resolve()
    here = Path(__file__).resolve().parent
    for origin in (start, here):
        for folder in (origin, *origin.parents):
            if (folder / MARKER).is_file():
                return folder
    raise FileNotFoundError(f"No course checkout ({MARKER}) above {start} or above the library ({here}).")
