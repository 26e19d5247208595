"""The one switch between learner-scale and CI-scale experiments.

Set ``TFPERF_SIZE=ci`` to make every notebook's experiments small enough for CI and
grading; the default, ``full``, is what a learner should see. Graded exercises do not
depend on this switch: their sizes are fixed so that their targets stay valid.
"""

from __future__ import annotations

import os
from typing import TypeVar

T = TypeVar("T")

ENV_VAR = "TFPERF_SIZE"
SIZES = ("full", "ci")
DESCRIPTIONS = {
    "full": "learner scale; set TFPERF_SIZE=ci for quick, small runs",
    "ci": "small and quick, for CI and grading; unset TFPERF_SIZE for learner scale",
}


def course_size() -> str:
    """``"full"`` (default) or ``"ci"``, from the ``TFPERF_SIZE`` environment variable."""
    size = os.environ.get(ENV_VAR, "full").strip().lower() or "full"
    if size not in SIZES:
        raise ValueError(f"{ENV_VAR}={size!r} is not one of {', '.join(SIZES)}.")
    return size


def pick(full: T, ci: T) -> T:
    """Return ``full`` for learners and ``ci`` when ``TFPERF_SIZE=ci``."""
    return ci if course_size() == "ci" else full


def ladder(smallest: float, largest: float, factor: float = 4) -> list:
    """``smallest``, ``smallest * factor``, ... up to ``largest``: the points of a size sweep.

    Always holds ``smallest``; integers stay integers.
    """
    points = [smallest]
    while points[-1] * factor <= largest * 1.0001:
        points.append(points[-1] * factor)
    return points


def ladder_to(largest: float, smallest: float, factor: float = 4) -> list:
    """A sweep that ends exactly at ``largest``: ..., ``largest / factor``, ``largest``, none below ``smallest``.

    For a control that sets the largest size: the largest point plotted is the one chosen.
    Always holds ``largest``; ascending.
    """
    points = [largest]
    while points[-1] / factor >= smallest / 1.0001:
        points.append(points[-1] / factor)
    return points[::-1]
