"""Shared fixtures. Every test runs with TensorFlow's C++ logging quiet and a headless matplotlib."""

import os
import sys
from pathlib import Path

import pytest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("MPLBACKEND", "Agg")
# Subprocesses (nbgrader, its alembic call, kernels) must find this venv's executables.
os.environ["PATH"] = str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", "")

REPO = Path(__file__).resolve().parent.parent


def pytest_sessionstart(session):
    """Refuse to test a library other than this checkout's (e.g. a venv installed from another clone)."""
    import tfperf

    installed = Path(tfperf.__file__).resolve()
    if not installed.is_relative_to(REPO / "src"):
        raise pytest.UsageError(
            f"tfperf is imported from {installed}, not from {REPO / 'src'}: run `make venv` here first."
        )


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO


def assignments() -> list[str]:
    """Assignment folders of solutions/ (each holds one chapter's notebook)."""
    return sorted(p.name for p in (REPO / "solutions").iterdir() if p.is_dir() and any(p.glob("*.ipynb")))


def busy_elsewhere(count: int, seconds: int) -> list[int]:
    """``count`` busy processes for at most ``seconds``, none of them this process's children (started through a shell
    that exits: a tool that counts a process's own children as its own must see them as other processes). Their
    process ids, for ``os.kill`` (``timeout`` passes SIGTERM on to the busy loop)."""
    import subprocess

    loop = f"timeout {int(seconds)} {sys.executable} -c 'while True: pass' >/dev/null 2>&1 & echo $!"
    started = subprocess.run(["sh", "-c", "; ".join([loop] * count)], capture_output=True, text=True, check=True)
    return [int(pid) for pid in started.stdout.split()]


def stop_busy(pids: list[int]) -> None:
    import signal

    for pid in pids:
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
