"""Throughput targets per exercise and device class, read from one TOML file.

The defaults ship with the package (``targets.toml``). An instructor overrides any of
them with a file of the same form named by ``TFPERF_TARGETS`` (the course's
``autograde/nbgrader_config.py`` points it at ``autograde/targets.toml``).

A table may say which of its values were measured (``measured = ["cpu"]``); the others
were reasoned, and failure messages say so. A calibrated file's values are all measured.
"""

from __future__ import annotations

import os
import tomllib
from importlib import resources
from pathlib import Path

from tfperf.runtime import device

ENV_VAR = "TFPERF_TARGETS"
DEVICE_CLASSES = ("cpu", "gpu")


def _read(path_or_text: Path | str) -> dict[str, dict[str, float]]:
    text = path_or_text.read_text(encoding="utf-8") if isinstance(path_or_text, Path) else path_or_text
    data = tomllib.loads(text)
    table: dict[str, dict[str, float]] = {}
    for exercise, values in data.items():
        if not isinstance(values, dict):
            raise ValueError(f'targets: {exercise!r} must be a table like ["{exercise}"] with cpu = / gpu = values')
        table[exercise] = {k: float(v) for k, v in values.items() if k in DEVICE_CLASSES}
    return table


def _measured(path_or_text: Path | str) -> dict[str, set[str]]:
    text = path_or_text.read_text(encoding="utf-8") if isinstance(path_or_text, Path) else path_or_text
    return {
        exercise: set(values.get("measured", ()))
        for exercise, values in tomllib.loads(text).items()
        if isinstance(values, dict)
    }


def _override() -> Path | None:
    override = os.environ.get(ENV_VAR)
    if not override:
        return None
    path = Path(override)
    if not path.is_file():
        raise FileNotFoundError(f"{ENV_VAR} names {override}, which is not a file: fix the path or unset {ENV_VAR}.")
    return path


def load() -> dict[str, dict[str, float]]:
    """All targets: the package's defaults, overridden by the file named in ``TFPERF_TARGETS``."""
    table = _read(resources.files("tfperf.grading").joinpath("targets.toml").read_text(encoding="utf-8"))
    override = _override()
    if override is not None:
        for exercise, values in _read(override).items():
            table.setdefault(exercise, {}).update(values)
    return table


def is_measured(exercise: str, device_class: str) -> bool:
    """Whether the target in force for ``exercise`` on ``device_class`` was measured (not reasoned)."""
    override = _override()
    if override is not None and device_class in _read(override).get(exercise, {}):
        return True
    defaults = _measured(resources.files("tfperf.grading").joinpath("targets.toml").read_text(encoding="utf-8"))
    return device_class in defaults.get(exercise, set())


def target_for(exercise: str, device_class: str | None = None) -> float:
    """The minimum speedup for ``exercise`` on ``device_class`` (default: this machine's)."""
    device_class = device_class or device.device_class()
    table = load()
    if exercise not in table:
        raise KeyError(f"No throughput target for exercise {exercise!r}; known: {', '.join(sorted(table))}.")
    values = table[exercise]
    if device_class not in values:
        raise KeyError(f"No {device_class} target for exercise {exercise!r}.")
    return values[device_class]


def dumps(table: dict[str, dict[str, float]], header: str = "") -> str:
    """TOML text for ``table`` (the inverse of reading a targets file)."""
    lines = [f"# {line}".rstrip() for line in header.splitlines()]
    for exercise in sorted(table):
        lines += ["", f'["{exercise}"]']
        lines += [f"{k} = {table[exercise][k]:.2f}" for k in DEVICE_CLASSES if k in table[exercise]]
    return "\n".join(lines).lstrip("\n") + "\n"
