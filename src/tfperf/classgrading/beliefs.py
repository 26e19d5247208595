"""What the class believed before it measured: the predictions submitted notebooks carry, against the
measurements beside them. Never graded; no student is named unless the instructor asks (``names``).

A learner who commits a prediction and runs its experiment gets a line from
:func:`tfperf.lesson.predictions.reveal` whose output metadata holds the prediction (a range) and the
value measured on the learner's machine, unless they opted out (``predictions.share(False)``).
:func:`from_notebooks` reads those from a *submitted* notebook (before nbgrader clears its outputs), the
grader keeps them in the student's ledger entry, and :func:`page` writes ``beliefs.md`` and
``beliefs.png`` beside the grading summary:

- per experiment, how many shared a prediction, how many chose each range, the spread of the
  measurements, how many measured inside the range they had chosen, and how many guessed too low
  or too high;
- across the chapters graded so far (every assignment's ledger), whether the class's direction of error
  persists: no experiment is asked twice, so what recurs is the direction, per chapter, and per student
  (guessed too low in an earlier chapter, and again in this one).

A submitted notebook is the learner's file: every field is checked (types, finite numbers, lengths)
and anything else is dropped.
"""

from __future__ import annotations

import collections
import math
import re
import statistics
from pathlib import Path

import nbformat

from tfperf.lesson.predictions import OUTPUT_KEY

INSIDE, TOO_LOW, TOO_HIGH = "inside", "too low", "too high"  # the prediction, against the measurement
_KEY = re.compile(r"^\d\d_[a-z0-9_]+\.[a-z0-9_]+$")


def _number(value, *, allow_none: bool = False) -> float | None:
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(value)
    return float(value)


def _text(value, limit: int) -> str:
    if not isinstance(value, str) or len(value) > limit:
        raise ValueError(value)
    return value


def clean(shared) -> dict | None:
    """One shared prediction as the report uses it, or None if it is not one."""
    try:
        row = {
            "key": _text(shared["key"], 100),
            "label": _text(shared["label"], 100),
            "low": _number(shared["low"]),
            "high": _number(shared.get("high"), allow_none=True),
            "measured": _number(shared["measured"]),
            "unit": _text(shared.get("unit", "x"), 8),
        }
    except (TypeError, KeyError, ValueError):
        return None
    if not _KEY.match(row["key"]) or (row["high"] is not None and row["high"] < row["low"]):
        return None
    return row


def from_notebooks(paths: list[Path]) -> list[dict]:
    """The shared predictions in these notebooks' outputs, the last one per experiment."""
    found: dict[str, dict] = {}
    for path in paths:
        try:
            nb = nbformat.read(path, as_version=4)
        except Exception:  # noqa: BLE001 (not a notebook: the grader reports that itself)
            continue
        for cell in nb.cells:
            for output in cell.get("outputs", []) if cell.cell_type == "code" else []:
                row = clean((output.get("metadata") or {}).get(OUTPUT_KEY))
                if row is not None:
                    found[row["key"]] = row
    return [found[key] for key in sorted(found)]


def verdict(row: dict) -> str:
    """Where the measurement fell against the predicted range."""
    if row["measured"] < row["low"]:
        return TOO_HIGH  # the range was above what was measured
    if row["high"] is not None and row["measured"] >= row["high"]:
        return TOO_LOW
    return INSIDE


def _chapter(key: str) -> str:
    return key.split(".", 1)[0]


def _range(row: dict) -> str:
    return f"{row['label']}"


def _fmt(value: float, unit: str) -> str:
    return f"{value:.3g}{unit}"


def _directions(shared: dict[str, list[dict]]) -> dict[str, dict[str, str]]:
    """student -> chapter -> the direction of most of their errors there (or "inside")."""
    out: dict[str, dict[str, str]] = {}
    for student, rows in shared.items():
        by_chapter: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
        for row in rows:
            by_chapter[_chapter(row["key"])][verdict(row)] += 1
        out[student] = {}
        for chapter, counts in by_chapter.items():
            wrong = counts[TOO_LOW] - counts[TOO_HIGH]
            out[student][chapter] = TOO_LOW if wrong > 0 else TOO_HIGH if wrong < 0 else INSIDE
    return out


def page(
    assignment: str,
    shared: dict[str, list[dict]],
    earlier: dict[str, dict[str, list[dict]]] | None = None,
    *,
    names: bool = False,
    plot: str | None = None,
) -> str:
    """``beliefs.md``: ``shared`` is student -> this assignment's shared predictions; ``earlier`` is
    assignment -> student -> shared predictions of the other assignments graded so far."""
    lines = [f"# What the class believed: {assignment}", ""]
    lines.append(
        "Predictions learners committed before each experiment, beside what their own machine measured. "
        "Never graded. Only notebooks whose learner did not opt out (`predictions.share(False)`) carry them; "
        + ("students are named (asked for with --beliefs-names)." if names else "no student is named here.")
    )
    lines.append("")
    by_key: dict[str, list[dict]] = collections.defaultdict(list)
    for rows in shared.values():
        for row in rows:
            by_key[row["key"]].append(row)
    sharing = sum(1 for rows in shared.values() if rows)
    lines.append(f"Students whose notebook shared predictions: {sharing} of {len(shared)} graded.")
    lines.append("")
    if not by_key:
        lines.append("No submitted notebook carried a prediction with its measurement.")
        return "\n".join(lines) + "\n"
    lines += [
        "## Per experiment",
        "",
        "| experiment | predictions | measured: min / median / max | inside their range | guessed too low | "
        "guessed too high | ranges chosen (students) |",
        "|---|---|---|---|---|---|---|",
    ]
    for key in sorted(by_key):
        rows = by_key[key]
        unit = rows[0]["unit"]
        measured = [r["measured"] for r in rows]
        counts = collections.Counter(verdict(r) for r in rows)
        chosen = collections.Counter((r["low"], r["label"]) for r in rows)
        ranges = ", ".join(f"{label}: {n}" for (_, label), n in sorted(chosen.items()))
        spread = " / ".join(_fmt(v, unit) for v in (min(measured), statistics.median(measured), max(measured)))
        lines.append(
            f"| {key} | {len(rows)} | {spread} | {counts[INSIDE]} | {counts[TOO_LOW]} | {counts[TOO_HIGH]} | {ranges} |"
        )
    lines += [
        "",
        "A range is *too low* when the learner's own measurement lay above it (the effect was underestimated), "
        "*too high* when it lay below.",
    ]
    lines += ["", "## Across chapters", ""] + _across(assignment, shared, earlier or {})
    if names:
        lines += [
            "",
            "## Per student",
            "",
            "| student | experiment | predicted | measured | |",
            "|---|---|---|---|---|",
        ]
        for student in sorted(shared):
            for row in shared[student]:
                lines.append(
                    f"| {student} | {row['key']} | {_range(row)} | {_fmt(row['measured'], row['unit'])} | {verdict(row)} |"
                )
    if plot:
        lines += ["", f"![{plot}]({plot})"]
    return "\n".join(lines) + "\n"


def _across(assignment: str, shared: dict[str, list[dict]], earlier: dict[str, dict[str, list[dict]]]) -> list[str]:
    everything = {a: s for a, s in earlier.items() if a != assignment} | {assignment: shared}
    per_chapter: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    for students in everything.values():
        for rows in students.values():
            for row in rows:
                per_chapter[_chapter(row["key"])][verdict(row)] += 1
    lines = [
        "No experiment is predicted twice, so what can persist is the direction of the errors. Every chapter "
        "graded so far (its ledger in reports/ledger/):",
        "",
        "| chapter | predictions | inside | guessed too low | guessed too high |",
        "|---|---|---|---|---|",
    ]
    for chapter in sorted(per_chapter):
        c = per_chapter[chapter]
        lines.append(f"| {chapter} | {sum(c.values())} | {c[INSIDE]} | {c[TOO_LOW]} | {c[TOO_HIGH]} |")
    here = {_chapter(r["key"]) for rows in shared.values() for r in rows}
    before: dict[str, dict[str, str]] = collections.defaultdict(dict)
    for students in everything.values():
        for student, chapters in _directions(students).items():
            before[student] |= chapters
    lines.append("")
    for direction in (TOO_LOW, TOO_HIGH):
        again = total = 0
        for chapters in before.values():
            now = [chapters[c] for c in here if c in chapters]
            past = [d for c, d in chapters.items() if here and c < min(here)]
            if now and direction in past:
                total += 1
                again += now[0] == direction
        if total:
            lines.append(
                f"- Of the {total} student(s) who mostly guessed {direction} in an earlier chapter, {again} still did here."
            )
    if lines[-1] == "":
        lines.append("- No student shared predictions in an earlier chapter as well as in this one.")
    return lines


def figure(shared: dict[str, list[dict]]):
    """Per experiment, each learner's predicted range (a bar) and their measurement (a dot: green inside the
    range, red outside), one row per learner, sorted by the measurement; a log scale for ratios."""
    from matplotlib.figure import Figure

    by_key: dict[str, list[dict]] = collections.defaultdict(list)
    for rows in shared.values():
        for row in rows:
            by_key[row["key"]].append(row)
    if not by_key:
        return None
    keys = sorted(by_key)
    columns = min(2, len(keys))
    rows_of_plots = math.ceil(len(keys) / columns)
    fig = Figure(figsize=(10, 0.6 + 2.8 * rows_of_plots), layout="constrained")
    axes = fig.subplots(rows_of_plots, columns, squeeze=False).ravel()
    for ax in axes[len(keys) :]:
        ax.set_visible(False)
    for ax, key in zip(axes, keys):
        rows = sorted(by_key[key], key=lambda r: r["measured"])
        ratio = rows[0]["unit"] == "x" and all(r["measured"] > 0 and r["low"] >= 0 for r in rows)
        values = [r["measured"] for r in rows] + [r["low"] for r in rows if r["low"] > 0]
        values += [r["high"] for r in rows if r["high"] is not None]
        top = max(values) * (3 if ratio else 1.2)
        bottom = (min(v for v in values if v > 0) / 3) if ratio else min(0.0, min(values))
        for y, row in enumerate(rows):
            low = max(row["low"], bottom)
            high = row["high"] if row["high"] is not None else top
            ax.plot([low, high], [y, y], color="tab:blue", linewidth=5, alpha=0.35, solid_capstyle="butt")
            ax.plot(
                [row["measured"]], [y], "o", color="tab:green" if verdict(row) == INSIDE else "tab:red", markersize=5
            )
        if ratio:
            ax.set_xscale("log")
        ax.set_xlim(bottom, top)
        ax.set_yticks([])
        ax.set_ylim(-1, len(rows))
        ax.set_title(key, fontsize=9)
        ax.set_xlabel(
            "speedup (x)" if rows[0]["unit"] == "x" else f"measured ({rows[0]['unit'] or 'value'})", fontsize=8
        )
        ax.tick_params(labelsize=8)
    fig.suptitle(
        "Predicted range (bar) and own measurement (dot: green inside, red outside), one row per learner", fontsize=9
    )
    return fig
