"""Where ``nbgrader release_assignment`` puts the course's exchange, with the course's configuration and
the real nbgrader CLI: never in the checkout, which nbgrader would make world-writable (it sets the
exchange root to mode 0777 at every release, so that every learner can submit into it)."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tests.classgrading import toy


def world_writable(root) -> list[str]:
    return [str(path) for path in [root, *root.rglob("*")] if path.is_dir() and path.stat().st_mode & stat.S_IWOTH]


def test_a_single_user_release_leaves_the_checkout_private_and_the_exchange_where_only_its_owner_enters(
    toy_course, tmp_path
):
    if Path("/usr/local/share/nbgrader/exchange").is_dir():
        pytest.skip("this machine has nbgrader's shared exchange, which the course then uses")
    home = tmp_path / "home"
    env = dict(toy.course_env(toy_course.parent), HOME=str(home), JUPYTER_DATA_DIR=str(home / "data"))
    done = subprocess.run(
        [sys.executable, "-m", "nbgrader", "release_assignment", toy.ASSIGNMENT],
        cwd=toy_course,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert world_writable(toy_course.parent) == []
    released = list(home.rglob(f"outbound/{toy.ASSIGNMENT}/{toy.NOTEBOOK}"))
    assert len(released) == 1, list(home.rglob("*"))
    exchange = released[0].parents[3]  # <exchange>/<course>/outbound/<assignment>/<notebook>
    private = exchange.parent
    assert stat.S_IMODE(private.stat().st_mode) == 0o700, oct(private.stat().st_mode)
    assert private.stat().st_uid == os.getuid()
