"""Write a notebook made of some cells of another, in a given order (a cell may repeat): to run one exercise alone.

Usage: python tools/probes/notebook_cells.py SOURCE.ipynb OUT.ipynb 0-3,39-43,43

Used in GPU sessions, where a whole chapter does not fit the device time: run the setup and one exercise with
``tfperf report`` on the result. OUT should sit in SOURCE's folder so that the setup cell finds the checkout.
"""

from __future__ import annotations

import copy
import sys

import nbformat


def indices(spec: str) -> list[int]:
    out: list[int] = []
    for part in spec.split(","):
        first, _, last = part.partition("-")
        out.extend(range(int(first), int(last or first) + 1))
    return out


def main() -> int:
    source, target, spec = sys.argv[1:4]
    nb = nbformat.read(source, as_version=4)
    cells = [copy.deepcopy(nb.cells[i]) for i in indices(spec)]
    for n, cell in enumerate(cells):
        cell["id"] = f"cell-{n}"
    nb.cells = cells
    nbformat.write(nb, target)
    return 0


if __name__ == "__main__":
    sys.exit(main())
