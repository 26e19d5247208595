"""Command line: ``python -m tfperf doctor | ceilings | diagnose | runs | calibrate | workspace | report | recheck | grade | export``."""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import statistics
import sys
import tempfile
from pathlib import Path

from tfperf import grading
from tfperf.autograding import recheck
from tfperf.grading import targets
from tfperf.grading.speed import ALL_PAIRS_ENV_VAR
from tfperf.runtime import checkout, device, logs


def doctor() -> int:
    """Print what TensorFlow runs on and any problem with the set-up; exit 1 if there is one."""
    info = logs.quietly(device.detect)
    print(info.summary())
    problems = device.health_check(info)
    for problem in problems:
        print(f"Problem: {problem}")
    if not problems:
        print("No problems found.")
    return 1 if any("expected" in p for p in problems) else 0


def target_from_ratios(ratios: list[float], *, floor: float = 1.5) -> float:
    """A target halfway (geometrically) between 1x and the reference's worst measured ratio.

    That leaves the same factor of margin below the reference as above the unfixed code.
    """
    worst = min(ratios)
    return max(floor, math.floor(math.sqrt(worst) * 10) / 10)


@contextlib.contextmanager
def _environ(values: dict[str, str]):
    """Set environment variables for the block, then restore them."""
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def run_notebook(path: Path, timeout: int = 600) -> None:
    """Execute a notebook top to bottom in a fresh kernel (errors are left in the copy)."""
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    NotebookClient(
        nb,
        timeout=timeout,
        kernel_name="python3",
        allow_errors=True,
        resources={"metadata": {"path": str(path.parent)}},
    ).execute()


def ceilings(size: str | None, *, force: bool, as_json: bool) -> int:
    """Print this device's card (tfperf.measure.ceilings), measuring it unless it is cached."""
    from tfperf.measure import ceilings as device_card

    card, cached = device_card.card(size, force=force, progress=lambda m: print(f"measuring: {m}", file=sys.stderr))
    if as_json:
        print(json.dumps(card.to_dict(), indent=1))
        return 0
    print("\n".join(card.table()))
    print(f"(cached in {cached}; --force measures again)" if cached else "(measured now; kept for next time)")
    return 0


def calibrate(notebooks: list[Path], out: Path) -> int:
    """Run the reference solutions, record their speedups, and write targets derived from them."""
    with tempfile.TemporaryDirectory() as tmp:
        record = Path(tmp) / "record.jsonl"
        # The kernels inherit these: record every speedup, against the shipped defaults
        # (not an old calibration), with small demonstrations.
        kernel_env = {
            targets.ENV_VAR: "",
            grading.RECORD_ENV_VAR: str(record),
            ALL_PAIRS_ENV_VAR: "1",  # targets come from the smallest ratio: every pair, none left out once settled
            "TFPERF_SIZE": os.environ.get("TFPERF_SIZE", "ci"),
            "TF_CPP_MIN_LOG_LEVEL": "3",
        }
        with _environ(kernel_env):
            for path in notebooks:
                print(f"Running {path} ...", flush=True)
                run_notebook(path)
        rows = [json.loads(line) for line in record.read_text().splitlines()] if record.exists() else []
    if not rows:
        print("No throughput checks ran: nothing to calibrate.", file=sys.stderr)
        return 1
    by_key: dict[tuple[str, str], list[float]] = {}
    for row in rows:
        by_key.setdefault((row["exercise"], row["device_class"]), []).extend(row["ratios"])
    table: dict[str, dict[str, float]] = {}
    machine = logs.quietly(device.detect).summary()
    lines = [
        f"Calibrated by `python -m tfperf calibrate` on {machine}",
        "Reference solution vs unfixed code (interleaved pairs):",
    ]
    for (exercise, device_class), ratios in sorted(by_key.items()):
        target = target_from_ratios(ratios)
        table.setdefault(exercise, {})[device_class] = target
        lines.append(
            f"  {exercise} [{device_class}]: median {statistics.median(ratios):.2f}x, "
            f"min {min(ratios):.2f}x over {len(ratios)} pairs -> target {target:.2f}x"
        )
    out.write_text(targets.dumps(table, header="\n".join(lines)), encoding="utf-8")
    print("\n".join(lines))
    print(f"Wrote {out}")
    return 0


def workspace(start_arg: bool = False) -> int:
    """Give the learner their own copies of any notebooks they do not have yet. With ``start_arg``, what it says
    goes to stderr, and stdout gets JupyterLab's option that opens chapter 1 on the first start (else nothing)."""
    from tfperf.lesson import workspace as ws

    out = sys.stderr if start_arg else sys.stdout
    root = checkout.course_root()
    copied, kept = ws.prepare(root)
    for path in copied:
        print(f"New: {path.relative_to(root)}", file=out)
    if kept:
        print(f"Your {len(kept)} notebook(s) in {ws.WORK_DIR}/ are kept as they are.", file=out)
    first = ws.first_start(root) if start_arg else None
    if first:
        print(f"--LabApp.default_url=/lab/tree/{first}")
    return 0


def grade(args: argparse.Namespace) -> int:
    """Grade a class (tfperf.classgrading), or write (and submit) a Slurm array job that does."""
    from tfperf.classgrading import batch
    from tfperf.classgrading.submissions import DEFAULT_ZIP_REGEXP

    course = (args.course or checkout.course_root() / "autograde").resolve()
    if args.slurm:
        return grade_on_slurm(args, course)
    options = batch.Options(
        args.assignment,
        course,
        students=args.students,
        jobs=args.jobs,
        cores_per_job=args.cores_per_job,
        force=args.force,
        db_url=args.db_url,
        execute_timeout=args.execute_timeout,
        zip_collect=args.zip_collect,
        zip_regexp=args.zip_regexp or DEFAULT_ZIP_REGEXP,
        progress=not args.no_progress,
        reference=args.reference,
        beliefs_names=args.beliefs_names,
        kernel=args.kernel,
    )
    try:
        outcome = batch.run(options)
    except (LookupError, FileNotFoundError, RuntimeError) as problem:
        print(f"tfperf grade: {problem}", file=sys.stderr)
        return 2
    for line in batch.outcome_lines(outcome):
        print(line)
    for student in outcome.rejected + outcome.failed:
        print(f"Look at: {student} (see the summary)")
    print(f"Summary: {outcome.summary}")
    if outcome.interrupted:
        return 130
    exported = [export_after_grading(args, course, lms) for lms in args.export]
    return 1 if outcome.failed else max(exported, default=0)


def export_after_grading(args: argparse.Namespace, course: Path, lms: str) -> int:
    """``tfperf export --lms LMS --roster ROSTER --assignment ASSIGNMENT`` for the assignment just graded."""
    print(f"Export to {lms}:")
    return export_grades(
        argparse.Namespace(
            lms=lms,
            roster=args.roster,
            course=course,
            assignment=[args.assignment],
            db_url=args.db_url,
            output=None,
            moodle_id="email",
            column=[],
            missing_as_zero=False,
            allow_unmatched=False,
        )
    )


def grade_on_slurm(args: argparse.Namespace, course: Path) -> int:
    """Write the Slurm array job for the students to grade (and submit it with ``--submit``)."""
    try:
        from tfperf.classgrading import slurm
    except ImportError:
        print("tfperf grade --slurm: this checkout has no tfperf.classgrading.slurm.", file=sys.stderr)
        return 2
    from tfperf.classgrading.ledger import Ledger, submission_checksum

    students = args.students or sorted(
        p.parent.name for p in (course / "submitted").glob(f"*/{args.assignment}") if p.is_dir()
    )
    if not args.force:  # the array's tasks skip them anyway; no need to queue them
        ledger = Ledger(course / "reports", args.assignment)
        students = [
            s
            for s in students
            if not ledger.is_done(s, submission_checksum(course / "submitted" / s / args.assignment))
        ]
    if not students:
        print("Nothing to grade: every submission is graded already (--force grades again).")
        return 0
    if not args.db_url:
        print(
            "Warning: no --db-url: the array's tasks would share the SQLite gradebook; use PostgreSQL.", file=sys.stderr
        )
    out = course / "slurm" / f"grade-{args.assignment}.sbatch"
    out.parent.mkdir(parents=True, exist_ok=True)
    # What each task's `tfperf grade` must do as this command was asked to (without --force, a task would
    # skip a student this command queued again).
    forwarded = ["--force"] if args.force else []
    if args.execute_timeout is not None:
        forwarded += ["--execute-timeout", str(args.execute_timeout)]
    if args.cores_per_job != 1:
        forwarded += ["--cores-per-job", str(args.cores_per_job)]
    if args.reference:
        forwarded += ["--reference", args.reference]
    if args.beliefs_names:
        forwarded.append("--beliefs-names")
    if args.kernel != "run":
        forwarded += ["--kernel", args.kernel]
    try:
        script = slurm.write_array_job(
            args.assignment,
            students,
            course,
            out,
            db_url=args.db_url,
            chunk=args.chunk,
            gpus_per_task=args.gpus_per_task,
            exclusive=not args.gpus_per_task,
            max_running=args.max_running,
            extra_sbatch=args.sbatch,
            grade_args=forwarded,
        )
    except ValueError as problem:
        print(f"tfperf grade --slurm: {problem}", file=sys.stderr)
        return 2
    print(f"Wrote {script} ({len(students)} student(s)).")
    if args.submit:
        print(f"Submitted job {slurm.submit(script)}.")
    return 0


def export_grades(args: argparse.Namespace) -> int:
    """Write the gradebook's scores as the CSV file Canvas's or Moodle's gradebook imports (tfperf.classgrading.lms)."""
    from tfperf.classgrading import lms

    course = (args.course or checkout.course_root() / "autograde").resolve()
    options = lms.Options(
        args.lms,
        args.roster,
        course,
        assignments=args.assignment,
        db_url=args.db_url,
        output=args.output,
        moodle_id=args.moodle_id,
        columns=args.column,
        missing_as_zero=args.missing_as_zero,
    )
    try:
        outcome = lms.run(options)
    except lms.ExportError as problem:
        for line in problem.problems:
            print(f"tfperf export: {line}", file=sys.stderr)
        print("tfperf export: nothing written.", file=sys.stderr)
        return 2
    out, err = lms.report_lines(outcome)
    for line in err:
        print(line, file=sys.stderr)
    for line in out:
        print(line)
    if outcome.unmatched and not args.allow_unmatched:
        print(
            f"tfperf export: {len(outcome.unmatched)} graded student(s) not in the roster: add them to "
            f"{args.roster}, or accept this with --allow-unmatched.",
            file=sys.stderr,
        )
        return 1
    return 0


def report(notebooks: list[Path], out: Path | None, size: str, timeout: int | None) -> int:
    """Run the reference notebooks on this device and write one Markdown report (tfperf.authoring.report)."""
    from tfperf.authoring import report as reporting

    root = checkout.course_root()
    command = " ".join(["python -m tfperf report", f"--size {size}", *map(str, notebooks)])
    notebooks = notebooks or sorted((root / "solutions").glob("*/*.ipynb"))
    _, clean = reporting.make_report(
        notebooks, root=root, out=out or root / "reports", size=size, timeout=timeout, command=command
    )
    return 0 if clean else 1


def diagnose(
    script: Path,
    args: list[str],
    *,
    steps: int,
    warmup: int,
    as_json: bool,
    everything: bool = False,
    profile_dir: Path | None = None,
    input_wait: bool = True,
    db_url: str | None = None,
) -> int:
    """Run a training script as it is, diagnose its steps, print what slows it and record the diagnosis in the run
    registry (tfperf.diagnosis.script)."""
    from tfperf.diagnosis import registry
    from tfperf.diagnosis.script import ScriptProblem, diagnose_script

    # TensorFlow's own start-up lines (the absl preamble, oneDNN's notice) bypass TF_CPP_MIN_LOG_LEVEL and come when
    # the script imports it: kept off the report; what else the script wrote to stderr is shown after its run
    captured, problem = logs.Captured(), None
    try:  # with --json, what the script prints goes to stderr: stdout is the diagnosis alone
        with logs.captured_stderr() as captured, contextlib.redirect_stdout(sys.stderr if as_json else sys.stdout):
            found = diagnose_script(
                script, args, steps=steps, warmup=warmup, profile_dir=profile_dir, input_wait=input_wait
            )
    except ScriptProblem as err:
        problem = err
    finally:
        logs.replay_unless_noise(captured)
    if problem is not None:
        print(f"tfperf diagnose: {problem}", file=sys.stderr)
        return 2
    print(json.dumps(found.to_dict(), indent=1) if as_json else found.report(everything=everything))
    try:
        kept = registry.Registry(db_url).add(registry.diagnosis_run(found, script))
        if not as_json:
            print(f"Recorded in the run registry as run {kept.id} (python -m tfperf runs --name '{kept.name}').")
    except Exception as err:  # noqa: BLE001 (a registry that cannot be written: the diagnosis still stands)
        print(f"tfperf diagnose: the run registry could not record this diagnosis: {err}", file=sys.stderr)
    return 0


def runs(*, url: str | None, name: str | None, as_json: bool) -> int:
    """List the runs in the run registry (tfperf.diagnosis.registry)."""
    from tfperf.diagnosis import registry

    try:
        found = registry.Registry(url)
        listed = found.runs(name)
    except Exception as err:  # noqa: BLE001 (SQLAlchemy's errors: a URL it cannot open, a server that is not there)
        cause = getattr(err, "orig", None) or err  # the driver's own error, without SQLAlchemy's wrapping
        reason = str(cause).strip().splitlines()[0] if str(cause).strip() else type(cause).__name__
        print(f"tfperf runs: cannot read {registry.shown(url or registry.default_url())}: {reason}", file=sys.stderr)
        return 2
    print(json.dumps(registry.to_dicts(listed), indent=1) if as_json else found.table(listed))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tfperf")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("doctor", help="report the device TensorFlow sees and any set-up problem")
    ceil = sub.add_parser("ceilings", help="this device's measured ceilings (matmul, bandwidth, overheads), cached")
    ceil.add_argument(
        "--size", choices=("full", "ci"), help="full (learner scale) or ci (small and quick); default: the course's"
    )
    ceil.add_argument("--force", action="store_true", help="measure again even if a card is cached")
    ceil.add_argument("--json", action="store_true", help="print the card as JSON")
    diag = sub.add_parser(
        "diagnose",
        help="run a training script as it is, measure its training steps with the course's counters, say what slows it",
    )
    diag.add_argument("script", type=Path, help="a Python training script, run unmodified as __main__")
    diag.add_argument("script_args", nargs="*", metavar="ARG", help="the script's own arguments, after --")
    diag.add_argument("--steps", type=int, default=20, help="training steps measured (default 20)")
    diag.add_argument("--warmup", type=int, default=2, help="training steps run first, not measured (default 2)")
    diag.add_argument("--json", action="store_true", help="print the counts and findings as JSON")
    diag.add_argument("--all", action="store_true", help="also say in full what was checked and is not worth fixing")
    diag.add_argument(
        "--profile-dir",
        type=Path,
        help="keep the TensorFlow Profiler's capture of 5 more steps there, for XProf (by default it is temporary)",
    )
    diag.add_argument(
        "--no-input", action="store_true", help="do not capture more steps with the Profiler for the input wait"
    )
    diag.add_argument(
        "--db-url", help="the run registry to record the diagnosis in (default: $TFPERF_RUNS_DB or SQLite)"
    )
    rn = sub.add_parser("runs", help="list the training runs recorded in the run registry")
    rn.add_argument("--db-url", help="the registry's database (a SQLAlchemy URL; default: $TFPERF_RUNS_DB or SQLite)")
    rn.add_argument("--name", help="only the runs of this name")
    rn.add_argument("--json", action="store_true", help="print the runs as JSON")
    wsp = sub.add_parser("workspace", help="copy notebooks you do not have yet into my-work/ (never overwrites)")
    wsp.add_argument(
        "--start-arg",
        action="store_true",
        help="print JupyterLab's option that opens chapter 1 the first time it starts on my-work/ (make lab)",
    )
    cal = sub.add_parser("calibrate", help="measure reference solutions and write throughput targets")
    cal.add_argument(
        "notebooks", nargs="*", type=Path, help="solution notebooks (default: the checkout's solutions/*/*.ipynb)"
    )
    cal.add_argument("--out", type=Path, help="targets file to write (default: the checkout's autograde/targets.toml)")
    rechecking = sub.add_parser("recheck", help="time a submission's speed checks again, out of its kernel's reach")
    recheck.add_arguments(rechecking)
    gr = sub.add_parser("grade", help="grade a class: autograde, feedback, grades.csv and a summary (resumable)")
    gr.add_argument("assignment")
    gr.add_argument("--students", nargs="+", metavar="ID", help="only these students (default: every submission)")
    gr.add_argument(
        "--jobs",
        type=int,
        default=1,
        help="students graded at once, each pinned to its own CPU set (and GPU); at most one per "
        "disjoint set of --cores-per-job physical cores",
    )
    gr.add_argument("--cores-per-job", type=int, default=1, help="physical cores each parallel grader gets (default 1)")
    gr.add_argument("--force", action="store_true", help="grade again students already graded for this submission")
    gr.add_argument(
        "--reference",
        metavar="STUDENT",
        help="the student id under which the reference solution was graded: the summary compares speedups with it "
        "(default: with the class median)",
    )
    gr.add_argument(
        "--beliefs-names",
        action="store_true",
        help="name the students on the class-beliefs page (reports/ASSIGNMENT/beliefs.md; default: no names)",
    )
    gr.add_argument("--db-url", help="the gradebook (nbgrader's CourseDirectory.db_url; default: SQLite in the course)")
    gr.add_argument(
        "--zip-collect",
        action="store_true",
        help="first collect LMS downloads from downloaded/ASSIGNMENT/archive with nbgrader zip_collect",
    )
    gr.add_argument(
        "--zip-regexp", help="file-name pattern of the LMS downloads (nbgrader's FileNameCollectorPlugin.named_regexp)"
    )
    gr.add_argument(
        "--export",
        action="append",
        default=[],
        choices=("canvas", "moodle"),
        help="then write the assignment's grades as this LMS's gradebook import (tfperf export; with --roster; "
        "repeatable)",
    )
    gr.add_argument("--roster", type=Path, help="with --export: the roster CSV file (docs/lms-export.md)")
    gr.add_argument(
        "--kernel",
        choices=("run", "imports", "none"),
        default="run",
        help="what nbgrader's kernel runs, for the outputs in the feedback (the grades are the same): run, the whole "
        "notebook (default); imports, the demonstrations for their imports only; none, no kernel (fastest)",
    )
    gr.add_argument("--execute-timeout", type=int, help="seconds a cell may run (nbgrader's Execute.timeout)")
    gr.add_argument("--course", type=Path, help="the nbgrader folder (default: the checkout's autograde/)")
    gr.add_argument("--no-progress", action="store_true", help="no progress bar")
    gr.add_argument("--slurm", action="store_true", help="write a Slurm array job instead of grading here")
    gr.add_argument("--submit", action="store_true", help="with --slurm: submit it with sbatch")
    gr.add_argument("--chunk", type=int, default=1, help="with --slurm: students per array task (default 1)")
    gr.add_argument(
        "--gpus-per-task",
        type=int,
        default=0,
        help="with --slurm: each task gets N GPUs of its own (--gres=gpu:N) instead of a whole node "
        "(--exclusive, the default)",
    )
    gr.add_argument("--max-running", type=int, help="with --slurm: at most this many array tasks at once")
    gr.add_argument(
        "--sbatch",
        action="append",
        default=[],
        metavar="OPTION",
        help="with --slurm: an sbatch option for the script, e.g. --sbatch=--partition=gpu (repeatable)",
    )
    ex = sub.add_parser(
        "export",
        help="write the gradebook's scores as the CSV file Canvas's or Moodle's gradebook imports "
        "(reports/<lms>-grades.csv; docs/lms-export.md)",
    )
    ex.add_argument("--lms", required=True, choices=("canvas", "moodle"), help="the LMS whose import reads the file")
    ex.add_argument(
        "--roster",
        required=True,
        type=Path,
        help="CSV file mapping nbgrader_id to the LMS's ids (columns: docs/lms-export.md)",
    )
    ex.add_argument(
        "--assignment",
        action="extend",
        nargs="+",
        metavar="NAME",
        help="the assignments to export, in this order (default: every assignment of the gradebook with a submission)",
    )
    ex.add_argument(
        "--column",
        action="append",
        default=[],
        metavar="ASSIGNMENT=NAME",
        help="the file's column name for an assignment, e.g. '08_capstone=Capstone (1234)' for Canvas's "
        "assignment 1234 (default: the nbgrader name; repeatable)",
    )
    ex.add_argument(
        "--moodle-id",
        choices=("email", "username", "idnumber", "userid"),
        default="email",
        help="with --lms moodle: the roster column, and Moodle user field, that identifies students (default: email)",
    )
    ex.add_argument(
        "--missing-as-zero",
        action="store_true",
        help="a roster student without a submission gets 0 (default: no grade, an empty cell; '-' for Moodle)",
    )
    ex.add_argument(
        "--allow-unmatched",
        action="store_true",
        help="exit 0 even when graded students are missing from the roster (they are listed, not written)",
    )
    ex.add_argument("--course", type=Path, help="the nbgrader folder (default: the checkout's autograde/)")
    ex.add_argument("--db-url", help="the gradebook (nbgrader's CourseDirectory.db_url; default: SQLite in the course)")
    ex.add_argument("--output", type=Path, help="the file to write (default: COURSE/reports/<lms>-grades.csv)")
    rep = sub.add_parser(
        "report",
        help="run every chapter's reference notebook here and write a Markdown report "
        "of what it measured (reports/<device>-<date>/report.md)",
    )
    rep.add_argument(
        "notebooks", nargs="*", type=Path, help="notebooks to run (default: the checkout's solutions/*/*.ipynb)"
    )
    rep.add_argument(
        "--size",
        choices=("full", "ci"),
        default="full",
        help="experiment size: full (learner scale, default) or ci (small and quick)",
    )
    rep.add_argument("--out", type=Path, help="folder the report's folder goes in (default: the checkout's reports/)")
    rep.add_argument("--timeout", type=int, default=1800, help="seconds one cell may run (default: 1800)")
    args = parser.parse_args(argv)
    if args.command == "report":
        return report(args.notebooks, args.out, args.size, args.timeout)
    if args.command == "recheck":
        return recheck.run(args)
    if args.command == "grade":
        if not args.slurm:
            for flag, given in (
                ("--submit", args.submit),
                ("--chunk", args.chunk != 1),
                ("--gpus-per-task", args.gpus_per_task),
                ("--max-running", args.max_running),
                ("--sbatch", args.sbatch),
            ):
                if given:
                    parser.error(f"{flag} goes with --slurm")
        elif args.export:
            parser.error("--export goes without --slurm: run tfperf export once the array job has graded everyone")
        if bool(args.export) != bool(args.roster):
            parser.error("--export and --roster go together")
        return grade(args)
    if args.command == "export":
        if args.lms != "moodle" and args.moodle_id != "email":
            parser.error("--moodle-id goes with --lms moodle")
        return export_grades(args)
    if args.command == "doctor":
        return doctor()
    if args.command == "ceilings":
        return ceilings(args.size, force=args.force, as_json=args.json)
    if args.command == "diagnose":
        return diagnose(
            args.script,
            args.script_args,
            steps=args.steps,
            warmup=args.warmup,
            as_json=args.json,
            everything=args.all,
            profile_dir=args.profile_dir,
            input_wait=not args.no_input,
            db_url=args.db_url,
        )
    if args.command == "workspace":
        return workspace(args.start_arg)
    if args.command == "runs":
        return runs(url=args.db_url, name=args.name, as_json=args.json)
    if args.notebooks and args.out:
        return calibrate(args.notebooks, args.out)
    root = checkout.course_root()  # the defaults do not depend on the working directory
    notebooks = args.notebooks or sorted((root / "solutions").glob("*/*.ipynb"))
    return calibrate(notebooks, args.out or root / "autograde" / "targets.toml")
