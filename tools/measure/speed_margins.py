"""Margins and false-rejection rates of the speed checks, measured on the reference answers.

    python tools/measure/speed_margins.py [ROUNDS] [ASSIGNMENT ...]

For every ``grading.assert_speedup`` call in the visible test cells of the chosen solution
notebooks, runs the notebook's other code cells (at the ``TFPERF_SIZE=ci`` size), then times the reference against the unfixed code ROUNDS times exactly as the check does
(``speed_trial.trial`` on two sides in this process, every pair taken: 7 interleaved pairs, new inputs for every
timed call) and prints,
per exercise: the target, the per-pair ratios' quantiles, how many pairs fell below the
target, and an upper bound on the check's false-rejection rate. The check fails at once when
the median of its 7 pairs is below the square root of the target (at least 4 pairs below it:
at most C(7,4) q^4, q the probability of one pair below the square root); a median between
the root and the target gets 14 more pairs, and then fails only if the median of all 21 is
below the target (at most C(21,11) p^11). p and q are estimated as k/n, or bounded by the
rule of three (3/n) when none of the n pairs measured fell below.
"""

from __future__ import annotations

import ast
import linecache
import math
import os
import statistics
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[2]


def _speed_calls(source: str) -> list[ast.Call]:
    tree = ast.parse(source)
    return [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "assert_speedup"
    ]


def measure(notebook: Path, rounds: int) -> None:
    from tfperf.grading import speed_trial, targets
    from tfperf.grading.speed import recording
    from tfperf.runtime import logs

    nb = nbformat.read(notebook, as_version=4)
    namespace: dict = {}
    cells = [c for c in nb.cells if c.cell_type == "code"]
    for i, cell in enumerate(cells):
        if not cell.metadata.get("nbgrader", {}).get("grade"):
            name = f"<{notebook.stem} cell {i}>"  # AutoGraph reads the source through linecache
            linecache.cache[name] = (len(cell.source), None, cell.source.splitlines(keepends=True), name)
            with logs.captured_output():
                exec(compile(cell.source, name, "exec"), namespace)
    for cell in cells:
        if not cell.metadata.get("nbgrader", {}).get("grade"):
            continue
        visible = cell.source.split("### BEGIN HIDDEN TESTS")[0]
        definitions = [
            node
            for node in ast.parse(visible).body
            if isinstance(node, (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.ClassDef))
        ]
        with logs.captured_output():  # the test cell's own helpers (chapter 3 builds its functions there)
            exec(compile(ast.Module(body=definitions, type_ignores=[]), "<test cell>", "exec"), namespace)
        for call in _speed_calls(visible):
            kwargs = {k.arg: k.value for k in call.keywords}
            exercise = ast.literal_eval(kwargs["exercise"])
            candidate = eval(compile(ast.Expression(call.args[0]), "<candidate>", "eval"), namespace)
            baseline = eval(compile(ast.Expression(call.args[1]), "<baseline>", "eval"), namespace)
            make_inputs = eval(compile(ast.Expression(kwargs["make_inputs"]), "<inputs>", "eval"), namespace)
            target = targets.target_for(exercise)
            ratios, medians = [], []
            for _ in range(rounds):
                draws = speed_trial.Draws(make_inputs)
                verdict = speed_trial.trial(
                    speed_trial.LocalSide(baseline, draws, who="The unfixed code", record=recording),
                    speed_trial.LocalSide(candidate, draws, who="The reference", record=recording),
                    exercise=exercise,
                    target=target,
                    close=speed_trial.Closeness(rtol=1e-5, atol=1e-6),
                    every_pair=True,
                )
                ratios += verdict.ratios[:7]  # the first round's pairs (a closer look adds more)
                medians.append(statistics.median(verdict.ratios[:7]))
            below = sum(r < target for r in ratios)
            below_root = sum(r < target**0.5 for r in ratios)
            p = below / len(ratios) if below else 3 / len(ratios)
            q = below_root / len(ratios) if below_root else 3 / len(ratios)
            bound = math.comb(7, 4) * q**4 + math.comb(21, 11) * p**11
            quantiles = statistics.quantiles(ratios, n=20)
            print(
                f"{exercise}: target {target:.2f}x; {len(ratios)} pairs in {rounds} checks: per-pair ratio "
                f"min {min(ratios):.2f}x, 5% {quantiles[0]:.2f}x, median {statistics.median(ratios):.2f}x, "
                f"max {max(ratios):.2f}x; check medians min {min(medians):.2f}x; pairs below target: {below}, below its root: {below_root}; "
                f"first rounds below target: {sum(m < target for m in medians)}; false-rejection bound "
                f"{'<=' if below_root == 0 and below == 0 else '~'} {bound:.1e}",
                flush=True,
            )


def main(argv: list[str]) -> None:
    os.environ.setdefault("TFPERF_SIZE", "ci")
    os.environ.setdefault("MPLBACKEND", "Agg")
    rounds = int(argv[0]) if argv else 20
    chosen = argv[1:] or sorted(p.name for p in (ROOT / "solutions").iterdir() if p.is_dir())
    for assignment in chosen:
        for notebook in sorted((ROOT / "solutions" / assignment).glob("*.ipynb")):
            measure(notebook, rounds)


if __name__ == "__main__":
    main(sys.argv[1:])
