"""Run a test's code on the CPU path whatever the machine has: in a fresh Python process
whose GPUs are hidden from TensorFlow (``CUDA_VISIBLE_DEVICES=-1``, set before TensorFlow
loads, so ``tf.config.list_physical_devices("GPU")`` is empty there too).

Tests about the CPU path use this instead of assuming the machine has no GPU.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent


def cpu_only_env() -> dict[str, str]:
    """This process's environment with every GPU hidden and this checkout's library first."""
    path = os.pathsep.join(filter(None, [str(REPO / "src"), os.environ.get("PYTHONPATH", "")]))
    return dict(os.environ, CUDA_VISIBLE_DEVICES="-1", TF_CPP_MIN_LOG_LEVEL="3", PYTHONPATH=path)


def run_on_cpu(code: str, *, timeout: float = 300) -> Any:
    """Run ``code`` with GPUs hidden; it must print one JSON value as its last line, which is returned."""
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        env=cpu_only_env(),
        timeout=timeout,
    )
    assert out.returncode == 0, f"CPU-only process failed:\n{out.stdout}\n{out.stderr}"
    return json.loads(out.stdout.strip().splitlines()[-1])
