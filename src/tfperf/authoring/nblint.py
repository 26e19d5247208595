"""Named rules every course notebook follows, checked without running it (for contributors).

``python -m tfperf.authoring lint`` checks every notebook of ``solutions/`` (and so every
chapter added later); ``tests/notebooks/test_lint.py`` runs it in ``make test``. Each
problem names its rule, the notebook and the cell:

- ``setup-cell``: every notebook's setup cell (grade_id ``setup``) is the same, word for word, but for the
  arguments of its last line's ``course.start(...)`` (chapter 7 asks it for replicas).
- ``section-heading``: every ``section="..."`` passed to a call names a heading of that
  notebook (what a failure message tells the learner to reread must exist).
- ``exercise-target``: every ``exercise="..."`` has a target in ``tfperf/grading/targets.toml`` for
  every device class, under the notebook's own assignment name.
- ``no-clock``: no code cell reads a clock (``time.time``, ``time.perf_counter``,
  ``time.monotonic``, ``time.process_time``, ``datetime.now``, ``timeit``, ``%time``,
  ``%timeit``): timings go through ``tfperf.measure.timing``, which warms up, syncs the device and
  compares in interleaved pairs. Markdown may mention them.
- ``quoted-label``: a markdown paragraph that states a performance figure (a percentage, a
  ratio such as ``3.5x``, a duration such as ``12 s``) carries the label "Quoted": figures
  the learner's own run did not produce must say so. Code spans are not figures.
"""

from __future__ import annotations

import ast
import re
import tomllib
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import nbformat

RULES = {
    "setup-cell": "every notebook's setup cell is the same",
    "section-heading": 'every section="..." names a heading of its notebook',
    "exercise-target": 'every exercise="..." has a target in targets.toml for every device class',
    "no-clock": "no code cell reads a clock (use tfperf.measure.timing)",
    "quoted-label": 'every performance figure in markdown carries the label "Quoted"',
}
DEVICE_CLASSES = ("cpu", "gpu")
TARGETS_FILE = Path(__file__).parent.parent / "grading" / "targets.toml"

_CLOCK_PATTERNS = [
    (re.compile(r"\btime\.(?:time|perf_counter|monotonic|process_time|thread_time)(?:_ns)?\b"), "reads time.{}"),
    (
        re.compile(r"\bfrom\s+time\s+import\b.*\b(?:time|perf_counter|monotonic|process_time|thread_time)\b"),
        "imports a clock from time",
    ),
    (re.compile(r"\bdatetime\.(?:datetime\.)?(?:now|utcnow)\s*\("), "reads datetime.now"),
    (re.compile(r"^\s*(?:import\s+timeit|from\s+timeit\s+import)\b", re.M), "imports timeit"),
    (re.compile(r"^\s*%{1,2}time(?:it)?\b", re.M), "uses the %time/%timeit magic"),
]
# A performance figure: a number directly followed by x/× (a ratio other than 1x), or a
# number followed by a percent sign or a unit of time (or of throughput).
_FIGURE = re.compile(
    r"(?<![\w.])(?:(?!1[x×])\d+(?:\.\d+)?[x×](?!\w)"
    r"|\d+(?:[.,]\d+)?(?:\s*[–-]\s*\d+(?:\.\d+)?)?\s*(?:%|ms\b|µs\b|us\b|s\b|seconds?\b|minutes?\b|hours?\b|GB/s|MB/s))"
)
_CODE_SPAN = re.compile(r"```.*?```|`[^`\n]*`", re.S)
_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.M)


@dataclass(frozen=True)
class Problem:
    rule: str
    path: Path
    cell: int
    message: str

    def __str__(self) -> str:
        return f"{self.path}: cell {self.cell}: [{self.rule}] {self.message}"


def headings(nb: nbformat.NotebookNode) -> set[str]:
    """The text of every markdown heading of a notebook, without its ``#`` marks."""
    return {m.group(1) for cell in nb.cells if cell.cell_type == "markdown" for m in _HEADING.finditer(cell.source)}


def _parse(source: str) -> ast.AST | None:
    """A code cell's syntax tree, with IPython magics and shell lines blanked out (None if invalid)."""
    lines = ["pass" if line.lstrip().startswith(("%", "!")) else line for line in source.splitlines()]
    try:
        return ast.parse("\n".join(lines))
    except SyntaxError:
        return None


def _keyword_values(tree: ast.AST, name: str) -> Iterable[tuple[ast.expr, int]]:
    """The values passed as ``name=`` in every call of a syntax tree."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            for kw in node.keywords:
                if kw.arg == name:
                    yield kw.value, kw.value.lineno


def load_targets(path: Path = TARGETS_FILE) -> dict[str, dict[str, float]]:
    with open(path, "rb") as f:
        return tomllib.load(f)


def setup_sources(paths: Iterable[Path]) -> dict[Path, tuple[int, str]]:
    """Each notebook's setup cell: ``{path: (cell index, source)}``."""
    found = {}
    for path in paths:
        nb = nbformat.read(path, as_version=4)
        for i, cell in enumerate(nb.cells):
            if cell.metadata.get("nbgrader", {}).get("grade_id") == "setup":
                found[path] = (i, cell.source)
                break
    return found


_START_CALL = re.compile(r"course\.start\([^()\n]*\)$")


def lint_setup_cells(paths: list[Path]) -> list[Problem]:
    """``setup-cell``: all setup cells equal the most common one (ties: the first notebook's)."""
    cells = {path: (i, _START_CALL.sub("course.start()", source)) for path, (i, source) in setup_sources(paths).items()}
    problems = [Problem("setup-cell", p, 0, "no setup cell (grade_id 'setup')") for p in paths if p not in cells]
    if cells:
        counts = Counter(source for _, source in cells.values())
        first = cells[min(cells)][1]
        canonical = max(counts, key=lambda s: (counts[s], s == first))
        reference = next(p for p in sorted(cells) if cells[p][1] == canonical)
        for path, (i, source) in sorted(cells.items()):
            if source != canonical:
                problems.append(Problem("setup-cell", path, i, f"differs from the setup cell of {reference}; copy it"))
    return problems


def lint_notebook(path: Path, targets: dict[str, dict[str, float]] | None = None) -> list[Problem]:
    """The rules that look at one notebook alone."""
    nb = nbformat.read(path, as_version=4)
    targets = load_targets() if targets is None else targets
    assignment = path.parent.name
    titles = headings(nb)
    problems = []
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "code":
            problems += _lint_code(path, i, cell.source, titles, targets, assignment)
        elif cell.cell_type == "markdown":
            problems += _lint_markdown(path, i, cell.source)
    return problems


def _lint_code(path: Path, i: int, source: str, titles: set[str], targets: dict, assignment: str) -> list[Problem]:
    problems = []
    for pattern, what in _CLOCK_PATTERNS:
        for m in pattern.finditer(source):
            shown = what.format(m.group(0).split(".", 1)[-1]) if "{}" in what else what
            problems.append(
                Problem("no-clock", path, i, f"{shown} ({m.group(0).strip()!r}): measure with tfperf.measure.timing")
            )
    tree = _parse(source)
    if tree is None:
        return problems
    for value, line in _keyword_values(tree, "section"):
        if not (isinstance(value, ast.Constant) and isinstance(value.value, str)):
            problems.append(Problem("section-heading", path, i, f"line {line}: section= is not a string literal"))
        elif value.value not in titles:
            problems.append(
                Problem(
                    "section-heading",
                    path,
                    i,
                    f"line {line}: section={value.value!r} is not a heading of this notebook",
                )
            )
    for value, line in _keyword_values(tree, "exercise"):
        if not (isinstance(value, ast.Constant) and isinstance(value.value, str)):
            problems.append(Problem("exercise-target", path, i, f"line {line}: exercise= is not a string literal"))
            continue
        name = value.value
        if not name.startswith(assignment + "."):
            problems.append(
                Problem(
                    "exercise-target",
                    path,
                    i,
                    f"line {line}: exercise={name!r} does not start with this assignment's name ({assignment}.)",
                )
            )
        missing = [d for d in DEVICE_CLASSES if d not in targets.get(name, {})]
        if missing:
            problems.append(
                Problem(
                    "exercise-target",
                    path,
                    i,
                    f"line {line}: exercise={name!r} has no {'/'.join(missing)} target in targets.toml",
                )
            )
    return problems


def _lint_markdown(path: Path, i: int, source: str) -> list[Problem]:
    problems = []
    for paragraph in re.split(r"\n\s*\n", _CODE_SPAN.sub("", source)):
        figures = [m.group(0) for m in _FIGURE.finditer(paragraph)]
        if figures and "Quoted" not in paragraph:
            problems.append(
                Problem(
                    "quoted-label",
                    path,
                    i,
                    f'figure(s) {", ".join(figures)} in a paragraph without the label "Quoted": '
                    "measure it in a cell instead, or quote it as '> *Quoted, not measured here:* ...'",
                )
            )
    return problems


def lint(paths: Iterable[Path], targets: dict[str, dict[str, float]] | None = None) -> list[Problem]:
    """Every rule on every notebook of ``paths``."""
    paths = sorted(paths)
    targets = load_targets() if targets is None else targets
    problems = lint_setup_cells(paths)
    for path in paths:
        problems += lint_notebook(path, targets)
    return problems
