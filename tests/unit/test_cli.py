import math
import sys
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from tests.cpu_only import cpu_only_env
from tfperf import cli
from tfperf.grading import targets
from tfperf.runtime import device


def test_target_is_the_geometric_midpoint_between_one_and_the_worst_reference_ratio():
    assert cli.target_from_ratios([16.0, 25.0, 100.0]) == 4.0
    assert cli.target_from_ratios([10.78, 15.0]) == math.floor(math.sqrt(10.78) * 10) / 10
    assert cli.target_from_ratios([1.2, 3.0]) == 1.5  # never below the floor


def test_doctor_reports_this_machine(capsys):
    status = cli.main(["doctor"])
    out = capsys.readouterr().out
    info = device.detect()
    assert info.summary() in out
    assert ("CPU only" in out) == (info.kind == "cpu") and ("GPU:" in out) == (info.kind == "gpu")
    # Exit status 1 exactly when the driver lists a GPU that TensorFlow cannot see.
    assert status == (1 if device.nvidia_gpu_present() and info.kind == "cpu" else 0)


def test_doctor_with_the_gpus_hidden():
    import subprocess
    import sys

    out = subprocess.run(
        [sys.executable, "-m", "tfperf", "doctor"], capture_output=True, text=True, env=cpu_only_env(), timeout=300
    )
    assert "CPU only" in out.stdout
    if device.nvidia_gpu_present():  # the driver lists a GPU that TensorFlow was told not to see
        assert out.returncode == 1 and "A GPU was expected" in out.stdout
    else:
        assert out.returncode == 0 and "No problems found." in out.stdout


@pytest.mark.slow
def test_calibrate_runs_notebooks_and_writes_targets(tmp_path, capsys):
    nb = new_notebook(
        cells=[
            new_code_cell(
                "import time\n"
                "import numpy as np\n"
                "from tfperf import grading\n"
                "slow = lambda x: (time.sleep(0.02), x * 2)[1]\n"
                "fast = lambda x: x * 2\n"
                "grading.assert_speedup(fast, slow, exercise='00_demo.fast', target=1.0, pairs=5,\n"
                "                       make_inputs=lambda: (np.random.default_rng().random(3),))\n"
            )
        ],
        metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
    )
    path = tmp_path / "demo.ipynb"
    nbformat.write(nb, path)
    out = tmp_path / "targets.toml"
    assert cli.main(["calibrate", str(path), "--out", str(out)]) == 0
    written = targets._read(out)
    here = device.device_class()  # "gpu" on a GPU machine: the targets are keyed by the device that measured them
    assert written["00_demo.fast"][here] > 3.0  # sqrt of a ratio in the hundreds
    assert f"00_demo.fast [{here}]: median" in capsys.readouterr().out


def test_ceilings_prints_the_card_and_then_reads_it_from_the_cache(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))  # measured for real once (the small size), then read
    assert cli.main(["ceilings", "--size", "ci"]) == 0
    out = capsys.readouterr().out
    assert "Device card:" in out and "matmul_float32" in out and "measured now" in out
    assert cli.main(["ceilings", "--size", "ci"]) == 0
    assert "cached in" in capsys.readouterr().out
    assert cli.main(["ceilings", "--size", "ci", "--json"]) == 0
    assert '"ceilings"' in capsys.readouterr().out


def test_make_lab_passes_lab_args_and_the_first_start_to_jupyterlab():
    """``make lab`` as a learner runs it (dry run: the commands, not the server): JupyterLab gets LAB_ARGS, and the
    option that opens chapter 1 on the first start from ``tfperf workspace --start-arg``."""
    import subprocess

    from tests.conftest import REPO

    shown = subprocess.run(
        ["make", "-n", "lab", "LAB_ARGS=--no-browser --port=8899", f"VENV={Path(sys.executable).parent.parent}"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    (lab,) = [line for line in shown.splitlines() if "jupyter lab" in line]
    assert lab.rstrip().endswith("my-work/ $start --no-browser --port=8899"), lab
    assert "tfperf workspace --start-arg" in shown
