"""``python -m tfperf report``: run every chapter on this device and write what it measured.

Executes the reference notebooks (``solutions/``) top to bottom in fresh kernels, so every
measuring cell runs and every graded check times the reference solution against the
unfixed code. Writes one Markdown report, ``report.md``, in ``reports/<device>-<date>/``:
the machine (device, NVIDIA driver, TensorFlow build), then for each chapter the printed
measurements, the plots (PNG files next to the report) with the records behind them, every
reference-vs-unfixed ratio with its target and margin, and any cell that failed. The raw
data (``speed-checks.jsonl``, ``runs.jsonl``) and the executed notebooks are kept beside it.

What the kernels measured reaches the report through two files they append to:
:data:`tfperf.grading.RECORD_ENV_VAR` (each speed check) and
:data:`tfperf.lesson.plots.RUNS_RECORD_ENV_VAR` (each plotted experiment).
"""

from __future__ import annotations

import base64
import datetime
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tfperf.grading import RECORD_ENV_VAR, targets
from tfperf.lesson import plots
from tfperf.runtime import device, logs, sizes

#: Lines of one cell's printed output shown in the report (the executed notebook keeps all).
MAX_OUTPUT_LINES = 60
#: Rows of one run's records shown in the report (``runs.jsonl`` keeps all).
MAX_RECORD_ROWS = 40


# ---------------------------------------------------------------- the machine


def describe_machine() -> dict[str, Any]:
    """Device, driver and TensorFlow build of this machine (imports TensorFlow; allocates nothing on a GPU)."""
    tf = logs.tensorflow()
    info = device.detect()
    return {
        "summary": info.summary(),
        "kind": info.kind,
        "name": info.name,
        "gpus": list(info.gpus),
        "cpu": device.cpu_name(),
        "cpu_count": info.cpu_count,
        "tensorflow": tf.__version__,
        "build": {k: str(v) for k, v in tf.sysconfig.get_build_info().items()},
        "driver": nvidia_driver(),
        "python": platform.python_version(),
        "os": platform.platform(),
    }


def nvidia_driver() -> str:
    """The NVIDIA driver and GPUs as ``nvidia-smi`` reports them, or why there is none."""
    exe = shutil.which("nvidia-smi")
    if not exe:
        return "none (nvidia-smi not found)"
    try:
        out = subprocess.run(
            [exe, "--query-gpu=name,driver_version,memory.total", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=20,
        )
    except (OSError, subprocess.TimeoutExpired) as err:
        return f"unknown (nvidia-smi failed: {err})"
    if out.returncode != 0:
        return f"unknown (nvidia-smi exited {out.returncode}: {out.stderr.strip()[:200]})"
    gpus = [line.split(", ") for line in out.stdout.strip().splitlines() if line.strip()]
    return "; ".join(f"{g[1]} ({g[0]}, {g[2]})" if len(g) == 3 else ", ".join(g) for g in gpus) or "no GPU listed"


def machine_in_subprocess(env: dict[str, str]) -> dict[str, Any]:
    """:func:`describe_machine` in a fresh process with the kernels' environment (TensorFlow stays out of this one)."""
    code = "import json; from tfperf.authoring import report; print(json.dumps(report.describe_machine()))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=600)
    if out.returncode != 0:
        raise RuntimeError(f"Could not describe this machine:\n{out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def slug(text: str, limit: int = 48) -> str:
    """``"NVIDIA H100 80GB HBM3"`` -> ``"nvidia-h100-80gb-hbm3"``."""
    text = re.sub(r"\((?:R|TM|tm|r)\)|@.*$|\bCPU\b", " ", text)
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:limit].strip("-") or "device"


def report_dir(root: Path, machine: dict[str, Any], today: datetime.date) -> Path:
    """``root/<device>-<date>``, numbered (``-2``, ``-3``) when an earlier report has that name."""
    name = slug(machine["name"]) if machine["kind"] == "gpu" else f"cpu-{slug(machine['cpu'])}"
    base = root / f"{name}-{today.isoformat()}"
    path, n = base, 1
    while path.exists():
        n += 1
        path = base.with_name(f"{base.name}-{n}")
    return path


# ---------------------------------------------------------------- running a notebook


@dataclass
class CellResult:
    """What one executed code cell showed, and what its kernel recorded while it ran."""

    index: int
    section: str
    grade_id: str | None
    graded: bool
    text: str = ""
    stderr: str = ""
    error: str | None = None
    images: list[str] = field(default_factory=list)  #: file names in the report's folder
    speed_checks: list[dict[str, Any]] = field(default_factory=list)
    figures: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class ChapterResult:
    """One executed notebook."""

    notebook: str  #: path relative to the checkout, e.g. ``solutions/01_tensors/tensors_and_devices.ipynb``
    title: str
    seconds: float
    cells: list[CellResult]
    aborted: str | None = None  #: why execution stopped before the end (timeout, dead kernel)

    @property
    def chapter(self) -> str:
        return Path(self.notebook).parent.name

    def speed_checks(self) -> list[tuple[CellResult, dict[str, Any]]]:
        return [(cell, row) for cell in self.cells for row in cell.speed_checks]

    def failures(self) -> list[str]:
        """One line per thing that went wrong: an aborted run, a cell's error, stderr in a graded cell."""
        found = [f"execution stopped: {self.aborted}"] if self.aborted else []
        for cell in self.cells:
            where = (
                f"cell {cell.index}" + (f" ({cell.grade_id})" if cell.grade_id else "") + f", section {cell.section!r}"
            )
            if cell.error:
                found.append(f"{where}: {cell.error}")
            if cell.graded and cell.stderr:
                found.append(f"{where} wrote to stderr (nbgrader would score it 0): {_first_lines(cell.stderr, 3)}")
        return found


def _read_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()] if path.exists() else []


def _first_lines(text: str, n: int) -> str:
    lines = text.strip().splitlines()
    return " / ".join(lines[:n]) + (" ..." if len(lines) > n else "")


_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _cell_result(cell, index: int, section: str, images_dir: Path, chapter: str) -> CellResult:
    nbgrader = cell.metadata.get("nbgrader", {})
    result = CellResult(index, section, nbgrader.get("grade_id"), bool(nbgrader.get("grade")))
    text, stderr = [], []
    for output in cell.get("outputs", []):
        kind = output.get("output_type")
        if kind == "stream":
            (stderr if output.get("name") == "stderr" else text).append(output.get("text", ""))
        elif kind == "error":
            result.error = f"{output.get('ename')}: {_ANSI.sub('', output.get('evalue', ''))}"
        elif kind in ("execute_result", "display_data"):
            data = output.get("data", {})
            if "image/png" in data:
                name = f"{chapter}-cell{index:02d}-{len(result.images) + 1}.png"
                (images_dir / name).write_bytes(base64.b64decode(data["image/png"]))
                result.images.append(name)
            elif "text/plain" in data and kind == "execute_result":
                text.append(data["text/plain"] + "\n")
    result.text, result.stderr = "".join(text), "".join(stderr)
    return result


#: A cell that runs this long is named in the progress lines, as is every cell that fails.
SLOW_CELL_SECONDS = 10


def run_notebook(
    path: Path, *, env: dict[str, str], out_dir: Path, timeout: int | None, say: Callable[[str], None] = print
) -> ChapterResult:
    """Execute one notebook in a fresh kernel (errors stay in its cells) and collect what it showed and recorded.

    ``env`` is the kernel's environment; its record files are read after every cell to tell which
    cell made each record. The executed notebook is written to ``out_dir/notebooks/``.
    """
    import nbformat
    from jupyter_client import KernelManager
    from nbclient import NotebookClient
    from nbclient.exceptions import CellTimeoutError, DeadKernelError

    nb = nbformat.read(path, as_version=4)
    speed_file, runs_file = Path(env[RECORD_ENV_VAR]), Path(env[plots.RUNS_RECORD_ENV_VAR])
    seen = {"speed": len(_read_lines(speed_file)), "runs": len(_read_lines(runs_file))}
    made: dict[int, tuple[list[dict], list[dict]]] = {}
    last = [0]
    start = time.monotonic()
    began = [start]

    def on_cell_start(cell, cell_index):
        if cell.cell_type == "markdown" and cell.source.startswith("## "):
            say(f"    {time.monotonic() - start:6.0f} s  {cell.source.splitlines()[0][3:]}")

    def executed(cell, cell_index):
        """Say at once what a long run would otherwise only show at its end: a slow cell, a failed one."""
        took = time.monotonic() - began[0]
        grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        name = f"cell {cell_index}" + (f" ({grade_id})" if grade_id else "")
        errors = [o for o in cell.get("outputs", []) if o.get("output_type") == "error"]
        if errors:
            say(
                f"             {name} failed after {took:.0f} s: {errors[0].get('ename')}: "
                f"{str(errors[0].get('evalue', '')).splitlines()[0][:160] if errors[0].get('evalue') else ''}"
            )
        elif took >= SLOW_CELL_SECONDS:
            say(f"             {name} took {took:.0f} s")
        collect(cell_index)

    def collect(cell_index):
        speed, runs = _read_lines(speed_file), _read_lines(runs_file)
        earlier = made.get(cell_index, ([], []))
        made[cell_index] = (earlier[0] + speed[seen["speed"] :], earlier[1] + runs[seen["runs"] :])
        seen.update(speed=len(speed), runs=len(runs))

    # ipc: the kernel talks over local sockets (in the scratch folder: an absolute path, since the
    # kernel runs in the notebook's folder), not over unencrypted TCP ports
    sockets = str(speed_file.parent / "kernel")
    client = NotebookClient(
        nb,
        km=KernelManager(kernel_name="python3", transport="ipc", ip=sockets),
        timeout=timeout,
        kernel_name="python3",
        allow_errors=True,
        resources={"metadata": {"path": str(path.parent)}},
        on_cell_start=on_cell_start,
        on_cell_execute=lambda cell, cell_index: (
            last.__setitem__(0, cell_index),
            began.__setitem__(0, time.monotonic()),
        ),
        on_cell_executed=lambda cell, cell_index, execute_reply: executed(cell, cell_index),
    )
    aborted = None
    try:
        client.execute(env=env)
    except (CellTimeoutError, DeadKernelError, RuntimeError) as err:
        aborted = f"{type(err).__name__} in cell {last[0]}: {_first_lines(str(err), 4)}"
        collect(last[0])  # what the cell recorded before it was stopped
    seconds = time.monotonic() - start
    (out_dir / "notebooks").mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, out_dir / "notebooks" / path.name)

    chapter = path.parent.name
    title, section, cells = path.stem, "(opening)", []
    for index, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown":
            heading = next((line for line in cell.source.splitlines() if line.startswith("#")), None)
            if heading and heading.startswith("# "):
                title = heading[2:].strip()
            elif heading and heading.startswith("## "):
                section = heading[3:].strip()
            continue
        if cell.cell_type != "code":
            continue
        result = _cell_result(cell, index, section, out_dir, chapter)
        result.speed_checks, result.figures = made.get(index, ([], []))
        cells.append(result)
    return ChapterResult(str(path), title, seconds, cells, aborted)


# ---------------------------------------------------------------- the report


def ratio_row(row: dict[str, Any]) -> dict[str, Any]:
    """A recorded speed check summarized: median/min/max ratio, its target, and the margin (median / target)."""
    ratios = row["ratios"]
    median = statistics.median(ratios)
    return {
        "exercise": row["exercise"],
        "device_class": row["device_class"],
        "target": row["target"],
        "median": median,
        "low": min(ratios),
        "high": max(ratios),
        "pairs": len(ratios),
        "margin": median / row["target"],
        "met": median >= row["target"],
        "reference_ms": row["candidate_s"] * 1e3,
        "unfixed_ms": row["baseline_s"] * 1e3,
    }


def _num(value: Any) -> str:
    if isinstance(value, bool) or value is None:
        return str(value)
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def _cell_text(value: Any) -> str:
    if isinstance(value, list):
        return f"({len(value)} values)"
    if isinstance(value, dict):
        return f"({len(value)} fields)"
    text = _num(value)
    text = text if len(text) <= 60 else text[:57] + "..."
    return text.replace("|", "\\|").replace("\n", " ")


def records_table(records: Sequence[dict[str, Any]], limit: int = MAX_RECORD_ROWS) -> list[str]:
    """Records as a Markdown table: one row per record, one column per field (lists summarized)."""
    if not records:
        return ["(no records)"]
    columns = list(dict.fromkeys(key for record in records for key in record))
    lines = ["| " + " | ".join(columns) + " |", "|" + " --- |" * len(columns)]
    for record in records[:limit]:
        lines.append("| " + " | ".join(_cell_text(record.get(c, "")) for c in columns) + " |")
    if len(records) > limit:
        lines.append(f"\n... {len(records) - limit} more records in `runs.jsonl`.")
    return lines


def _speed_table(chapters: Sequence[ChapterResult]) -> list[str]:
    rows = [(chapter, cell, ratio_row(row)) for chapter in chapters for cell, row in chapter.speed_checks()]
    if not rows:
        return ["No speed check ran."]
    lines = [
        "| Chapter | Exercise | Cell | Target | Median ratio | Min-max | Pairs | Margin (median / target) "
        "| Reference ms | Unfixed ms | Verdict |",
        "|" + " --- |" * 11,
    ]
    for chapter, cell, r in rows:
        kind = "measured" if targets.is_measured(r["exercise"], r["device_class"]) else "reasoned"
        lines.append(
            f"| {chapter.chapter} | `{r['exercise']}` | {cell.index} ({cell.grade_id}) | {r['target']:.2f}x "
            f"[{r['device_class']}, {kind}] | {r['median']:.2f}x | {r['low']:.2f}-{r['high']:.2f}x | {r['pairs']} "
            f"| {r['margin']:.2f} | {r['reference_ms']:.3g} | {r['unfixed_ms']:.3g} "
            f"| {'met' if r['met'] else '**below target**'} |"
        )
    return lines


def render(
    machine: dict[str, Any],
    chapters: Sequence[ChapterResult],
    *,
    size: str,
    started: datetime.datetime,
    seconds: float,
    command: str,
) -> str:
    """The whole report as Markdown."""
    build = machine["build"]
    lines = [
        f"# Course measurements: {machine['name']}",
        "",
        f"Made by `{command}` on {started:%Y-%m-%d %H:%M} UTC in {seconds / 60:.1f} minutes, at experiment size "
        f"**{size}** ({sizes.DESCRIPTIONS[size].split(';')[0]}). Every number below was measured by that run "
        "on this machine.",
        "",
        "## Machine",
        "",
        f"- Device: {machine['summary']}",
        f"- GPUs TensorFlow sees: {', '.join(machine['gpus']) or 'none'}",
        f"- NVIDIA driver: {machine['driver']}",
        f"- CPU: {machine['cpu']}, {machine['cpu_count']} cores",
        f"- TensorFlow {machine['tensorflow']}, build (`tf.sysconfig.get_build_info()`): "
        + (", ".join(f"{k}={v}" for k, v in sorted(build.items())) or "(empty)"),
        f"- Python {machine['python']} on {machine['os']}",
        "- Targets: the course's defaults (`src/tfperf/grading/targets.toml`; `TFPERF_TARGETS` was unset in the kernels)",
        "",
        "## Summary",
        "",
        "| Chapter | Notebook | Minutes | Speed checks | Below target | Failures |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for c in chapters:
        checks = [ratio_row(row) for _, row in c.speed_checks()]
        lines.append(
            f"| {c.title} | `{c.notebook}` | {c.seconds / 60:.1f} | {len(checks)} "
            f"| {sum(not r['met'] for r in checks)} | {len(c.failures())} |"
        )
    lines += [
        "",
        "## Speed checks: reference solution vs unfixed code",
        "",
        "Each graded speed check of the reference notebooks, timed in interleaved pairs on new inputs "
        "(`tfperf.grading.assert_speedup`). Ratio: unfixed time / reference time; the check passes when "
        "the median reaches the target. Margin: median / target (below 1: the reference fails its own "
        "check on this device).",
        "",
        *_speed_table(chapters),
        "",
        "## Failures",
        "",
    ]
    failures = [f"- {c.chapter}: {line}" for c in chapters for line in c.failures()]
    lines += failures or ["None: every cell of every notebook ran without an error."]
    for c in chapters:
        lines += ["", f"## {c.title}", "", f"`{c.notebook}`, executed in {c.seconds:.0f} s."]
        section = None
        for cell in c.cells:
            if not (cell.text or cell.images or cell.figures or cell.error):
                continue
            if cell.section != section:
                section = cell.section
                lines += ["", f"### {section}"]
            lines.append("")
            label = f"Cell {cell.index}" + (f" (`{cell.grade_id}`)" if cell.grade_id else "")
            if cell.text:
                shown = cell.text.rstrip().splitlines()
                more = len(shown) - MAX_OUTPUT_LINES
                body = "\n".join(shown[:MAX_OUTPUT_LINES]) + (
                    f"\n... {more} more lines in the executed notebook" if more > 0 else ""
                )
                lines += [
                    f"<details><summary>{label}: printed output</summary>",
                    "",
                    "```text",
                    body.replace("```", "'''"),
                    "```",
                    "",
                    "</details>",
                ]
            if cell.error:
                lines += ["", f"{label} failed: `{_first_lines(cell.error, 2)}`"]
            for image in cell.images:
                lines += ["", f"![{label}]({image})"]
            for figure in cell.figures:
                for run in figure["runs"]:
                    settings = ", ".join(f"{k}={_cell_text(v)}" for k, v in run["settings"].items())
                    lines += [
                        "",
                        f'Records of `{figure["plot"]}`, run "{run["label"]}"'
                        + (f" ({settings})" if settings else "")
                        + ":",
                        "",
                        *records_table(run["records"]),
                    ]
    return "\n".join(lines) + "\n"


def kernel_env(record_dir: Path, size: str) -> dict[str, str]:
    """The kernels' environment: record every speed check and plotted run, shipped targets, inline plots."""
    env = dict(os.environ)
    env.pop("MPLBACKEND", None)  # the kernels' own inline backend, so that plots become PNG outputs
    env.pop(targets.ENV_VAR, None)
    env.update(
        {
            sizes.ENV_VAR: size,
            "TF_CPP_MIN_LOG_LEVEL": "3",
            RECORD_ENV_VAR: str(record_dir / "speed-checks.jsonl"),
            plots.RUNS_RECORD_ENV_VAR: str(record_dir / "runs.jsonl"),
        }
    )
    return env


def make_report(
    notebooks: Sequence[Path],
    *,
    root: Path,
    out: Path,
    size: str,
    timeout: int | None,
    command: str = "python -m tfperf report",
    say: Callable[[str], None] = print,
) -> tuple[Path, bool]:
    """Run ``notebooks`` and write the report; returns its path and whether everything ran cleanly."""
    started = datetime.datetime.now(datetime.UTC)
    clock = time.monotonic()
    say(f"Report at size {size!r}: describing this machine ...")
    with tempfile.TemporaryDirectory(prefix="tfperf-report-") as scratch:
        return _make_report(
            notebooks,
            root=root,
            out=out,
            size=size,
            timeout=timeout,
            command=command,
            say=say,
            scratch=Path(scratch),
            started=started,
            clock=clock,
        )


def _make_report(notebooks, *, root, out, size, timeout, command, say, scratch, started, clock):
    env = kernel_env(scratch, size)
    machine = machine_in_subprocess(env)
    folder = report_dir(out, machine, started.date())
    folder.mkdir(parents=True)
    say(f"{machine['summary']}\nWriting to {folder}")
    chapters = []
    for i, path in enumerate(notebooks, 1):
        shown = path.resolve().relative_to(root) if path.resolve().is_relative_to(root) else path
        say(f"[{i}/{len(notebooks)}] {shown} ...")
        for name in ("speed-checks.jsonl", "runs.jsonl"):
            (scratch / name).unlink(missing_ok=True)
        chapter = run_notebook(path, env=env, out_dir=folder, timeout=timeout, say=say)
        chapter.notebook = str(shown)
        chapters.append(chapter)
        say(
            f"    done in {chapter.seconds:.0f} s: {len(chapter.speed_checks())} speed checks, "
            f"{len(chapter.failures())} failures"
        )
    with open(folder / "speed-checks.jsonl", "w", encoding="utf-8") as f:
        for c in chapters:
            for cell, row in c.speed_checks():
                f.write(json.dumps({"chapter": c.chapter, "cell": cell.index, **row}) + "\n")
    with open(folder / "runs.jsonl", "w", encoding="utf-8") as f:
        for c in chapters:
            for cell in c.cells:
                for figure in cell.figures:
                    f.write(json.dumps({"chapter": c.chapter, "cell": cell.index, **figure}) + "\n")
    report = folder / "report.md"
    report.write_text(
        render(machine, chapters, size=size, started=started, seconds=time.monotonic() - clock, command=command),
        encoding="utf-8",
    )
    clean = not any(c.failures() for c in chapters)
    say(f"Wrote {report}" + ("" if clean else " (with failures: see its 'Failures' section)"))
    return report, clean
