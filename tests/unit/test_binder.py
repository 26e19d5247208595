"""Binder (repo2docker) and conda set-ups pin exactly what requirements/ pins, and their scripts are valid."""

import os
import re
import subprocess

import pytest

from tests.conftest import REPO

BINDER = REPO / "binder"


def pins(path):
    """``{package: version}`` of a requirements file's ``name==version`` lines (comments skipped)."""
    found = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line and not line.startswith("-"):
            name, sep, version = line.partition("==")
            assert sep, f"{path.name}: {line!r} is not pinned with =="
            found[name.strip().lower()] = version.strip()
    return found


def test_binder_requirements_are_the_lock_plus_cpu_tensorflow():
    expected = {**pins(REPO / "requirements" / "lock.txt"), **pins(REPO / "requirements" / "tensorflow-cpu.txt")}
    assert pins(BINDER / "requirements.txt") == expected, "run `make lock` to regenerate binder/requirements.txt"


def test_python_version_is_the_same_everywhere():
    runtime = (BINDER / "runtime.txt").read_text().strip()
    environment = (REPO / "environment.yml").read_text()
    assert runtime == "python-3.11"
    assert re.search(r"^\s*- python=3\.11\s*$", environment, flags=re.M)


def test_conda_environment_installs_the_same_pins():
    environment = (REPO / "environment.yml").read_text()
    assert "- -r requirements/lock.txt" in environment and "- -r requirements/tensorflow-cpu.txt" in environment
    # nothing else is pinned by hand there, so it cannot drift from the lock
    assert not re.findall(r"^\s*- [\w.-]+==", environment, flags=re.M)


@pytest.mark.parametrize("name", ["postBuild", "start"])
def test_scripts_are_executable_bash_that_parses(name):
    script = BINDER / name
    assert os.access(script, os.X_OK), f"binder/{name} must be executable"
    assert script.read_text().startswith("#!/usr/bin/env bash\n")
    subprocess.run(["bash", "-n", str(script)], check=True)
    assert re.search(r"^set -[a-z]*e", script.read_text(), flags=re.M), f"binder/{name} must stop at the first error"


def test_start_ends_by_running_its_command_with_the_learner_settings(tmp_path):
    lines = [line for line in (BINDER / "start").read_text().splitlines() if line.strip() and not line.startswith("#")]
    assert lines[-1] == 'exec "$@"'
    out = subprocess.run(
        [str(BINDER / "start"), "bash", "-c", 'echo "$JUPYTER_CONFIG_PATH"; exit 3'],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={"PATH": os.environ["PATH"]},
    )
    assert out.returncode == 3  # the command's own status: it replaced the script
    config = out.stdout.strip().split(os.pathsep)[0]
    assert config == str(REPO / "tools" / "jupyterlab" / "learner")
    assert (REPO / "tools" / "jupyterlab" / "learner" / "jupyter_server_config.json").is_file()


def test_post_build_installs_the_library_without_touching_the_pins():
    text = (BINDER / "postBuild").read_text()
    assert "pip install --no-deps -e ." in text
