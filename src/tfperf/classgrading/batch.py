"""Grade a batch of students with nbgrader: one nbgrader process per student, resumable.

For each student: ``nbgrader autograde ASSIGNMENT --student ID --force``, then
``nbgrader generate_feedback ASSIGNMENT --student ID --force``, with the course's own
configuration (the sandboxed kernel, the static screen); then the scores are read back from
the gradebook, what went wrong from the graded notebook, the speedups from the throughput
checks' record (``TFPERF_RECORD``), and everything goes to the student's ledger file. At the
end, ``nbgrader export`` writes ``grades.csv`` and :mod:`report` the summary.

``jobs`` students are graded at once, each grader pinned to its own CPU set (and GPU)
(:mod:`cpusets`). Ctrl-C (or SIGTERM, e.g. from Slurm) stops the graders that are running;
their students have no ledger entry yet and are graded next run, from scratch (``--force``
makes nbgrader replace what a stopped run left); every student whose entry was written is
skipped next run unless the submission changed or ``force`` is set.
"""

from __future__ import annotations

import concurrent.futures
import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

import nbformat
from nbgrader.api import Gradebook, MissingEntry

from tfperf.autograding.preprocessors import KERNEL_DIED
from tfperf.classgrading import beliefs, cpusets, report
from tfperf.classgrading.ledger import FAILED, GRADED, REJECTED, STARTED, Entry, Ledger
from tfperf.classgrading.submissions import DEFAULT_ZIP_REGEXP, AssignmentCells, Submission, collect, zip_collect
from tfperf.grading import RECORD_ENV_VAR

#: Seconds a stopped nbgrader gets to shut its kernel down before it is killed.
STOP_GRACE_S = 5
#: How long SQLite waits for another grader's write to finish before giving up ("database is locked").
SQLITE_WAIT_S = 300
#: What nbgrader logs when a kernel dies before it could run anything (e.g. two kernels of graders
#: started at once took the same TCP port): never the submission's doing, so that step runs again.
KERNEL_NEVER_STARTED = "Kernel died before replying to kernel_info"
#: How many times a step runs again after its kernel never started.
START_RETRIES = 1


#: ``tfperf grade --kernel``: what nbgrader's kernel runs, as the course's GradingExecute options say it. No grade
#: is read from the kernel (the exercises' workers decide them all), so each mode grades the same; the kernel's run
#: gives the feedback the learner's outputs. Measured cost: docs/measurements-grading.md, "Where a notebook's grading
#: time goes".
KERNEL_MODES = {
    "run": [],  # the whole notebook, the demonstrations at the small size: the feedback shows every output
    "imports": ["--GradingExecute.demonstrations=imports"],  # demonstration cells for their imports only
    "none": ["--GradingExecute.run_kernel=False"],  # no kernel: no cell's output in the feedback
}


@dataclass
class Options:
    assignment: str
    course: Path
    students: list[str] | None = None
    jobs: int = 1
    cores_per_job: int = 1
    force: bool = False
    db_url: str | None = None
    execute_timeout: int | None = None
    zip_collect: bool = False
    zip_regexp: str = DEFAULT_ZIP_REGEXP
    progress: bool = True
    reference: str | None = None  # the student id of the reference submission the summary compares with
    beliefs_names: bool = False  # name students on the class-beliefs page
    kernel: str = "run"  # what the kernel runs: one of KERNEL_MODES


@dataclass
class Outcome:
    """What one run did (the ledger has the details)."""

    graded: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    left: list[str] = field(default_factory=list)  # not graded because the run was stopped
    notes: list[str] = field(default_factory=list)
    interrupted: bool = False
    seconds: float = 0.0
    summary: Path | None = None


def nbgrader_command() -> list[str]:
    return [sys.executable, "-m", "nbgrader"]


def add_assignment(course: Path, assignment: str, env: dict[str, str], common: list[str]) -> str:
    """Record ``assignment`` in the gradebook by releasing it again (``nbgrader generate_assignment
    --force``: the same student version, now with the gradebook entry grading needs); the note says so.

    A fresh clone has the student versions (``notebooks/``) but an empty gradebook, and nbgrader's
    ``generate_assignment`` without ``--force`` skips an existing release *and* its gradebook entry."""
    db = [arg for arg in common if arg.startswith("--CourseDirectory.")]
    cmd = [*nbgrader_command(), "generate_assignment", assignment, "--force", *db]
    result = subprocess.run(cmd, cwd=course, env=env, capture_output=True, text=True)
    if result.returncode != 0:
        tail = "\n".join((result.stdout + result.stderr).strip().splitlines()[-5:])
        raise LookupError(
            f"The gradebook has no assignment {assignment!r}, and `nbgrader generate_assignment "
            f"{assignment} --force` could not add it:\n{tail}"
        )
    return f"{assignment} was not in the gradebook: added it (nbgrader generate_assignment {assignment} --force)."


def default_db_url(course: Path) -> str:
    """nbgrader's own default for this course: SQLite in the course folder."""
    return f"sqlite:///{course / 'gradebook.db'}"


def is_sqlite(db_url: str) -> bool:
    return db_url.startswith("sqlite")


def with_sqlite_wait(db_url: str) -> str:
    """The SQLite URL with a lock wait, so that parallel graders queue for the write lock instead of failing."""
    if not is_sqlite(db_url) or "timeout=" in db_url:
        return db_url
    return f"{db_url}{'&' if '?' in db_url else '?'}timeout={SQLITE_WAIT_S}"


class _Progress:
    """tqdm's bar where tqdm is installed; otherwise one line per student."""

    def __init__(self, total: int, enabled: bool):
        self.bar = None
        self.done, self.total, self.enabled = 0, total, enabled
        if enabled:
            try:
                from tqdm import tqdm
            except ImportError:
                return
            self.bar = tqdm(total=total, unit="student", file=sys.stderr, dynamic_ncols=True)

    def update(self, student: str, status: str) -> None:
        self.done += 1
        if self.bar is not None:
            self.bar.set_postfix_str(f"{student}: {status}", refresh=False)
            self.bar.update(1)
        elif self.enabled:
            print(f"[{self.done}/{self.total}] {student}: {status}", file=sys.stderr, flush=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


class Grader:
    """Grades students one nbgrader process each; stoppable from another thread."""

    def __init__(self, options: Options, course: Path, env: dict[str, str], common: list[str], db_url: str):
        self.options, self.course, self.env, self.common, self.db_url = options, course, env, common, db_url
        self.assignment = options.assignment
        self.reports = course / "reports"
        self.ledger = Ledger(self.reports, self.assignment)
        self.logs = self.reports / "logs" / self.assignment
        self.stopping = threading.Event()
        self._running: set[subprocess.Popen] = set()
        self._lock = threading.Lock()

    def _run(self, argv: list[str], slot: cpusets.Slot, env: dict[str, str], log) -> int | None:
        """Run one nbgrader step pinned to ``slot``; None if the batch was stopped meanwhile."""
        if self.stopping.is_set():
            return None
        argv = slot.argv(argv)
        log.write(f"$ {' '.join(argv)}\n")
        log.flush()
        process = subprocess.Popen(
            argv,
            cwd=self.course,
            env={**env, **slot.env()},
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=None if cpusets.has_taskset() else slot.pin,
        )
        with self._lock:
            self._running.add(process)
        try:
            code = process.wait()
        finally:
            with self._lock:
                self._running.discard(process)
        return None if self.stopping.is_set() else code

    def stop(self) -> None:
        """Stop every running nbgrader (and its kernel): SIGINT, then SIGKILL after a grace period."""
        self.stopping.set()
        with self._lock:
            running = list(self._running)
        for process in running:
            with _suppress_gone():
                os.killpg(process.pid, signal.SIGINT)
        deadline = time.monotonic() + STOP_GRACE_S
        for process in running:
            try:
                process.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                with _suppress_gone():
                    os.killpg(process.pid, signal.SIGKILL)
                process.wait()

    def grade(self, sub: Submission, slot: cpusets.Slot) -> Entry | None:
        """Autograde, feedback, read back; the ledger entry written, or None if stopped."""
        started = time.monotonic()
        student = sub.student
        record_name = f".tfperf-speedups-{uuid.uuid4().hex}.jsonl"  # a name no submitted file can have
        env = {**self.env, RECORD_ENV_VAR: record_name}  # relative: the kernel's working folder
        screen_file = self.reports / "screen.jsonl"
        screen_offset = screen_file.stat().st_size if screen_file.exists() else 0
        self.logs.mkdir(parents=True, exist_ok=True)
        # An earlier "graded" for this very submission no longer holds once nbgrader starts replacing it
        self.ledger.write(Entry(student, self.assignment, sub.checksum, STARTED))
        entry = Entry(student, self.assignment, sub.checksum, FAILED, anomalies=list(sub.anomalies))
        # read before nbgrader clears the outputs that carry them
        entry.beliefs = beliefs.from_notebooks([sub.folder / f"{name}.ipynb" for name in sub.notebooks])
        entry.anomalies += [["extra notebook", w] for w in sub.warnings]
        folder = self.course / "autograded" / student / self.assignment
        with open(self.logs / f"{quote(student, safe='')}.log", "w", encoding="utf-8") as log:
            for step in ("autograde", "generate_feedback"):
                for attempt in range(1 + START_RETRIES):
                    log.flush()
                    start = Path(log.name).stat().st_size
                    code = self._run(
                        [*nbgrader_command(), step, self.assignment, "--student", student, "--force", *self.common],
                        slot,
                        env,
                        log,
                    )
                    if code in (0, None) or attempt == START_RETRIES or not _kernel_never_started(log.name, start):
                        break
                    log.write(
                        f"# tfperf grade: the kernel died before it started (not the submission's doing); "
                        f"running {step} again\n"
                    )
                    entry.anomalies.append(["kernel start retried", f"nbgrader {step}: {KERNEL_NEVER_STARTED}"])
                if code is None:
                    return None
                if step == "autograde":  # read (and removed) before generate_feedback copies the folder
                    entry.speedups = _read_record(folder / record_name, entry)
                if code != 0:
                    log.flush()
                    why = (
                        f"the grading kernel died before it started ({KERNEL_NEVER_STARTED}), {attempt + 1} times"
                        if _kernel_never_started(log.name, start)
                        else _last_error(log.name)
                    )
                    entry.problems.append(
                        f"nbgrader {step} failed (exit {code}): {why}; log: {Path(log.name).relative_to(self.course)}"
                    )
                    break
        entry.anomalies += _screen_flags(screen_file, screen_offset, self.assignment, student)
        if not entry.problems:
            try:
                self._read_grades(entry)
                entry.status = GRADED
            except MissingEntry:
                entry.problems.append("nbgrader finished but the gradebook has no submission for this student")
            self._read_notebooks(entry, folder, sub.notebooks)
        entry.seconds = time.monotonic() - started
        if self.stopping.is_set():
            return None
        self.ledger.write(entry)
        return entry

    def _read_grades(self, entry: Entry) -> None:
        with Gradebook(self.db_url) as gb:
            submission = gb.find_submission(self.assignment, entry.student)
            entry.cells = {
                g.name: [float(g.score), float(g.max_score)] for nb in submission.notebooks for g in nb.grades
            }
            entry.score, entry.max_score = float(submission.score), float(submission.max_score)

    def _read_notebooks(self, entry: Entry, folder: Path, notebooks: list[str]) -> None:
        """Failure messages of the test cells that lost points, and kernels that died."""
        for name in notebooks:
            try:
                nb = nbformat.read(folder / f"{name}.ipynb", as_version=4)
            except (OSError, ValueError):
                continue
            for cell in nb.cells:
                meta = cell.metadata.get("nbgrader", {})
                outputs = cell.get("outputs", [])
                died = [o for o in outputs if o.get("output_type") == "error" and o.get("ename") == KERNEL_DIED]
                if died and not any(kind == "kernel lost" for kind, _ in entry.anomalies):
                    entry.anomalies.append(["kernel lost", f"{name}: {died[0].get('evalue', '')}"])
                grade_id = meta.get("grade_id")
                if not (meta.get("grade") and grade_id in entry.cells):
                    continue
                score, full = entry.cells[grade_id]
                if score < full:
                    entry.failures.append([grade_id, _failure_message(outputs)])


def _failure_message(outputs: list) -> str:
    for output in outputs:
        if output.get("output_type") == "error":
            text = str(output.get("evalue", "")).strip().splitlines()
            head = text[0] if text else ""
            if head.endswith(":"):  # a list of problems follows, one per line: "- ..."
                head += " " + " ".join(line.strip() for line in text[1:] if line.strip().startswith("- "))
            return f"{output.get('ename', 'Error')}: {head}"[:400]
    for output in outputs:
        if output.get("output_type") == "stream" and output.get("name") == "stderr":
            return "wrote to stderr: " + str(output.get("text", "")).strip()[:200]
    return "no error output (scored below full points)"


def _kernel_never_started(log_path: str, start: int) -> bool:
    """Whether the log, from byte ``start`` on, says a kernel died before it could run anything."""
    with open(log_path, "rb") as log:
        log.seek(start)
        return KERNEL_NEVER_STARTED.encode() in log.read()


def _last_error(log_path: str) -> str:
    lines = Path(log_path).read_text(encoding="utf-8", errors="replace").splitlines()
    errors = [line for line in lines if "ERROR" in line or "Error" in line]
    return (errors[-1] if errors else (lines[-1] if lines else "no output")).strip()[:300]


def _read_record(path: Path, entry: Entry) -> list[dict]:
    rows = []
    if path.exists():
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                row = json.loads(line)
                rows.append(
                    {
                        "exercise": str(row["exercise"]),
                        "ratios": [float(r) for r in row["ratios"]],
                        "target": float(row.get("target", 0) or 0),
                    }
                )
            except (ValueError, KeyError, TypeError):
                entry.anomalies.append(["speedup record unreadable", line[:200]])
        path.unlink(missing_ok=True)
    return rows


def _screen_flags(screen_file: Path, offset: int, assignment: str, student: str) -> list[list[str]]:
    if not screen_file.exists():
        return []
    with open(screen_file, encoding="utf-8", errors="replace") as f:
        f.seek(offset)
        rows = []
        for line in f:
            try:
                rows.append(json.loads(line))
            except ValueError:
                continue
    return [
        ["screen flag", f"{r.get('notebook')}: {r.get('cell')}: {'; '.join(r.get('findings', []))}"]
        for r in rows
        if r.get("assignment") == assignment and r.get("student") == student
    ]


class _suppress_gone:
    def __enter__(self):
        return self

    def __exit__(self, kind, value, tb):
        return kind is not None and issubclass(kind, ProcessLookupError)


def _gradebook_students(db_url: str, assignment: str) -> set[str]:
    with Gradebook(db_url) as gb:
        return {s.student.id for s in gb.assignment_submissions(assignment)}


def export_csv(course: Path, env: dict[str, str], common: list[str]) -> Path:
    """``nbgrader export`` to a temporary file, renamed over ``grades.csv`` (concurrent workers never leave half a file)."""
    target = course / "grades.csv"
    tmp = course / f".grades-{uuid.uuid4().hex}.csv"
    try:
        result = subprocess.run(
            [*nbgrader_command(), "export", f"--to={tmp}", *common], cwd=course, env=env, capture_output=True, text=True
        )
        if result.returncode != 0:
            raise RuntimeError(f"nbgrader export failed:\n{(result.stdout + result.stderr)[-2000:]}")
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    return target


def run(options: Options) -> Outcome:
    """Grade the assignment's submissions as ``options`` say; see the module's docstring."""
    started = time.monotonic()
    course = options.course.resolve()
    outcome = Outcome()
    env = dict(os.environ)
    # nbgrader runs alembic as a subprocess: this interpreter's bin/ first on PATH
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    db_url = options.db_url or default_db_url(course)
    plan = cpusets.plan(options.jobs, options.cores_per_job)
    outcome.notes += plan.notes
    if is_sqlite(db_url) and len(plan.slots) > 1:
        db_url = with_sqlite_wait(db_url)
        outcome.notes.append(
            f"{len(plan.slots)} graders share the SQLite gradebook: each waits up to {SQLITE_WAIT_S} s "
            "for another's write to finish; several machines, or many graders, need "
            "PostgreSQL (--db-url)."
        )
    common = [f"--CourseDirectory.db_url={db_url}"] if (options.db_url or db_url != default_db_url(course)) else []
    if options.execute_timeout:
        common.append(f"--Execute.timeout={options.execute_timeout}")
    common += KERNEL_MODES[options.kernel]
    if options.zip_collect:
        outcome.notes += [
            f"zip_collect: {w}"
            for w in zip_collect(course, options.assignment, options.zip_regexp, nbgrader_command(), env)
        ]
    try:
        cells = AssignmentCells.load(db_url, options.assignment)
    except LookupError:
        outcome.notes.append(add_assignment(course, options.assignment, env, common))
        cells = AssignmentCells.load(db_url, options.assignment)
    subs = collect(course, options.assignment, cells, options.students)
    grader = Grader(options, course, env, common, db_url)
    in_gradebook = _gradebook_students(db_url, options.assignment)
    todo: list[Submission] = []
    for sub in subs:
        if not sub.gradable:
            grader.ledger.write(
                Entry(
                    sub.student,
                    options.assignment,
                    sub.checksum,
                    REJECTED,
                    problems=sub.problems,
                    anomalies=[["extra notebook", w] for w in sub.warnings],
                )
            )
            outcome.rejected.append(sub.student)
        elif not options.force and sub.student in in_gradebook and grader.ledger.is_done(sub.student, sub.checksum):
            outcome.skipped.append(sub.student)
        else:
            todo.append(sub)
    progress = _Progress(len(todo), options.progress)
    slots: queue.Queue[cpusets.Slot] = queue.Queue()
    for slot in plan.slots:
        slots.put(slot)

    def grade_on_a_free_slot(sub: Submission) -> Entry | None:
        slot = slots.get()
        try:
            return grader.grade(sub, slot)
        finally:
            slots.put(slot)

    previous_term = (
        signal.signal(signal.SIGTERM, _raise_interrupt)
        if threading.current_thread() is threading.main_thread()
        else None
    )
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=len(plan.slots), thread_name_prefix="grader")
    futures = {pool.submit(grade_on_a_free_slot, sub): sub for sub in todo}
    try:
        for future in concurrent.futures.as_completed(futures):
            entry = future.result()
            student = futures[future].student
            if entry is None:
                continue
            (outcome.graded if entry.status == GRADED else outcome.failed).append(student)
            progress.update(student, entry.status if entry.status != GRADED else f"{entry.score:g}/{entry.max_score:g}")
    except KeyboardInterrupt:
        outcome.interrupted = True
        grader.stop()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
        progress.close()
        if previous_term is not None:
            signal.signal(signal.SIGTERM, previous_term)
    done = set(outcome.graded) | set(outcome.failed)
    outcome.left = [sub.student for sub in todo if sub.student not in done]
    if not outcome.interrupted:
        export_csv(course, env, common)
    outcome.seconds = time.monotonic() - started
    outcome.summary = report.write(
        course / "reports",
        options.assignment,
        grader.ledger.entries(),
        outcome_lines(outcome),
        options.reference,
        beliefs_names=options.beliefs_names,
    )
    return outcome


def _raise_interrupt(signum, frame):
    raise KeyboardInterrupt


def outcome_lines(outcome: Outcome) -> list[str]:
    lines = [
        f"This run: {len(outcome.graded)} graded, {len(outcome.skipped)} skipped (already graded, unchanged), "
        f"{len(outcome.rejected)} rejected, {len(outcome.failed)} failed, in {outcome.seconds:.0f} s."
    ]
    if outcome.interrupted:
        lines.append(f"Stopped before grading {len(outcome.left)} student(s): run the same command again to go on.")
    lines += [f"Note: {note}" for note in outcome.notes]
    return lines
