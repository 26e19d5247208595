"""The nbgrader round trip, with the real nbgrader CLI and gradebook, in a temporary course.

For every assignment: generate the student version, then autograde, in one run, the
reference solution (its demonstrations run whole) and the untouched student version (in a run of its own, its
demonstrations for their imports only, where none reads a name an answer defines:
``demonstrations_reading_answers``; otherwise with the reference); in a second, the chapter's plausible answers
and its red team (tests/grading/submissions/<assignment>.py, tests/grading/red_team/; answers to different
exercises are packed into one student), graded without a kernel (``GradingExecute.run_kernel``: no grade is read
from the kernel), except the answers aimed at the kernel (``Submission.kernel``), graded in it with the demonstration
cells run for their imports only (``GradingExecute.demonstrations``); then, in a third, small run, the reference
again, the way a GPU machine runs them (TFPERF_AS_ON_GPU=1: Keras compiles with XLA by
default, tfperf.runtime.as_on_gpu), for the chapters where that can change anything
(graded_as_on_a_gpu); then generate feedback and export grades.

Grading runs in the sandboxed kernel (tfperf.autograding.sandbox), installed for this course only.
The course lies outside /tmp (which the sandbox replaces by its own), so the answers that
try to write the gradebook or the course see them, read-only (tests/grading/attacks.py).
"""

from __future__ import annotations

import contextlib
import csv
import hashlib
import importlib
import importlib.util
import os
import re
import shutil
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import nbformat
import pytest
from nbgrader.api import Gradebook, MissingEntry

from tests.conftest import REPO, assignments
from tests.grading import attacks
from tests.grading.submission import IN_KERNEL_PREFIX, PACKED_PREFIX, PackedSubmission, Submission, pack
from tfperf.autograding import preprocessors
from tfperf.classgrading import cpusets
from tfperf.runtime import as_on_gpu

pytestmark = [pytest.mark.slow, pytest.mark.alone]  # alone: its lanes' speed checks need their cores to themselves

#: The cell timeout of the round trip's grading: shorter than the course's 180 s, with room for the
#: slowest honest graded cell (about 10 s on an idle 2-core machine, a lane having one core of it;
#: chapter 4's speed check ran past 90 s only under a load average of 10).
CELL_TIMEOUT = 90
#: The cell timeout for answers that never return (``Submission.hangs``): they are graded alone, their other
#: exercises unanswered, so every cell but the endless one takes seconds (the setup cell about 3 s idle; in the round
#: trip of 2026-11-27, a hanging student's run took its timeout, 30 s then, and 15 to 18 s more in all).
HANG_TIMEOUT = 20


#: Student ids of the reference graded with TFPERF_AS_ON_GPU=1 start with this.
AS_ON_GPU = "as-on-gpu-"
#: Calls that run a Keras model's compiled train, test or predict function: where TFPERF_AS_ON_GPU decides
#: whether XLA compiles it (``as_on_gpu.apply``).
KERAS_RUNS = re.compile(r"\.(fit|evaluate|predict|train_on_batch|test_on_batch|predict_on_batch)\(")


def demonstrations_reading_answers(nb: nbformat.NotebookNode) -> set[str]:
    """The names that a demonstration cell (no nbgrader metadata) reads and an answer cell binds at its top level: a
    demonstration that reads one runs differently in the untouched version, whose answers are placeholders. (The
    other demonstrations run there as in the reference, which runs them whole.)"""
    import ast

    def parsed(cell):
        try:
            return ast.parse(cell.source)
        except SyntaxError:
            return ast.Module(body=[], type_ignores=[])

    bound = set()
    for cell in (c for c in nb.cells if c.cell_type == "code" and c.metadata.get("nbgrader", {}).get("solution")):
        for node in parsed(cell).body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                bound.add(node.name)
            elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Import, ast.ImportFrom)):
                bound |= {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
                bound |= {(a.asname or a.name).split(".")[0] for a in getattr(node, "names", [])}
    read = set()
    for cell in (c for c in nb.cells if c.cell_type == "code" and not c.metadata.get("nbgrader")):
        read |= {n.id for n in ast.walk(parsed(cell)) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    return bound & read


def test_demonstrations_reading_answers_are_found():
    """Chapter 6's self-check reads ``place``, an answer; no other chapter's demonstration reads one."""
    found = {
        path.parent.name: demonstrations_reading_answers(nbformat.read(path, as_version=4))
        for path in sorted((REPO / "solutions").glob("*/*.ipynb"))
    }
    assert found["06_device_ceilings"] == {"place"}
    assert {name for name, names in found.items() if names} == {"06_device_ceilings"}
    answer = nbformat.v4.new_code_cell(
        "import numpy as np\nSCALE = 2\ndef f(x):\n    return x", metadata={"nbgrader": {"solution": True}}
    )
    nb = nbformat.v4.new_notebook(cells=[answer, nbformat.v4.new_code_cell("print(f(SCALE), np.pi, g)")])
    assert demonstrations_reading_answers(nb) == {"f", "SCALE", "np"}


def graded_as_on_a_gpu(assignment: str) -> bool:
    """Whether the chapter's reference is also graded as a GPU machine runs it. TFPERF_AS_ON_GPU changes one
    decision only, whether Keras compiles a model's train, test or predict function with XLA; a chapter
    whose notebook and experiment modules never run one (chapter 1 computes with tensors, and trains nothing)
    runs the same either way (read from their source)."""
    texts = []
    for path in (REPO / "solutions" / assignment).glob("*.ipynb"):
        texts += [c.source for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code"]
    notebook = "\n".join(texts)
    modules = re.findall(r"from tfperf\.experiments import (\w+)", notebook)
    library = "\n".join((REPO / "src" / "tfperf" / "experiments" / f"{m}.py").read_text() for m in modules)
    return bool(KERAS_RUNS.search(notebook)) or bool(KERAS_RUNS.search(library))


#: For a quicker run while developing: only cases whose name contains one of these (comma-separated).
ONLY_ENV_VAR = "TFPERF_ROUNDTRIP_ONLY"
#: For a quicker run while developing: only these assignments (comma-separated folder names of solutions/).
ASSIGNMENTS_ENV_VAR = "TFPERF_ROUNDTRIP_ASSIGNMENTS"


def roundtrip_assignments() -> list[str]:
    """The assignments this run grades: all of them, or those named in $TFPERF_ROUNDTRIP_ASSIGNMENTS."""
    chosen = [name for name in os.environ.get(ASSIGNMENTS_ENV_VAR, "").split(",") if name]
    return [a for a in assignments() if a in chosen] if chosen else assignments()


#: Set to 1: the round trip grades every case of tests/grading/judge_boundary, not only ``IN_THE_ROUND_TRIP``.
JUDGE_BOUNDARY_ENV_VAR = "TFPERF_ROUNDTRIP_JUDGE_BOUNDARY"


def submissions_for(assignment: str):
    """The chapter's plausible answers, then its red team (answers that try to fool the checks), then the outsider's
    attacks on the judge (tests/grading/judge_boundary: those it names for the round trip, every one with
    $TFPERF_ROUNDTRIP_JUDGE_BOUNDARY=1)."""
    from tests.grading import judge_boundary

    cases = list(importlib.import_module(f"tests.grading.submissions.{assignment}").SUBMISSIONS)
    if importlib.util.find_spec(f"tests.grading.red_team.{assignment}") is not None:
        cases += importlib.import_module(f"tests.grading.red_team.{assignment}").RED_TEAM
    every = os.environ.get(JUDGE_BOUNDARY_ENV_VAR) == "1"
    cases += [
        c for c in judge_boundary.CASES.get(assignment, []) if every or c.name in judge_boundary.IN_THE_ROUND_TRIP
    ]
    only = [part for part in os.environ.get(ONLY_ENV_VAR, "").split(",") if part]
    return [c for c in cases if any(part in c.name for part in only)] if only else cases


def nbgrader(
    course: Path, *args: str, slot: cpusets.Slot, extra_env: dict[str, str] | None = None, log: str | None = None
) -> subprocess.CompletedProcess:
    """Run nbgrader in `course`, pinned (with every kernel it starts) to `slot`'s CPUs and GPU."""
    env = dict(os.environ, JUPYTER_PATH=str(course.parent / "jupyter" / "share" / "jupyter"), **slot.env())
    env |= extra_env or {}
    started = time.monotonic()
    # every log line with its time of day: where a run's time went (nbgrader logs no times by default)
    stamped = ["--Application.log_format=%(asctime)s %(message)s", "--Application.log_datefmt=%H:%M:%S"]
    result = subprocess.run(
        ["nbgrader", *args, *stamped],
        cwd=course,
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
        preexec_fn=slot.pin,
    )
    took = f"# nbgrader {' '.join(args)}: {time.monotonic() - started:.1f} s\n"
    assert result.returncode == 0, f"nbgrader {' '.join(args)} failed:\n{result.stdout}\n{result.stderr}"
    (course.parent / "logs").mkdir(exist_ok=True)
    students = [arg.split("=", 1)[1] for arg in args if arg.startswith("--student=")]
    # one log per call: the as-on-a-GPU run and each student graded alone get their own
    name = log or "-".join(args[:2]) + ("-as-on-gpu" if extra_env else "".join(f"-{s}" for s in students))
    (course.parent / "logs" / f"{name}.log").write_text(took + result.stdout + result.stderr)
    return result


@contextlib.contextmanager
def answer_server(answers: dict[str, str]):
    """Serves each solution cell's reference source on the host's loopback (attacks.ANSWER_PORT):
    an answer that reached it would score full points. Yields the list of connections it got."""
    server = socket.create_server(("127.0.0.1", attacks.ANSWER_PORT), reuse_port=True)
    served: list[str] = []

    def serve():
        while True:
            try:
                connection, _ = server.accept()
            except OSError:
                return
            with connection:
                grade_id = connection.makefile().readline().strip()
                served.append(grade_id)
                connection.sendall(answers.get(grade_id, "").encode())

    threading.Thread(target=serve, daemon=True).start()
    try:
        yield served
    finally:
        server.close()


def fingerprint(root: Path) -> dict[str, str]:
    """Content hash of every file of the course that grading must not change."""
    files = [
        *root.glob("solutions/**/*"),
        *root.glob("notebooks/**/*"),
        *root.glob("autograde/submitted/**/*"),
        root / "autograde" / "nbgrader_config.py",
    ]
    return {str(f.relative_to(root)): hashlib.sha256(f.read_bytes()).hexdigest() for f in files if f.is_file()}


LANES_ENV_VAR = "TFPERF_ROUNDTRIP_LANES"
#: Seconds of an assignment's main autograde run (the reference, demonstrations run; the untouched version too where it
#: is not graded apart, ``untouched_apart``), and of one packed student graded without a kernel, to order the units of
#: work (``grading_units``): from the round trip of 2026-11-30 (a 2-CPU AMD EPYC with AVX-512, Debian's Python 3.11.2)
#: in a clean clone of 2fcaca6, one core a lane (each run's seconds, nbgrader's start included; the packed run's over
#: its students). Only their ratios matter, and only roughly: the lanes take the next unit when they are free.
MAIN_RUN_COST = {
    "01_tensors": 25.7,
    "02_eager_vs_graph": 27.9,
    "03_keras_fit": 47.4,
    "04_tf_data": 60.2,
    "05_gpu_sync": 37.8,
    "06_device_ceilings": 96.8,
    "07_beyond_one_device": 40.5,
    "08_capstone": 52.1,
}
PACKED_COST = {  # graded without a kernel: the packed run's seconds over its students
    "01_tensors": 3.1,
    "02_eager_vs_graph": 3.0,
    "03_keras_fit": 7.2,
    "04_tf_data": 10.3,
    "05_gpu_sync": 3.0,
    "06_device_ceilings": 4.3,
    "07_beyond_one_device": 3.4,
    "08_capstone": 9.4,
}
#: Seconds of one packed student graded in the kernel (``Submission.kernel``), its run's start shared.
IN_KERNEL_COST = 7.4  # chapter 1: 4 students in 37.1 s; chapter 5: 3 in 14.6 s
#: Seconds of the run that grades the reference as on a GPU (one notebook, but every exercise compiled with
#: XLA where Keras would), and of each run that grades a hanging student alone (its cell timeout, and more).
AS_ON_GPU_COST = {
    "03_keras_fit": 70.6,
    "04_tf_data": 61.5,
    "05_gpu_sync": 43.0,
    "06_device_ceilings": 59.0,
    "07_beyond_one_device": 41.8,
    "08_capstone": 47.8,
}
HANG_COST = 38.7  # 47.6 s (outside the kernel: the answer's first call has twice the cell's limit) and 29.8 s
#: Seconds of the run that grades the untouched version on its own, its demonstrations for their imports only.
UNTOUCHED_COST = 4.4
#: Seconds of generate_assignment (in the lane's course, for each unit of an assignment it has not released yet) and of
#: generate_feedback (after an assignment's main grading).
GENERATE_COST = 1.1
FEEDBACK_COST = 4.1


def untouched_apart(assignment: str) -> bool:
    """Whether the untouched version is graded in a run of its own (no demonstration reads an answer's name)."""
    return not any(
        demonstrations_reading_answers(nbformat.read(path, as_version=4))
        for path in (REPO / "solutions" / assignment).glob("*.ipynb")
    )


@dataclass(frozen=True)
class Unit:
    """One lane's piece of the round trip: an assignment's main grading (the reference and the untouched version, the
    packed students, each hanging student alone, then the feedback), or its reference graded as on a GPU."""

    assignment: str
    as_on_a_gpu: bool = False

    def cost(self) -> float:
        """Its seconds by the model above."""
        if self.as_on_a_gpu:
            return GENERATE_COST + AS_ON_GPU_COST.get(self.assignment, 100.0)
        packed = pack(submissions_for(self.assignment))
        hanging = sum(1 for p in packed if p.hangs)
        in_kernel = sum(1 for p in packed if p.kernel and not p.hangs)
        return (
            GENERATE_COST
            + FEEDBACK_COST
            + MAIN_RUN_COST.get(self.assignment, 60.0)
            + PACKED_COST.get(self.assignment, 15.0) * (len(packed) - hanging - in_kernel)
            + IN_KERNEL_COST * in_kernel
            + HANG_COST * hanging
            + (UNTOUCHED_COST if untouched_apart(self.assignment) else 0.0)
        )


def grading_units(names: list[str]) -> list[Unit]:
    """The units of the round trip of `names`, longest first (by ``Unit.cost``): the lanes take them in this order
    as each becomes free, so the last ones, the shortest, even out the lanes' ends."""
    units = [Unit(a) for a in names] + [Unit(a, as_on_a_gpu=True) for a in names if graded_as_on_a_gpu(a)]
    return sorted(units, key=Unit.cost, reverse=True)


def grading_slots(units: int) -> list[cpusets.Slot]:
    """The lanes' slots of the machine for `units` units, at most one lane a unit: lanes grade at the same time, each on
    its own slot.

    Speed checks compare two callables timed on one core, so a lane needs a core to itself, not the
    machine: lanes never share a core, nor a GPU (``tfperf.classgrading.cpusets``, as ``tfperf grade
    --jobs`` uses it; $TFPERF_ROUNDTRIP_LANES=1 grades one unit after the other)."""
    wanted = int(os.environ.get(LANES_ENV_VAR, "0")) or units
    return cpusets.plan(wanted).slots


class GradedCourses:
    """The courses of a round trip: one per lane, each released, submitted, graded and exported. An assignment's main
    grading and its reference graded as on a GPU may have been graded in different lanes' courses."""

    def __init__(self, roots: dict[Unit, Path]):
        self.roots = roots

    def root(self, assignment: str, student: str = "") -> Path:
        """The course that graded `student`'s submission of `assignment` (the main grading's, by default)."""
        return self.roots[Unit(assignment, as_on_a_gpu=student.startswith(AS_ON_GPU))]

    def all_roots(self) -> list[Path]:
        return sorted(set(self.roots.values()))


@pytest.fixture(scope="module")
def graded_course() -> GradedCourses:
    """Every assignment released, submitted, graded and exported, lanes of them in parallel."""
    base = Path(os.environ.get("TFPERF_ROUNDTRIP_DIR", Path.home() / ".cache" / "tfperf-course"))
    base.mkdir(parents=True, exist_ok=True)
    top = Path(tempfile.mkdtemp(prefix="roundtrip-", dir=base))
    try:
        yield grade_everything(top)
    finally:
        # nbgrader's logs stay for a look after a failure (test-artifacts/ is git-ignored)
        artifacts = REPO / "test-artifacts" / "roundtrip"
        shutil.rmtree(artifacts, ignore_errors=True)
        for log in top.glob("lane-*/logs/*"):
            (artifacts / log.parent.parent.name).mkdir(parents=True, exist_ok=True)
            shutil.copy(log, artifacts / log.parent.parent.name / log.name)
        shutil.rmtree(top, ignore_errors=True)


def reference_answers() -> dict[str, str]:
    """grade_id -> the reference source of every solution cell of every assignment."""
    answers = {}
    for source in (REPO / "solutions").glob("*/*.ipynb"):
        reference = nbformat.read(source, as_version=4)
        answers |= {
            c.metadata["nbgrader"]["grade_id"]: c.source
            for c in reference.cells
            if c.metadata.get("nbgrader", {}).get("solution")
        }
    return answers


def grade_everything(top: Path) -> GradedCourses:
    """Every unit graded: each lane (a course of its own, on its own slot) takes the next unit when it is free."""
    names = roundtrip_assignments()
    waiting = grading_units(names)
    roots: dict[Unit, Path] = {}
    errors: list[BaseException] = []
    lock = threading.Lock()

    def next_unit() -> Unit | None:
        with lock:
            return waiting.pop(0) if waiting and not errors else None

    def grade_lane(index: int, slot: cpusets.Slot) -> None:
        root = top / f"lane-{index}"
        try:
            lane = Lane(root, slot)
            while (unit := next_unit()) is not None:
                lane.grade(unit)
                with lock:
                    roots[unit] = root
            lane.export()
        except BaseException as error:  # reported by the main thread
            with lock:
                errors.append(error)

    with answer_server(reference_answers()) as served:
        slots = grading_slots(len(waiting))
        threads = [threading.Thread(target=grade_lane, args=(i, slot)) for i, slot in enumerate(slots)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    (top / "served.txt").write_text("\n".join(served))
    if errors:
        raise errors[0]
    return GradedCourses(roots)


class Lane:
    """A course of its own, graded on `slot` only, one unit after the other."""

    def __init__(self, root: Path, slot: cpusets.Slot):
        self.root, self.slot, self.generated = root, slot, set()
        self.course = root / "autograde"

    def _start(self) -> None:
        shutil.copytree(REPO / "solutions", self.root / "solutions")
        (self.root / "notebooks").mkdir()
        self.course.mkdir()
        shutil.copy(REPO / "autograde" / "nbgrader_config.py", self.course)
        subprocess.run(
            [sys.executable, "-m", "tfperf.autograding.sandbox", "install", "--prefix", str(self.root / "jupyter")],
            check=True,
        )
        (self.root / "logs").mkdir()
        (self.root / "logs" / "slot.txt").write_text(self.slot.describe())

    def grade(self, unit: Unit) -> None:
        if not self.root.exists():
            self._start()
        if unit.assignment not in self.generated:
            nbgrader(self.course, "generate_assignment", unit.assignment, "--force", slot=self.slot)
            self.generated.add(unit.assignment)
        with open(self.root / "logs" / "units.txt", "a") as units:  # which unit each lane graded, in order
            units.write(f"{unit.assignment}{' as on a GPU' if unit.as_on_a_gpu else ''}\n")
        if unit.as_on_a_gpu:
            self._grade_as_on_a_gpu(unit.assignment)
        else:
            self._grade_main(unit.assignment)

    def export(self) -> None:
        if self.generated:
            nbgrader(self.course, "export", slot=self.slot)

    def _grade_as_on_a_gpu(self, assignment: str) -> None:
        """The reference again, graded the way a GPU machine runs it. Not the untouched version: its answers are
        placeholders, which XLA never compiles, and its demonstrations are the reference's, graded whole here."""
        submit(
            self.course,
            assignment,
            {
                (AS_ON_GPU + "reference", source.name): nbformat.read(source, as_version=4)
                for source in (self.root / "solutions" / assignment).glob("*.ipynb")
            },
        )
        changed = autograde_unchanging(
            self.root, assignment, f"--student={AS_ON_GPU}*", slot=self.slot, extra_env={as_on_gpu.ENV_VAR: "1"}
        )
        (self.root / "logs" / f"changed-{assignment}-as-on-gpu.txt").write_text("\n".join(sorted(changed)))

    def _grade_main(self, assignment: str) -> None:
        root, course, slot = self.root, self.course, self.slot
        students, hanging, untouched = {}, {}, {}
        for source in (root / "solutions" / assignment).glob("*.ipynb"):
            reference = nbformat.read(source, as_version=4)
            student_version = nbformat.read(root / "notebooks" / assignment / source.name, as_version=4)
            # The untouched version's demonstrations are the reference's, run whole in the run above, unless one
            # reads a name an answer defines (its placeholder then changes what it does): run whole again only then.
            whole = bool(demonstrations_reading_answers(reference))
            candidates = {"reference": reference, **({"untouched": student_version} if whole else {})}
            untouched |= {} if whole else {("untouched", source.name): student_version}
            packed = pack(submissions_for(assignment))
            students |= {
                (p.student_id, source.name): p.notebook(reference, student_version) for p in packed if not p.hangs
            }
            hanging |= {(p.student_id, source.name): p.notebook(reference, student_version) for p in packed if p.hangs}
            submit(course, assignment, {(student, source.name): nb for student, nb in candidates.items()})
        # A student without a notebook is reported by this run (nbgrader fails a run that matches no notebook at all).
        submit(course, assignment, {key: nb for key, nb in students.items() if nb is None})
        # every student submitted so far but the reference graded as on a GPU (submitted here first where its unit
        # came first in this lane): graded again without the switch, its notebook would say it was not set
        changed = autograde_unchanging(
            root, assignment, f"--student=[!{AS_ON_GPU[0]}]*", slot=slot, log=f"autograde-{assignment}"
        )
        if untouched:  # its demonstrations for their imports only (GradingExecute.demonstrations)
            submit(course, assignment, untouched)
            changed += autograde_unchanging(
                root,
                assignment,
                "--student=untouched",
                "--GradingExecute.demonstrations=imports",
                slot=slot,
                log=f"autograde-{assignment}-untouched",
            )
        # The packed students: their grades come from the exercises' workers, never from the kernel, so they are
        # graded without one (GradingExecute.run_kernel, as instructors may); those aimed at the kernel with it, its
        # demonstration cells run for their imports only (GradingExecute.demonstrations).
        with_notebooks = {key: nb for key, nb in students.items() if nb is not None}
        submit(course, assignment, with_notebooks)
        for prefix, how, kind in (
            (PACKED_PREFIX, "--GradingExecute.run_kernel=False", "packed"),
            (IN_KERNEL_PREFIX, "--GradingExecute.demonstrations=imports", "packed-in-the-kernel"),
        ):
            if any(student.startswith(prefix) for student, _ in with_notebooks):
                changed += autograde_unchanging(
                    root, assignment, f"--student={prefix}*", how, slot=slot, log=f"autograde-{assignment}-{kind}"
                )
        # Answers that never return, each graded on its own with a short cell timeout.
        submit(course, assignment, hanging)
        for student in sorted({student for student, _ in hanging}):
            changed += autograde_unchanging(root, assignment, f"--student={student}", timeout=HANG_TIMEOUT, slot=slot)
        (root / "logs" / f"changed-{assignment}.txt").write_text("\n".join(sorted(changed)))
        nbgrader(course, "generate_feedback", assignment, "--force", slot=slot)


def submit(course: Path, assignment: str, notebooks: dict[tuple[str, str], nbformat.NotebookNode | None]) -> None:
    """Hand in each (student, notebook name) -> notebook; None: handed in without the notebook."""
    for (student, name), nb in notebooks.items():
        target = course / "submitted" / student / assignment / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if nb is None:
            (target.parent / "notes.txt").write_text("I forgot the notebook")
        else:
            nbformat.write(nb, target)


def autograde_unchanging(root: Path, assignment: str, *args: str, timeout: int = CELL_TIMEOUT, **options) -> list[str]:
    """Autograde `assignment`; returns the course files that grading changed (it must change none)."""
    before = fingerprint(root)
    nbgrader(root / "autograde", "autograde", assignment, "--force", f"--Execute.timeout={timeout}", *args, **options)
    return [k for k, v in fingerprint(root).items() if before.get(k) != v]


def grades(courses: GradedCourses, assignment: str, student: str) -> dict[str, tuple[float, float]]:
    """grade_id -> (points scored, max points) for every graded cell of a student's submission."""
    with Gradebook(gradebook_url(courses.root(assignment, student))) as gb:
        submission = gb.find_submission(assignment, student)
        return {g.name: (g.score, g.max_score) for nb in submission.notebooks for g in nb.grades}


def gradebook_url(root: Path) -> str:
    return f"sqlite:///{root / 'autograde' / 'gradebook.db'}"


def test_lanes_share_no_cpu_and_the_units_cover_every_assignment_once_longest_first():
    names = roundtrip_assignments()
    units = grading_units(names)
    assert sorted(u.assignment for u in units if not u.as_on_a_gpu) == names
    assert sorted(u.assignment for u in units if u.as_on_a_gpu) == [a for a in names if graded_as_on_a_gpu(a)]
    assert [u.cost() for u in units] == sorted((u.cost() for u in units), reverse=True)
    slots = grading_slots(len(units))
    cpus = [cpu for slot in slots for cpu in slot.cpus]
    assert len(cpus) == len(set(cpus)) and set(cpus) <= os.sched_getaffinity(0)
    gpus = [slot.gpu for slot in slots if slot.gpu is not None]
    assert len(gpus) == len(set(gpus))


def test_grading_left_the_course_and_gradebook_intact(graded_course):
    """No answer reached outside its own folder: the gradebook holds only nbgrader's automatic
    scores, no course file changed, no marker file was written, no connection was made."""
    for root in graded_course.all_roots():
        with contextlib.closing(sqlite3.connect(root / "autograde" / "gradebook.db")) as db:
            manual = db.execute("SELECT id, manual_score FROM grade WHERE manual_score IS NOT NULL").fetchall()
        assert not manual, f"scores written into the gradebook: {manual}"
    for assignment in roundtrip_assignments():
        logs = graded_course.root(assignment) / "logs"
        assert (logs / f"changed-{assignment}.txt").read_text() == "", assignment
        if graded_as_on_a_gpu(assignment):
            logs = graded_course.root(assignment, AS_ON_GPU) / "logs"
            assert (logs / f"changed-{assignment}-as-on-gpu.txt").read_text() == "", assignment
    top = graded_course.all_roots()[0].parent
    assert (top / "served.txt").read_text() == ""
    markers = [
        p
        for root in graded_course.all_roots()
        for p in root.rglob(attacks.MARKER)
        if root / "autograde" / "autograded" not in p.parents
    ]
    markers += [p for p in (Path("/etc") / attacks.MARKER, Path.home() / attacks.MARKER) if p.exists()]
    assert not markers, markers


def test_a_submission_without_its_notebook_is_reported_and_skipped(graded_course):
    for assignment in roundtrip_assignments():
        root = graded_course.root(assignment)
        for packed in pack(submissions_for(assignment)):
            if any(m.without_notebook for m in packed.members):
                log = (root / "logs" / f"autograde-{assignment}.log").read_text()
                assert f"submitted/{packed.student_id}/{assignment}" in log and "No notebooks" in log
                with Gradebook(gradebook_url(root)) as gb:
                    with pytest.raises(MissingEntry):
                        gb.find_submission(assignment, packed.student_id)


def test_submission_names_are_distinct_student_ids():
    for assignment in roundtrip_assignments():
        ids = [s.student_id for s in submissions_for(assignment)]
        assert len(set(ids)) == len(ids) and not {"reference", "untouched"} & set(ids), assignment
        assert not [i for i in ids if i.startswith(AS_ON_GPU)], assignment
        # the ids the main grading run sees (the reference, the untouched version, packed students): its --student
        # glob leaves out those that start as AS_ON_GPU does
        graded_ids = ["reference", "untouched", *(p.student_id for p in pack(submissions_for(assignment)))]
        assert not [i for i in graded_ids if i.startswith(AS_ON_GPU[0])], assignment
        for submission in submissions_for(assignment):  # each case as Submission(name, edits, expected, ...)
            members = getattr(submission, "members", [submission])
            assert all(isinstance(m.edits, dict) and isinstance(m.expected, dict) for m in members), submission


#: Graded as on a CPU, and the way a GPU machine runs the course (TFPERF_AS_ON_GPU=1) where that can differ.
PATHS_OF = [(a, path) for a in roundtrip_assignments() for path in ("", AS_ON_GPU) if not path or graded_as_on_a_gpu(a)]
PATHS = pytest.mark.parametrize(
    "assignment, path", PATHS_OF, ids=[f"{a}-{'as-on-gpu' if p else 'cpu'}" for a, p in PATHS_OF]
)


def test_chapters_that_run_keras_models_are_graded_as_on_a_gpu():
    """Chapters 3, 4, 6 and 7 train and predict with Keras (in the notebook, and in chapter 4's experiments), chapter 5
    in section 8's models made in a loop (tfperf.experiments.gpu_sync.models_in_a_loop), chapter 8 in its script's
    fit variant (tfperf.experiments.capstone.make_fit_training); the others never run a compiled Keras function, so
    TFPERF_AS_ON_GPU cannot change them."""
    assert [a for a in assignments() if graded_as_on_a_gpu(a)] == [
        "03_keras_fit",
        "04_tf_data",
        "05_gpu_sync",
        "06_device_ceilings",
        "07_beyond_one_device",
        "08_capstone",
    ]


@PATHS
def test_reference_scores_full_marks(graded_course, assignment, path):
    scores = grades(graded_course, assignment, path + "reference")
    assert scores and all(got == full for got, full in scores.values()), scores


#: Cells tagged with a key must print its text when they run: a demonstration that claims
#: to show something must really show it (e.g. TensorFlow warns at most twice per function).
EXPECTED_OUTPUT = {
    "expect-retracing-warning": "triggered tf.function retracing",
    "expect-xla-rejects-tf-print": "XLA cannot compile the printing step",
}


def autograded_notebooks(courses: GradedCourses, assignment: str, student: str) -> list[nbformat.NotebookNode]:
    folder = courses.root(assignment, student) / "autograde" / "autograded" / student / assignment
    return [nbformat.read(path, as_version=4) for path in sorted(folder.glob("*.ipynb"))]


def graded_output(courses: GradedCourses, assignment: str, student: str, grade_id: str, keep: int = 1500) -> str:
    """The last ``keep`` characters a graded cell of ``student``'s autograded notebook showed (its printed text and
    its error): why it scored what it did, for a failed test's message, as the round trip's folder is removed."""
    for nb in autograded_notebooks(courses, assignment, student):
        for cell in nb.cells:
            if cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") == grade_id:
                shown = [o.get("text", "") or f"{o.get('ename')}: {o.get('evalue')}" for o in cell.get("outputs", [])]
                return "".join(shown)[-keep:] or "(none)"
    return "(the autograded notebook has no such cell)"


def execution_problems(nb: nbformat.NotebookNode) -> list[str]:
    """What went wrong when ``nb`` ran: a cell that raised (nbgrader runs on past errors, so full marks
    alone would not show a broken demonstration), a graded cell that wrote to stderr, a tagged
    demonstration that did not show what it claims."""
    problems = []
    for cell in (c for c in nb.cells if c.cell_type == "code"):
        problems += [f"{cell.id} raised {o.ename}: {o.evalue}" for o in cell.outputs if o.output_type == "error"]
        stderr = [o.text for o in cell.outputs if o.output_type == "stream" and o.name == "stderr"]
        if cell.metadata.get("nbgrader", {}).get("grade") and stderr:
            problems.append(f"{cell.id} wrote to stderr: {stderr}")
        printed = "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream")
        problems += [
            f"{cell.id} ({tag}) did not show it"
            for tag in cell.metadata.get("tags", [])
            if tag in EXPECTED_OUTPUT and EXPECTED_OUTPUT[tag] not in printed
        ]
    return problems


def test_execution_problems_are_found():
    nb = nbformat.v4.new_notebook()
    broken = nbformat.v4.new_code_cell("1/0", id="demo")
    broken.outputs = [nbformat.v4.new_output("error", ename="ZeroDivisionError", evalue="division by zero")]
    noisy = nbformat.v4.new_code_cell("check()", id="check", metadata={"nbgrader": {"grade": True}})
    noisy.outputs = [nbformat.v4.new_output("stream", name="stderr", text="warning")]
    silent = nbformat.v4.new_code_cell("f(1); f(2)", id="retrace", metadata={"tags": ["expect-retracing-warning"]})
    nb.cells = [broken, noisy, silent]
    assert execution_problems(nb) == [
        "demo raised ZeroDivisionError: division by zero",
        "check wrote to stderr: ['warning']",
        "retrace (expect-retracing-warning) did not show it",
    ]


@PATHS
def test_reference_runs_top_to_bottom_without_errors(graded_course, assignment, path):
    """The reference notebook, run whole at the small size in nbgrader's kernel, on the CPU path and the
    way a GPU machine runs it: the chapter's execution test."""
    notebooks = autograded_notebooks(graded_course, assignment, path + "reference")
    assert notebooks, f"no autograded reference notebook for {assignment}"
    assert [p for nb in notebooks for p in execution_problems(nb)] == []


#: What IPython shows for the course's own short failures (GradingFailure._render_traceback_).
SHORT_ERRORS = ("GradingFailure", "AnswerNotWritten", "NotWritten")


def untouched_problems(nb: nbformat.NotebookNode) -> list[str]:
    """What a learner would meet in the untouched notebook ``nb`` (run whole) other than one short
    "... is not written yet. Reread the section ..." per Check cell: a traceback anywhere, an error
    outside a Check, a Check that passed."""
    problems = []
    for cell in (c for c in nb.cells if c.cell_type == "code"):
        errors = [o for o in cell.outputs if o.output_type == "error"]
        if not cell.metadata.get("nbgrader", {}).get("grade"):
            problems += [f"{cell.id}: {e.ename}: {e.evalue}" for e in errors]
            continue
        if len(errors) != 1:
            problems.append(f"{cell.id}: an untouched Check passed or showed no error")
            continue
        shown = re.sub(r"\x1b\[[0-9;]*m", "", "\n".join(errors[0].get("traceback", [])))
        if (
            errors[0].ename not in SHORT_ERRORS
            or "not written yet" not in shown
            or "reread" not in shown.lower()
            or "Traceback" in shown
            or len(shown.splitlines()) > 3
        ):
            problems.append(f"{cell.id}: {errors[0].ename}:\n{shown}")
    return problems


def test_untouched_problems_are_found():
    def check(cell_id, ename, traceback):
        cell = nbformat.v4.new_code_cell("check()", id=cell_id, metadata={"nbgrader": {"grade": True}})
        cell.outputs = [nbformat.v4.new_output("error", ename=ename, evalue="", traceback=traceback)]
        return cell

    nb = nbformat.v4.new_notebook()
    answer = nbformat.v4.new_code_cell("raise NotImplementedError()", id="answer")
    answer.outputs = [nbformat.v4.new_output("error", ename="NotImplementedError", evalue="", traceback=[])]
    nb.cells = [
        answer,
        check("short", "GradingFailure", ["predict is not written yet. Reread the section '4. Retracing'."]),
        check("raw", "NameError", ["Traceback (most recent call last)", "NameError: name 'predict' is not defined"]),
        nbformat.v4.new_code_cell("check()", id="passed", metadata={"nbgrader": {"grade": True}}),
    ]
    assert [p.split(":")[0] for p in untouched_problems(nb)] == ["answer", "raw", "passed"]


@pytest.mark.parametrize("assignment", roundtrip_assignments())
def test_untouched_shows_only_not_written_yet(graded_course, assignment):
    """The student notebook as a learner first meets it, run by nbgrader: every Check says, in one short line, that
    the answer is not written yet and which section to reread; nothing else fails. Its demonstrations run whole
    where one reads a name an answer defines; elsewhere for their imports, as the reference's run them whole."""
    notebooks = autograded_notebooks(graded_course, assignment, "untouched")
    assert notebooks, f"no autograded untouched notebook for {assignment}"
    assert [p for nb in notebooks for p in untouched_problems(nb)] == []


@pytest.mark.parametrize("assignment", roundtrip_assignments())
def test_untouched_demonstrations_run_whole_only_where_one_reads_an_answer(graded_course, assignment):
    for source in sorted((REPO / "solutions" / assignment).glob("*.ipynb")):
        whole = bool(demonstrations_reading_answers(nbformat.read(source, as_version=4)))
        (graded,) = [nb for nb in autograded_notebooks(graded_course, assignment, "untouched")]
        demonstrations = [c for c in graded.cells if c.cell_type == "code" and not c.metadata.get("nbgrader")]
        imports_only = [
            c for c in demonstrations if any(o.get("text") == preprocessors.IMPORTS_ONLY for o in c.outputs)
        ]
        assert demonstrations and len(imports_only) == (0 if whole else len(demonstrations)), source.name


@pytest.mark.parametrize("assignment", roundtrip_assignments())
def test_untouched_student_version_scores_zero_everywhere(graded_course, assignment):
    scores = grades(graded_course, assignment, "untouched")
    assert scores and all(got == 0 for got, _ in scores.values()), scores


def test_as_on_a_gpu_keras_compiled_with_xla_in_the_grading_kernel(graded_course):
    """The switch reached the sandboxed kernel: its setup cell printed the note of as_on_gpu.apply."""
    for assignment in roundtrip_assignments():
        for path, expected in (("", False), (AS_ON_GPU, True)) if graded_as_on_a_gpu(assignment) else (("", False),):
            course = graded_course.root(assignment, path) / "autograde"
            graded = next((course / "autograded" / f"{path}reference" / assignment).glob("*.ipynb"))
            printed = "".join(
                o.get("text", "") for c in nbformat.read(graded, as_version=4).cells for o in c.get("outputs", [])
            )
            assert (f"{as_on_gpu.ENV_VAR} is set" in printed) is expected, (assignment, path)


CASES = [(a, s) for a in roundtrip_assignments() for s in submissions_for(a)]


@pytest.mark.parametrize(
    "assignment, submission",
    [
        pytest.param(a, s, marks=pytest.mark.xfail(strict=True, reason=f"known gap: {s.gap}") if s.gap else ())
        for a, s in CASES
    ],
    ids=[f"{a}-{s.name}" for a, s in CASES],
)
def test_plausible_answers_score_what_they_deserve(graded_course, assignment, submission):
    packed = next(p for p in pack(submissions_for(assignment)) if submission in p.members)
    if submission.without_notebook:  # no grades at all (see test_a_submission_without_its_notebook_...)
        with pytest.raises(MissingEntry):
            grades(graded_course, assignment, packed.student_id)
        return
    scores = grades(graded_course, assignment, packed.student_id)
    others = packed.expected()  # cells that another packed submission expects to lose
    (source,) = (REPO / "solutions" / assignment).glob("*.ipynb")
    unanswered = packed.scoring_zero(nbformat.read(source, as_version=4))  # exercises no member answers
    for grade_id, (got, full) in scores.items():
        if grade_id in submission.expected:
            expected = submission.expected[grade_id]
        elif grade_id in others:
            continue
        elif grade_id in unanswered:
            expected = 0
        else:
            expected = full
        assert got == expected, (
            f"{submission.name}: {grade_id} scored {got}, expected {expected} (all: {scores}); the cell's output: "
            + graded_output(graded_course, assignment, packed.student_id, grade_id)
        )


@pytest.mark.parametrize("assignment", roundtrip_assignments())
def test_feedback_and_export(graded_course, assignment):
    course = graded_course.root(assignment) / "autograde"
    students = [
        "reference",
        "untouched",
        *(p.student_id for p in pack(submissions_for(assignment)) if not any(m.without_notebook for m in p.members)),
    ]
    for student in students:
        assert list((course / "feedback" / student / assignment).glob("*.html")), student
    with open(course / "grades.csv", newline="") as f:
        rows = {(r["assignment"], r["student_id"]): r for r in csv.DictReader(f)}
    assert float(rows[(assignment, "reference")]["score"]) == float(rows[(assignment, "reference")]["max_score"]) > 0
    assert float(rows[(assignment, "untouched")]["score"]) == 0


def test_a_packed_student_leaves_unanswered_only_the_exercises_its_members_do_not_need():
    def cell(source, **nbgrader):
        return nbformat.v4.new_code_cell(source, metadata={"nbgrader": nbgrader} if nbgrader else {})

    reference = nbformat.v4.new_notebook()
    reference.cells = [
        cell("def helper(x):\n    rng = 1\n    return x + rng", grade_id="given", locked=True),
        cell("def first(x):\n    return helper(x)", grade_id="first", solution=True),
        cell("rng = 2\nassert first(1) == 2", grade_id="first_tests", grade=True),
        cell("def second(x):\n    rng = 3\n    return first(x) * rng", grade_id="second", solution=True),
        cell("assert second(1) == 6", grade_id="second_tests", grade=True),
        cell("def third(x):\n    return helper(x)", grade_id="third", solution=True),
        cell("assert third(1) == 2", grade_id="third_tests", grade=True),
    ]
    # second needs first (it calls it); nothing needs third; a local `rng` is no dependency on first_tests
    packed = PackedSubmission([Submission("s", {"second": "def second(x):\n    return 0"}, {"second_tests": 0})])
    assert packed.unanswered(reference) == {"third"}
    assert packed.scoring_zero(reference) == {"third_tests"}


def test_cases_aimed_at_the_kernel_are_packed_apart():
    packed = pack([Submission("a", {"x": ""}), Submission("k", {"y": ""}, kernel=True), Submission("b", {"y": ""})])
    assert [[m.name for m in p.members] for p in packed] == [["a", "b"], ["k"]]
    assert packed[0].student_id.startswith(PACKED_PREFIX) and packed[1].student_id.startswith(IN_KERNEL_PREFIX)


@pytest.mark.parametrize("assignment", roundtrip_assignments())
def test_packed_students_are_graded_without_a_kernel_but_those_aimed_at_it(graded_course, assignment):
    for packed in pack(submissions_for(assignment)):
        if packed.hangs or any(m.without_notebook for m in packed.members):
            continue
        (graded,) = autograded_notebooks(graded_course, assignment, packed.student_id)
        notes = [
            preprocessors.WITHOUT_A_KERNEL in "".join(o.get("text", "") for o in c.outputs)
            for c in graded.cells
            if c.cell_type == "code" and c.metadata.get("nbgrader", {}).get("solution")
        ]
        assert notes and set(notes) == {not packed.kernel}, packed.student_id
