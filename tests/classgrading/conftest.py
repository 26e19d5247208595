"""A released toy course, made once per session and copied for each test that grades."""

import shutil
from pathlib import Path

import pytest

from tests.classgrading import toy


@pytest.fixture(scope="session")
def toy_template(tmp_path_factory) -> Path:
    return toy.make_course(tmp_path_factory.mktemp("toy-template"))


@pytest.fixture
def toy_course(toy_template, tmp_path) -> Path:
    """A fresh copy of the released toy course (no submissions yet); its nbgrader folder."""
    shutil.copytree(toy_template.parent, tmp_path / "course", symlinks=True)
    return tmp_path / "course" / "autograde"
