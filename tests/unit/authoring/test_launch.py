"""Colab and Binder launch: links built from the one configured repository and ref match the notebooks,
the setup cell installs the library on Colab from that same ref, and keeps Colab's TensorFlow when it can."""

import json
import os
import re
import subprocess
import sys

import nbformat
import pytest

from tests.conftest import REPO
from tfperf import course
from tfperf.authoring import launch
from tfperf.runtime import device

CONFIG = launch.load(REPO)
STUDENT_NOTEBOOKS = sorted((REPO / "notebooks").glob("*/*.ipynb"))
LINK = re.compile(r"\]\((https://(?:colab\.research\.google\.com/github|mybinder\.org/v2)/[^)]+)\)")


def test_there_are_notebooks_to_check():
    assert STUDENT_NOTEBOOKS and CONFIG.repository.count("/") == 1 and CONFIG.ref


@pytest.mark.parametrize("path", STUDENT_NOTEBOOKS, ids=lambda p: p.parent.name)
def test_each_student_notebook_asks_colab_for_a_gpu_and_links_to_itself(path):
    nb = nbformat.read(path, as_version=4)
    notebook = path.relative_to(REPO).as_posix()
    assert nb.metadata["accelerator"] == "GPU" and "colab" in nb.metadata
    first_line = nb.cells[0].source.splitlines()[0]
    assert first_line == CONFIG.colab_badge(notebook)
    assert first_line.endswith(f"/github/{CONFIG.repository}/blob/{CONFIG.ref}/{notebook})")
    setup = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "setup"]
    start_call = setup[0].source.splitlines()[-1]  # chapter 7's gives course.start the replicas it needs
    assert start_call in ("info = course.start()", "info = course.start(replicas=2)")
    assert [c.source for c in setup] == [CONFIG.setup_cell(start_call)]
    assert f"@{CONFIG.ref}" in CONFIG.setup_cell() and CONFIG.repository in CONFIG.setup_cell()


def test_readme_badges_open_existing_notebooks_from_the_configured_ref():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    links = LINK.findall(readme)
    colab = [u for u in links if "colab" in u]
    binder = [u for u in links if "mybinder" in u]
    assert len(colab) == len(STUDENT_NOTEBOOKS) and len(binder) == 1
    prefix = f"https://colab.research.google.com/github/{CONFIG.repository}/blob/{CONFIG.ref}/"
    assert sorted(u.removeprefix(prefix) for u in colab) == [p.relative_to(REPO).as_posix() for p in STUDENT_NOTEBOOKS]
    binder_prefix = f"https://mybinder.org/v2/gh/{CONFIG.repository}/{CONFIG.ref}?urlpath=lab/tree/"
    assert binder[0].startswith(binder_prefix) and (REPO / binder[0].removeprefix(binder_prefix)).is_file()


def test_readme_starts_with_the_two_commands_then_the_badges():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert readme.index("make lab") < readme.index("make test") < readme.index(launch.BADGES_START)
    assert readme.index(launch.BADGES_END) < readme.index("\n## ")


def test_the_setup_cells_fallback_points_to_a_readme_section_that_exists():
    sections = re.findall(r"see README\.md, section '([^']+)'", CONFIG.setup_cell())
    headings = re.findall(r"^#+ (.+)$", (REPO / "README.md").read_text(encoding="utf-8"), flags=re.M)
    assert sections and all(s in headings for s in sections)


def test_applying_the_launch_twice_changes_nothing():
    nb = nbformat.read(REPO / "solutions" / "01_tensors" / "tensors_and_devices.ipynb", as_version=4)
    once = nbformat.writes(launch.apply(nb, CONFIG, "notebooks/01_tensors/tensors_and_devices.ipynb"))
    twice = nbformat.writes(
        launch.apply(nbformat.reads(once, 4), CONFIG, "notebooks/01_tensors/tensors_and_devices.ipynb")
    )
    assert once == twice


def test_on_colab_the_setup_cell_installs_the_library_from_the_configured_ref(tmp_path):
    # A Python without site-packages (-S): the library is not installed, as on a fresh Colab runtime.
    probe = (
        "import sys, types, json, subprocess\n"
        "sys.modules['google.colab'] = types.ModuleType('google.colab')\n"
        "def run(cmd, check=False):\n"
        "    print(json.dumps(cmd)); raise SystemExit(0)\n"
        "subprocess.run = run\n" + CONFIG.setup_cell()
    )
    out = subprocess.run(
        [sys.executable, "-S", "-c", probe],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin"},
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    cmd = json.loads(out.stdout.strip().splitlines()[-1])
    assert cmd[1:4] == ["-m", "pip", "install"] and "--no-deps" in cmd  # Colab's own packages stay
    assert cmd[-1] == f"tfperf @ {CONFIG.package_url}"


def test_the_tested_tensorflow_is_the_pinned_one_and_in_range():
    pins = {
        line.split("==")[1].strip()
        for name in ("tensorflow-cpu.txt", "tensorflow-gpu.txt")
        for line in (REPO / "requirements" / name).read_text().splitlines()
        if "==" in line
    }
    assert pins == {course.TESTED_TENSORFLOW} and course.in_range(course.TESTED_TENSORFLOW)
    assert not course.in_range("2.20.1") and not course.in_range("3.0.0") and not course.in_range("nightly")


def test_colab_keeps_its_tensorflow_when_in_range(monkeypatch):
    ran = []
    monkeypatch.setattr(course, "installed_tensorflow", lambda: course.TESTED_TENSORFLOW)
    assert course.prepare_colab(run=lambda *a, **k: ran.append(a)) == [] and ran == []


def test_colab_gets_the_tested_tensorflow_when_its_own_is_out_of_range(monkeypatch):
    ran = []
    monkeypatch.setattr(course, "installed_tensorflow", lambda: "2.15.0")
    monkeypatch.delitem(sys.modules, "tensorflow", raising=False)
    notes = course.prepare_colab(run=lambda cmd, check: ran.append(cmd))
    assert ran and ran[0][-1] == f"tensorflow[and-cuda]=={course.TESTED_TENSORFLOW}"
    assert "Installed TensorFlow" in notes[0]


def test_colab_with_tensorflow_already_imported_asks_for_a_restart(monkeypatch):
    monkeypatch.setattr(course, "installed_tensorflow", lambda: "2.15.0")
    monkeypatch.setitem(sys.modules, "tensorflow", sys)
    notes = course.prepare_colab(run=lambda *a, **k: pytest.fail("must not install"))
    assert "Restart session" in notes[0]


def test_a_colab_runtime_without_a_gpu_says_how_to_switch():
    import dataclasses

    info = dataclasses.replace(device.detect(), kind="cpu", gpus=(), platform="colab")
    notes = device.health_check(info, expect_gpu=False)
    assert any("Change runtime type" in n for n in notes)
    gpu = dataclasses.replace(info, kind="gpu", gpus=("Tesla T4",), name="Tesla T4")
    assert device.health_check(gpu, expect_gpu=True) == [] and "GPU: Tesla T4" in gpu.summary()


FAKE_PIP = """\
import json, os, pathlib, sys
here = pathlib.Path(__file__).resolve().parent.parent
with open(here / "pip-calls.jsonl", "a") as f:
    f.write(json.dumps(sys.argv[1:]) + "\\n")
if any(arg.startswith("tfperf @ ") for arg in sys.argv):  # what the install leaves: the library importable
    (here / "tfperf").symlink_to(os.environ["COURSE_LIBRARY"], target_is_directory=True)
"""


@pytest.mark.slow
@pytest.mark.parametrize("colab_tensorflow", [None, "2.15.0"], ids=["colab-tf-in-range", "colab-tf-out-of-range"])
def test_the_setup_cell_on_a_simulated_colab_runtime(tmp_path, colab_tensorflow):
    """The setup cell as Colab runs it, in a fresh Python where the course library is not installed.

    Faked, in a folder first on the path: ``google.colab`` (an empty module that the process imports first,
    as Colab's runtime does) and ``pip`` (records the command it was given instead of installing; for the
    course library it makes this checkout's ``src/tfperf`` importable, as the install would). Everything
    else is real: this environment's TensorFlow (its version read from its metadata) and the course code.
    """
    fake = tmp_path / "fake"
    (fake / "google" / "colab").mkdir(parents=True)  # no google/__init__.py: google.protobuf stays visible
    (fake / "google" / "colab" / "__init__.py").write_text("")
    (fake / "pip").mkdir()
    (fake / "pip" / "__init__.py").write_text("")
    (fake / "pip" / "__main__.py").write_text(FAKE_PIP)
    if colab_tensorflow:  # Colab's TensorFlow distribution, as importlib.metadata reads it
        info = fake / f"tensorflow-{colab_tensorflow}.dist-info"
        info.mkdir()
        info.joinpath("METADATA").write_text(f"Metadata-Version: 2.1\nName: tensorflow\nVersion: {colab_tensorflow}\n")
    content = tmp_path / "content"  # Colab's working directory: no checkout around it
    content.mkdir()
    site_packages = [p for p in sys.path if p.endswith("site-packages")]
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "TF_CPP_MIN_LOG_LEVEL": "3",
        "TFPERF_SIZE": "ci",
        "COURSE_LIBRARY": str(REPO / "src" / "tfperf"),
        "PYTHONPATH": os.pathsep.join([str(fake), *site_packages]),
    }
    # -S: no .pth files, so the course library installed in this environment (editable) is not importable
    out = subprocess.run(
        [sys.executable, "-S", "-c", "import google.colab\n" + CONFIG.setup_cell()],
        capture_output=True,
        text=True,
        cwd=content,
        env=env,
        timeout=300,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    calls = [json.loads(line) for line in (fake / "pip-calls.jsonl").read_text().splitlines()]
    assert calls[0] == ["install", "--quiet", "--no-deps", f"tfperf @ {CONFIG.package_url}"]
    if colab_tensorflow is None:  # Colab's TensorFlow is in the course's range: kept
        assert calls[1:] == []
    else:  # out of range: the tested version replaces it, and the learner is told
        assert calls[1:] == [["install", "--quiet", f"tensorflow[and-cuda]=={course.TESTED_TENSORFLOW}"]]
        assert f"Installed TensorFlow {course.TESTED_TENSORFLOW} (Colab had {colab_tensorflow})" in out.stdout
    assert " on Google Colab. Computing on " in out.stdout
    if "Computing on CPU only" in out.stdout:
        assert "Runtime > Change runtime type" in out.stdout


@pytest.mark.parametrize("path", STUDENT_NOTEBOOKS, ids=lambda p: p.parent.name)
def test_no_line_of_the_setup_cell_runs_off_the_cell(path):
    # JupyterLab does not wrap code: a line longer than the course's line length (ruff's, 120) runs off the cell.
    setup = next(c for c in nbformat.read(path, as_version=4).cells if c.get("id") == "setup")
    assert [line for line in setup.source.splitlines() if len(line) > 120] == []
