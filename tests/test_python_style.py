"""The library, tests and tools pass ruff's lint and format checks (settings in pyproject.toml).

ruff is pinned in requirements/dev.txt, which tools/ensure-venv.sh installs into the course's venv.
"""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

RUFF = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")


@pytest.mark.parametrize("command", [["check", "."], ["format", "--check", "."]], ids=["lint", "format"])
def test_ruff(command):
    assert RUFF, "ruff is missing from the venv: run `make venv` (requirements/dev.txt pins it)"
    result = subprocess.run([RUFF, *command], cwd=REPO, capture_output=True, text=True)
    assert result.returncode == 0, (
        f"ruff {' '.join(command)} found problems (`ruff {command[0]} --fix .` or "
        f"`ruff format .` fixes most):\n{result.stdout}{result.stderr}"
    )
