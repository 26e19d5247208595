"""The instructor's summary of an assignment's grading: Markdown and PNG plots in ``reports/<assignment>/``.

Built from the ledger (every student graded so far, in any run, by any worker):

- per test cell, how many students scored what (``points.png``);
- per throughput exercise, the students' median speedups (``speedups.png``), next to a comparison:
  the submission the instructor named (``--reference ID``: the reference solution graded as a
  student, docs/instructors.md), otherwise the class median, each labelled for what it is;
- the most common failure messages per test cell (numbers masked, so that "1.3x" and
  "1.4x" count as one message);
- anomalies to check by hand: a speedup more than :data:`FAR_BEYOND` times the comparison's,
  a locked (test or given) cell that was edited or deleted, a kernel that died, the static
  screen's flags, submissions rejected before grading and graders that failed.
"""

from __future__ import annotations

import collections
import functools
import math
import os
import re
import statistics
import threading
from dataclasses import dataclass
from pathlib import Path

from tfperf.classgrading import beliefs
from tfperf.classgrading.ledger import FAILED, GRADED, REJECTED, STARTED, Entry, Ledger

#: A student's median speedup above this many times the reference's is worth a look.
FAR_BEYOND = 3.0
TOP_MESSAGES = 5


def _mask_numbers(message: str) -> str:
    """The message with its numbers blanked: the key that groups one failure measured at other values."""
    return re.sub(r"\d+(\.\d+)?", "#", message)


def common_failures(entries: list[Entry]) -> dict[str, list[tuple[int, str, int]]]:
    """test cell -> its most common failures, as (students, one student's message, how many wordings).

    Messages that differ only in their numbers (the speedup measured, a value returned) are one failure;
    it is shown with the numbers of its most frequent wording, never with the numbers blanked."""
    grouped: dict[str, dict[str, collections.Counter]] = collections.defaultdict(
        lambda: collections.defaultdict(collections.Counter)
    )
    for entry in entries:
        for cell, message in entry.failures:
            grouped[cell][_mask_numbers(message)][message] += 1
    return {
        cell: sorted(((sum(w.values()), w.most_common(1)[0][0], len(w)) for w in by_key.values()), key=lambda t: -t[0])[
            :TOP_MESSAGES
        ]
        for cell, by_key in grouped.items()
    }


def student_speedups(entry: Entry) -> dict[str, float]:
    """exercise -> the median of its recorded ratios (the last record per exercise)."""
    found = {}
    for row in entry.speedups:
        if row.get("ratios"):
            found[row["exercise"]] = statistics.median(row["ratios"])
    return found


@dataclass(frozen=True)
class Comparison:
    """What students' speedups are compared with: per exercise, and its name in the summary."""

    speedups: dict[str, float]
    label: str  # a column head: "class median" or "reference (ID)"
    source: str  # a sentence's end: where the numbers come from
    student: str | None = None  # the reference submission's student id, left out of the class's figures


def comparison(entries: list[Entry], reference: str | None = None) -> Comparison:
    """The submission ``reference`` names (graded, with speedups), otherwise the class median."""
    ref = next((e for e in entries if e.student == reference and e.status == GRADED), None)
    if ref is not None and student_speedups(ref):
        return Comparison(
            student_speedups(ref),
            f"reference ({reference})",
            f"the submission of `{reference}`, named with --reference (the reference solution graded as a student)",
            reference,
        )
    by_exercise = collections.defaultdict(list)
    for entry in entries:
        for exercise, value in student_speedups(entry).items():
            by_exercise[exercise].append(value)
    why = (
        f"`{reference}`, named with --reference, has no graded speedups"
        if reference
        else "no reference submission was named: --reference STUDENT"
    )
    return Comparison(
        {k: statistics.median(v) for k, v in by_exercise.items()}, "class median", f"the class median ({why})"
    )


def anomalies(entries: list[Entry], reference: str | None = None) -> list[tuple[str, str, str]]:
    """(student, kind, detail) for everything an instructor should look at by hand."""
    compared = comparison(entries, reference)
    found = []
    for entry in entries:
        if entry.status == REJECTED:
            found += [(entry.student, "rejected", p) for p in entry.problems]
        elif entry.status == FAILED:
            found += [(entry.student, "grading failed", p) for p in entry.problems]
        elif entry.status == STARTED:
            found.append((entry.student, "not finished", "the run stopped while grading it: run the command again"))
        found += [(entry.student, kind, detail) for kind, detail in entry.anomalies]
        if entry.student == compared.student:
            continue
        for exercise, value in student_speedups(entry).items():
            ref = compared.speedups.get(exercise)
            if ref and value > FAR_BEYOND * ref:
                found.append(
                    (
                        entry.student,
                        f"speedup far beyond the {compared.label}",
                        f"{exercise}: {value:.2f}x, {compared.label} {ref:.2f}x (more than {FAR_BEYOND:g}x it)",
                    )
                )
    return found


def _md_escape(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def markdown(
    assignment: str, entries: list[Entry], run_lines: list[str], plots: list[str], reference: str | None = None
) -> str:
    graded = [e for e in entries if e.status == GRADED]
    lines = [f"# Grading summary: {assignment}", ""]
    lines += run_lines + [""]
    counts = collections.Counter(e.status for e in entries)
    lines.append(
        f"Students in the ledger: {len(entries)} ({counts[GRADED]} graded, {counts[REJECTED]} rejected, "
        f"{counts[FAILED]} failed, {counts[STARTED]} not finished)."
    )
    if graded:
        scores = [e.score for e in graded]
        lines.append(
            f"Total score: mean {statistics.mean(scores):.2f} of {graded[0].max_score:g}, "
            f"median {statistics.median(scores):g}, min {min(scores):g}, max {max(scores):g}."
        )
    lines += ["", "## Points per test cell", ""]
    cells = sorted({c for e in graded for c in e.cells})
    if cells:
        lines += [
            "| test cell | max | students at full points | at 0 | distribution (points: students) |",
            "|---|---|---|---|---|",
        ]
        for cell in cells:
            got = [e.cells[cell] for e in graded if cell in e.cells]
            full = max(m for _, m in got)
            dist = collections.Counter(s for s, _ in got)
            lines.append(
                f"| {cell} | {full:g} | {sum(s == m for s, m in got)} | {sum(s == 0 for s, _ in got)} | "
                + ", ".join(f"{k:g}: {v}" for k, v in sorted(dist.items()))
                + " |"
            )
    lines += ["", "## Measured speedups", ""]
    compared = comparison(entries, reference)
    by_exercise = collections.defaultdict(list)
    for entry in graded:
        if entry.student != compared.student:
            for exercise, value in student_speedups(entry).items():
                by_exercise[exercise].append(value)
    if by_exercise or compared.speedups:
        lines += [
            f"Each student's median ratio over the check's interleaved pairs; {compared.label}: {compared.source}.",
            "",
            f"| exercise | students | min | median | max | {compared.label} |",
            "|---|---|---|---|---|---|",
        ]
        for exercise in sorted(set(by_exercise) | set(compared.speedups)):
            values, ref = by_exercise.get(exercise, []), compared.speedups.get(exercise)
            spread = (
                f"{min(values):.2f}x | {statistics.median(values):.2f}x | {max(values):.2f}x" if values else "- | - | -"
            )
            lines.append(f"| {exercise} | {len(values)} | {spread} | {f'{ref:.2f}x' if ref else '-'} |")
    else:
        lines.append("No throughput check recorded a speedup.")
    lines += ["", "## Most common failure messages", ""]
    messages = common_failures(graded)
    if messages:
        for cell in sorted(messages):
            lines.append(f"- **{cell}**")
            lines += [
                f"  - {n} student(s): {_md_escape(m)}"
                + (
                    f" ({wordings} wordings that differ in their numbers; this is the most frequent)"
                    if wordings > 1
                    else ""
                )
                for n, m, wordings in messages[cell]
            ]
    else:
        lines.append("No test cell lost points.")
    lines += ["", "## Anomalies to check by hand", ""]
    found = anomalies(entries, reference)
    if found:
        lines += ["| student | what | detail |", "|---|---|---|"]
        lines += [f"| {_md_escape(s)} | {k} | {_md_escape(d)} |" for s, k, d in found]
        lines += [
            "",
            "To time a student's speed checks again out of the grading kernel's reach: "
            "`python -m tfperf recheck autograde/submitted/STUDENT/ASSIGNMENT/NOTEBOOK.ipynb` "
            '(docs/instructors.md, "A second opinion").',
        ]
    else:
        lines.append("None.")
    if plots:
        lines += ["", "## Plots", ""] + [f"![{p}]({p})" for p in plots]
    return "\n".join(lines) + "\n"


#: Plots per row in the report's figures: readable at a page's width (about 10 inches).
PLOTS_PER_ROW = 4


def _grid(count: int):
    """A figure of ``count`` small plots, PLOTS_PER_ROW to a row, a page wide; its axes in reading order."""
    from matplotlib.figure import Figure

    columns = min(count, PLOTS_PER_ROW)
    rows = math.ceil(count / columns)
    fig = Figure(figsize=(10, 2.6 * rows), layout="constrained")
    axes = fig.subplots(rows, columns, squeeze=False).ravel()
    for ax in axes[count:]:
        ax.set_visible(False)
    return fig, axes[:count]


def plot_points(entries: list[Entry], path: Path) -> bool:
    fig = points_figure(entries)
    if fig is None:
        return False
    fig.savefig(path, dpi=100)
    return True


def points_figure(entries: list[Entry]):
    """Per test cell, how many students scored what: a bar per score from 0 to the cell's points."""
    from matplotlib.ticker import MaxNLocator

    graded = [e for e in entries if e.status == GRADED]
    cells = sorted({c for e in graded for c in e.cells})
    if not cells:
        return None
    fig, axes = _grid(len(cells))
    for ax, cell in zip(axes, cells):
        got = [e.cells[cell] for e in graded if cell in e.cells]
        full = max(m for _, m in got)
        dist = collections.Counter(s for s, _ in got)
        keys = sorted(set(dist) | {0.0, full})  # the scale's both ends, even where nobody is
        ax.bar([f"{k:g}" for k in keys], [dist.get(k, 0) for k in keys], color="tab:blue")
        ax.set_title(cell, fontsize=9)
        ax.set_xlabel(f"points (of {full:g})", fontsize=8)
        ax.set_ylabel("students", fontsize=8)
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        ax.tick_params(labelsize=8)
    return fig


def plot_speedups(entries: list[Entry], path: Path, reference: str | None = None) -> bool:
    from matplotlib.ticker import MaxNLocator

    compared = comparison(entries, reference)
    by_exercise = collections.defaultdict(list)
    targets = {}
    for entry in entries:
        if entry.status == GRADED and entry.student != compared.student:
            for exercise, value in student_speedups(entry).items():
                by_exercise[exercise].append(value)
            targets |= {row["exercise"]: row.get("target") for row in entry.speedups}
    if not by_exercise:
        return False
    names = sorted(by_exercise)
    fig, axes = _grid(len(names))
    for ax, exercise in zip(axes, names):
        ax.hist(by_exercise[exercise], bins=min(20, max(5, len(by_exercise[exercise]))), color="tab:green")
        if compared.speedups.get(exercise):
            ax.axvline(compared.speedups[exercise], color="black", linestyle="--", label=compared.label)
        if targets.get(exercise):
            ax.axvline(targets[exercise], color="tab:red", label="target")
        ax.set_title(exercise, fontsize=9)
        ax.set_xlabel("median speedup (x)", fontsize=8)
        ax.set_ylabel("students", fontsize=8)
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        ax.tick_params(labelsize=8)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=7)
    fig.savefig(path, dpi=100)
    return True


def shared_beliefs(entries: list[Entry], reference: str | None = None) -> dict[str, list[dict]]:
    """student -> the predictions their graded notebooks shared (the named reference left out)."""
    return {e.student: e.beliefs for e in entries if e.status == GRADED and e.student != reference}


def write(
    reports: Path,
    assignment: str,
    entries: list[Entry],
    run_lines: list[str],
    reference: str | None = None,
    *,
    beliefs_names: bool = False,
) -> Path:
    """Write ``reports/<assignment>/summary.md``, its plots and the class-beliefs page (``beliefs.md``,
    ``beliefs.png``; :mod:`tfperf.classgrading.beliefs`); returns the summary's path."""
    folder = reports / assignment
    folder.mkdir(parents=True, exist_ok=True)
    # Several workers (Slurm array tasks) may write at once: each file is written aside, then renamed.
    tag = f"{os.getpid()}-{threading.get_ident()}"
    plots = []
    drawings = (("points.png", plot_points), ("speedups.png", functools.partial(plot_speedups, reference=reference)))
    for name, draw in drawings:
        tmp = folder / f".{tag}-{name}"
        if draw(entries, tmp):
            tmp.replace(folder / name)
            plots.append(name)
        else:
            (folder / name).unlink(missing_ok=True)
    shared = shared_beliefs(entries, reference)
    earlier = {
        ledger.name: shared_beliefs(Ledger(reports, ledger.name).entries())
        for ledger in sorted((reports / "ledger").glob("*"))
        if ledger.is_dir() and ledger.name != assignment
    }
    picture = beliefs.figure(shared)
    tmp = folder / f".{tag}-beliefs.png"
    if picture is not None:
        picture.savefig(tmp, dpi=100)
        tmp.replace(folder / "beliefs.png")
    else:
        (folder / "beliefs.png").unlink(missing_ok=True)
    page = beliefs.page(
        assignment, shared, earlier, names=beliefs_names, plot="beliefs.png" if picture is not None else None
    )
    _write_text(folder / "beliefs.md", page, tag)
    text = markdown(assignment, entries, run_lines, plots, reference)
    text += (
        "\n## What the class believed\n\nPredictions against measurements, never graded: [beliefs.md](beliefs.md).\n"
    )
    summary = folder / "summary.md"
    _write_text(summary, text, tag)
    return summary


def _write_text(path: Path, text: str, tag: str) -> None:
    tmp = path.parent / f".{tag}-{path.name}"
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)
