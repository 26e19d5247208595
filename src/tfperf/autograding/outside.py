"""Grades decided outside the submission's kernel: ``GradeOutsideKernel``, an nbgrader step.

nbgrader runs the submitted notebook in the sandboxed kernel, for the learner's outputs and
feedback; whatever the kernel then says of a test cell counts for nothing. For every exercise
whose answer was written, this step starts a fresh worker (``python -m tfperf.autograding.worker``), sandboxed like the kernel (bubblewrap: no network, read-only course, the gradebook and
the instructor's source hidden, a private working folder and ``/tmp``, the kernel's limits), and
sends it the cells of that exercise only, from the *instructor's* notebook for everything but
the answer:

- the locked cells, the earlier exercises' reference answers, the demonstrations' imports, in the
  instructor's order, up to the exercise's test cells;
- the submitted answer cell of this exercise;
- the instructor's test cells of the exercise (hidden tests included).

The worker (the *subject*) is plain Python, not IPython: no kernel hooks, no AST transformers, no other
exercise's code, nothing left running by an earlier cell; the answer cell runs restricted
(:mod:`tfperf.autograding.restricted`: RestrictedPython, guarded builtins, this exercise's imports and withheld
functions). It reports each cell's and test cell's outcome (what it printed, the error it raised) as JSON, tagged
with a key that the grading process drew and sent before any learner code ran, in the one order it runs them
(:func:`_report_order`); after ``finished`` it must echo a token drawn then (:meth:`_Replies.sync`), so reports an
answer wrote ahead of its own are found. It is killed at the cell time limit. This
process writes those outcomes into the notebook's test cells, which ``SaveAutoGrades`` then
scores. An exercise whose answer is still the released placeholder scores 0 without a worker.
A worker that dies, hangs or sends anything else costs its own exercise only.

Speed checks (``grading.assert_speedup``) are timed from this process: in the worker, the check only
compares two results with the unfixed code's and leaves the timing to :func:`tfperf.grading.speed.decide`, which
runs the answer's function in the exercise's worker and the unfixed code in a worker of its own that
never runs learner code (:class:`Baselines`), reads the clock here, compares a drawn call of every
sample with the unfixed code's, and refuses a sample during which the answer's processes kept
computing.

The speed, prints and bytes checks of a test cell that passed in the worker are then decided here, kind by kind
(:mod:`tfperf.autograding.check_kinds`: each kind one module, one table).

Prints checks (``grading.assert_prints_at_most`` at the top level of a test cell) are watched from this
process too: in the worker, the check captures the call's output, which an answer can notice; so after the
test cells, this process asks the worker to call the function again with nothing captured and counts the
lines it reads from the worker's real output stream (:mod:`tfperf.grading.printing`). Where a speed
check's cell limits what its function prints, every timed call is read the same way.

Trace checks (``grading.assert_traces_at_most`` at the top level of a test cell) are read while the cell's
speed check is timed from here: TensorFlow's own trace count of each checked function before the first timed
call and after the last; a function that traces again on those fresh inputs fails (:mod:`tfperf.grading.tracing`).

Bytes checks (``grading.assert_moves_fewer_bytes`` at the top level of a test cell) are decided here: the
answer's bytes read again in its worker (XLA's module sent and counted here), the unfixed step's in the unfixed
code's worker, the limit compared here (:mod:`tfperf.grading.traffic`).

Concept checks (:mod:`tfperf.grading.concepts`) need no worker: their answers are read from the
submitted answer cell's text and compared here with the instructor's hidden tests.

The judge (:mod:`tfperf.autograding.judge`): an exercise's test cells whose checks all have a judge-side form run
in a process of their own that never runs learner code (no answer at all: the instructor's cells before it), with
the answer's names bound to handles whose calls this process relays to the worker (:class:`_Judge`): the worker
calls the answer on the judge's arguments and sends its result back as data; what a call printed is read here from
the worker's output stream; counts (host reads, traces) are read by the worker's own counters. The judge decides.

What still shares a process: the test cells that are not judged (:meth:`Exercise.in_judge`: a Keras model, a
dataset, a training run's objects handed to a check) run in the worker after its answer, so they rely on the
restriction, the guard (``tfperf.grading.guard``), the static screen, and on reading only objects of TensorFlow's
own classes (a dataset, a ``tf.function``).
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import queue
import secrets
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from nbconvert.preprocessors import Preprocessor
from nbformat import NotebookNode
from traitlets import Bool, Integer

from tfperf.autograding import check_kinds, forkserver, judge, sandbox, screen
from tfperf.autograding.cells import (
    exercises,
    instructor_notebook,
    is_written,
    released_answers,
    replay_source,
)
from tfperf.autograding.preprocessors import error_output
from tfperf.grading import concepts, printing, speed
from tfperf.grading.calls import is_marked_wrong, marked_wrong
from tfperf.grading.messages import OUTSIDE, CallFailed, NotAMessage, NotRunnable, WorkerStopped, receive, send
from tfperf.grading.specs import is_test
from tfperf.runtime import processes

#: Seconds a worker may take to start (the interpreter, before the first cell).
START_SECONDS = 60
NOT_WRITTEN = "NotWritten"


# ---------------------------------------------------------------- what a worker runs


@dataclass(frozen=True)
class Exercise:
    """One exercise of the instructor's notebook: its answer cell and its test cells, by grade_id."""

    answer: str
    tests: tuple[str, ...]
    cells: tuple[str, ...]  # what runs before the answer's place is taken: see program()
    answer_position: int  # where in ``cells`` the answer goes
    test_sources: tuple[str, ...]
    #: The answer runs restricted (:mod:`tfperf.autograding.restricted`). False only where a test exercises the
    #: layers behind the restriction (the sandbox, the report's order, the timing), as if an answer got past it.
    restricted: bool = True
    #: What the answer may import, and the library functions it may not use (the instructor's answer cell's
    #: metadata, as the static screen reads it: :func:`tfperf.autograding.screen.allowed_imports`, ``withheld_names``).
    imports: tuple[str, ...] = screen.ALLOWED_IMPORTS
    withheld: tuple[str, ...] = ()
    #: The names the instructor's answer cell defines (:func:`tfperf.autograding.judge.answer_names`): in the judge,
    #: they reach the answer's objects in the subject. None: every test cell runs in the subject.
    answer_names: tuple[str, ...] = ()

    def in_judge(self, *, timed_outside: bool = True) -> tuple[str, ...]:
        """The test cells that run in the judge (:func:`tfperf.autograding.judge.judged`), by grade_id: none where a
        given cell runs after the answer (what it made from the answer would be the judge's own)."""
        if self.answer_position != len(self.cells) - 1:
            return ()
        return tuple(
            g
            for g, s in zip(self.tests, self.test_sources)
            if judge.judged(s, self.answer_names, timed_outside=timed_outside)
        )

    @property
    def reads_memory(self) -> bool:
        """Whether a test cell reads the worker's memory (``grading.assert_memory_flat``, run by the judge): the worker
        then gives large freed blocks back at once, and what it holds before the answer runs is read as the floor."""
        return any("assert_memory_flat" in source for source in self.test_sources)

    def program(self, answer_source: str) -> list[str]:
        """The cells a worker runs before the test cells, with ``answer_source`` as the answer."""
        cells = list(self.cells)
        cells[self.answer_position] = answer_source
        return cells


def _grade_id(cell: NotebookNode) -> str | None:
    return cell.metadata.get("nbgrader", {}).get("grade_id")


def instructor_exercises(source_nb: NotebookNode) -> list[Exercise]:
    """Every exercise of the instructor's notebook, with the cells its worker runs: the code cells before
    its last test cell, in order, test cells left out, locked and answer cells whole (earlier answers
    the reference's), demonstration cells cut to their imports."""
    found = []
    for answer_index, test_indices in exercises(source_nb):
        if not test_indices:
            continue
        cells, position = [], None
        for i, cell in enumerate(source_nb.cells[: test_indices[-1]]):
            source = replay_source(cell)
            if source is None:
                continue
            if i == answer_index:
                position = len(cells)
            cells.append(source)
        found.append(
            Exercise(
                answer=_grade_id(source_nb.cells[answer_index]),
                tests=tuple(_grade_id(source_nb.cells[i]) for i in test_indices),
                cells=tuple(cells),
                answer_position=position,
                test_sources=tuple(source_nb.cells[i].source for i in test_indices),
                imports=screen.allowed_imports(source_nb.cells[answer_index]),
                withheld=screen.withheld_names(source_nb.cells[answer_index]),
                answer_names=judge.answer_names(source_nb.cells[answer_index].source),
            )
        )
    return found


# ---------------------------------------------------------------- the grading process's side


@dataclass
class Outcome:
    """What the grading process concluded about one test cell."""

    printed: str = ""
    error: dict | None = None
    #: Why the cell found the answer's function wrong on a call of its own (a result compared in the judge, or a timed
    #: call's result, calls back or tallied work compared here), or found that it raised on one, where it did: see
    #: :func:`_wrong_on_any_call`.
    wrong_result: str | None = None

    @property
    def passed(self) -> bool:
        return self.error is None

    def fail(self, reason: str) -> None:
        """The cell fails, for ``reason`` (shown as a ``GradingFailure``, as a check in the kernel would raise it)."""
        self.error = {"ename": "GradingFailure", "evalue": reason}

    def outputs(self) -> list[NotebookNode]:
        shown = []
        if self.printed:
            shown.append(NotebookNode(output_type="stream", name="stdout", text=self.printed))
        if self.error is not None:
            if self.error.get("traceback"):
                shown.append(
                    NotebookNode(
                        output_type="error",
                        ename=self.error["ename"],
                        evalue=self.error["evalue"],
                        traceback=list(self.error["traceback"]),
                    )
                )
            else:
                shown.append(error_output(self.error["ename"], self.error["evalue"]))
        return shown


def _error(value) -> dict | None:
    """A worker's error as this process uses it (strings only); None only where the worker sent none."""
    if value is None:
        return None
    if not isinstance(value, dict):
        return {"ename": OUTSIDE, "evalue": "the check's process sent an error this process cannot read."}
    lines = value.get("traceback")
    return {
        "ename": str(value.get("ename", "Error")),
        "evalue": str(value.get("evalue", "")),
        "traceback": [str(line) for line in lines] if isinstance(lines, list) else [],
    }


def _problem(message: str) -> Outcome:
    return Outcome(error={"ename": OUTSIDE, "evalue": message})


def worker_argv(workdir: str, *, sandboxed: bool = True) -> list[str]:
    """The command of one worker (:mod:`tfperf.autograding.worker`): this interpreter, under bubblewrap unless
    ``sandboxed`` is False."""
    argv = [sys.executable, "-m", "tfperf.autograding.worker"]
    if not sandboxed:
        return argv
    return sandbox.bwrap_argv(workdir, workdir, argv, bwrap=sandbox.find_bwrap(), hidden=sandbox.hidden_paths())


def _sandbox_argv(root: str, command: list[str]) -> list[str]:
    return sandbox.bwrap_argv(root, root, command, bwrap=sandbox.find_bwrap(), hidden=sandbox.hidden_paths())


#: The grading process's fork server (one at a time).
forks = forkserver.ForkServers()


@contextlib.contextmanager
def _worker_process(env_for, *, sandboxed: bool, forked: bool, course: bool = True):
    """A worker and its working folder (removed after): forked from the fork server where ``sandboxed`` and
    ``forked`` and it can serve (one that preloaded the course where ``course``), else a fresh process; its
    environment ``env_for(folder)``."""
    started = forks.worker(env_for, _sandbox_argv, course=course) if sandboxed and forked else None
    if started is not None:
        process, workdir = started
        try:
            yield process, workdir
        finally:
            process.kill()
            shutil.rmtree(workdir, ignore_errors=True)
        return
    with tempfile.TemporaryDirectory(prefix="tfperf-exercise-") as workdir:
        process = subprocess.Popen(
            worker_argv(workdir, sandboxed=sandboxed),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,  # read to its end by _Replies: what the answer really prints (printing.py)
            cwd=workdir,
            env=env_for(workdir),
            preexec_fn=sandbox.Limits().apply if sandboxed else None,
        )
        process.serving = None if sandboxed else process.pid  # the process that serves requests, where known
        try:
            yield process, workdir
        finally:
            process.kill()
            process.wait()


def _forward_record(worker_record: Path, destination: Path | None) -> None:
    """Append the speed checks' rows that a worker recorded (``TFPERF_RECORD``) to ``destination``: JSON
    objects only, one a line (they feed the instructor's report, never a grade)."""
    if destination is None or not worker_record.is_file():
        return
    rows = []
    for line in worker_record.read_text(errors="replace").splitlines():
        try:
            row = json.loads(line)
        except ValueError:
            continue
        if isinstance(row, dict):
            rows.append(json.dumps(row))
    if rows:
        with destination.open("a", encoding="utf-8") as f:
            f.write("".join(row + "\n" for row in rows))


def grade_exercise(
    exercise: Exercise,
    answer_source: str,
    *,
    timeout: float = 180,
    sandboxed: bool = True,
    record: Path | None = None,
    speed_checks: list | None = None,
    baseline_for=None,
    forked: bool = True,
) -> dict[str, Outcome]:
    """Run ``exercise`` with ``answer_source`` in a fresh worker (sandboxed, ``forked``: from the fork server
    where it can, :mod:`tfperf.autograding.forkserver`): grade_id -> outcome of each test cell.

    Every cell gets ``timeout`` seconds; a worker that goes past it, stops early, or sends a message
    without the key fails the test cells not yet reported. Then the checks of every test cell that passed are
    decided here, kind by kind (:mod:`tfperf.autograding.check_kinds`): its prints watched, its bytes compared,
    and each of ``speed_checks`` (of :mod:`tfperf.autograding.recheck`) in it timed against the unfixed code's
    worker that ``baseline_for(check)`` gives. The rows of the speed checks go to ``record`` (see
    :func:`_forward_record`)."""
    from tfperf.grading import RECORD_ENV_VAR
    from tfperf.grading.speed import TIMED_OUTSIDE_ENV_VAR

    key = secrets.token_hex(16)
    outcomes: dict[str, Outcome] = {}
    cells = exercise.program(answer_source)
    answer_error: dict | None = None

    def env_for(workdir: str) -> dict:
        return dict(
            os.environ,
            MPLBACKEND="Agg",
            PYTHONDONTWRITEBYTECODE="1",
            **{
                RECORD_ENV_VAR: str(Path(workdir) / "record.jsonl"),
                TIMED_OUTSIDE_ENV_VAR: "1" if speed_checks else "",
            },
        )

    in_judge = exercise.in_judge(timed_outside=bool(speed_checks))
    in_subject = [(g, s) for g, s in zip(exercise.tests, exercise.test_sources) if g not in in_judge]
    course = forkserver.needs_the_course(list(exercise.cells))  # the instructor's cells: never the answer's choice
    judged: _Judge | None = None
    with _worker_process(env_for, sandboxed=sandboxed, forked=forked, course=course) as (process, workdir):
        worker_record = Path(workdir) / "record.jsonl"
        worker = _Replies(process, key, timeout)
        worker.folders = (workdir,)
        problem = None
        pending: list | None = None  # (kind, grade_id, check): passed in a worker, not yet decided here (check_kinds)
        grading = None
        clean: dict = {}  # the unfixed code's workers this exercise used: each reset once, then kept

        def clean_worker(check):
            if check not in clean:
                clean[check] = baseline_for(check)
            return clean[check]

        try:
            if in_judge:  # sent now: it runs the instructor's cells while the subject runs its own
                judged = judges.start(exercise, in_judge)
            send(
                process.stdin,
                {
                    "key": key,
                    "cells": cells,
                    "answer": exercise.answer_position if exercise.restricted else None,
                    "imports": list(exercise.imports),
                    "withheld": list(exercise.withheld),
                    # large blocks given back when freed (it slows large allocations)
                    "return_large_frees": exercise.reads_memory,
                    "tests": [g for g, _ in in_subject],
                    "test_sources": [source for _, source in in_subject],
                },
            )
            wait = START_SECONDS + timeout
            reported: dict[str, Outcome] = {}  # counted once the worker echoed a token drawn after them
            answer_at = exercise.answer_position if exercise.restricted else None
            for kind, which in _report_order(len(cells), [g for g, _ in in_subject], answer_at):
                message, _ = worker.next(wait)
                wait = timeout
                if message.get(kind) != which or len(REPORT_KINDS & message.keys()) != 1:
                    raise _Stopped("its reports came out of order: the answer wrote into them.")
                if kind == "held":  # no answer ran yet: what its processes hold now is the memory checks' floor
                    if exercise.reads_memory:
                        floor = worker.memory()
                        worker.before_answer, worker.before_answer_resident = floor["held"], floor["resident"]
                    worker.go()
                if kind == "cell" and which == exercise.answer_position and message.get("error"):
                    answer_error = _error(message["error"])
                if kind == "test":
                    reported[which] = Outcome(str(message.get("printed", "")), _error(message.get("error")))
            worker.sync()
            outcomes.update(reported)
            grading = check_kinds.Grading(
                exercise,
                worker,
                list(speed_checks or []),
                in_judge,
                clean_worker if baseline_for is not None else None,
                record,
            )
            if judged is not None:
                outcomes.update(judged.run(worker, timeout))
            pending = grading.pending([g for g in exercise.tests if g in outcomes and outcomes[g].passed])
            pending += [
                (speed, g, c)
                for g in exercise.tests
                if _failed_a_check(outcomes.get(g))
                for c in speed.specs(grading, g, "")
            ]
            while pending:
                kind, grade_id, check = pending[0]
                if outcomes[grade_id].passed:  # a cell's first failure stands: its later checks are not decided
                    kind.decide(grading, check, outcomes[grade_id])
                elif kind is speed and _failed_a_check(outcomes[grade_id]):  # but its speed checks' calls still count
                    speed.marks(grading, check, outcomes[grade_id])
                pending.pop(0)
            _wrong_on_any_call(outcomes, {c.grade_id for c in speed_checks or [] if c.work is not None})
        except _Stopped as stopped:
            problem = str(stopped)
            hung = pending[0][1] if pending else None  # the cell whose check was being decided here
            if pending is None and judged is not None:  # stopped in the judge: the cells it finished before stand
                hung = next((g for g in in_judge if g not in judged.outcomes), None)
                outcomes.update(judged.outcomes)
            if pending is None and grading is not None:  # and so do the checks they left to decide here: undecided
                pending = grading.pending([g for g in exercise.tests if g in outcomes and outcomes[g].passed])
            for grade_id in {grade_id: None for _, grade_id, _ in pending or () if outcomes[grade_id].passed}:
                outcomes[grade_id].error = {  # passed in the worker: counts only once checked from here too
                    "ename": OUTSIDE,
                    "evalue": f"Checked by the grading process, this check did not finish: {problem}",
                }
            # one of the answer's calls never came back: held as wrong
            if is_marked_wrong(stopped) and hung is not None:
                outcomes.setdefault(hung, _problem(f"Graded outside the kernel, this check did not finish: {problem}"))
                outcomes[hung].wrong_result = f"a call of your function did not come back: {problem}"
                _wrong_on_any_call(outcomes, {c.grade_id for c in speed_checks or [] if c.work is not None})
        except OSError as err:
            problem = f"its process could not be started ({err})."
        finally:
            process.kill()
            process.wait()
            if judged is not None:
                judges.release(judged)
        _forward_record(worker_record, record)
    for grade_id in exercise.tests:
        if grade_id not in outcomes:
            outcomes[grade_id] = _problem(f"Graded outside the kernel, this check did not finish: {problem}")
        elif answer_error is not None and not outcomes[grade_id].passed:
            outcomes[
                grade_id
            ].printed += f"(The answer cell raised {answer_error['ename']}: {answer_error['evalue']})\n"
    return outcomes


def _failed_a_check(outcome: Outcome | None) -> bool:
    """Whether ``outcome``'s cell failed on a check (not a stopped process, nor an answer not written yet), with
    nothing found wrong yet: its speed checks' calls are still made for their results
    (:func:`tfperf.grading.speed.marks`)."""
    return (
        outcome is not None
        and outcome.error is not None
        and outcome.error.get("ename") == "GradingFailure"
        and outcome.wrong_result is None
    )


def _wrong_on_any_call(outcomes: dict[str, Outcome], tallied: set[str]) -> None:
    """Where a cell whose speed check tallies the exercise's work (``tallied``: chapter 5's ``train``, whose runs of
    ``train_step`` are the exercise's rule) found the answer's function wrong on one of its calls, timed or not
    (:attr:`Outcome.wrong_result`), the exercise's other test cells that passed fail too: the exercise asks for the
    same training on every call, and an answer that trains right only on the calls its correctness cell makes (told
    apart by how many calls came before, or by their sizes, raising on the others) is not correct. A slow answer's
    other cells stand; a call that ran out of memory raised, and is wrong, and so is one that never came back (past
    the cell's limit, too large to read, its process gone: :meth:`_Replies.ask`, :func:`_answered`)."""
    for grade_id in tallied:
        found = outcomes.get(grade_id)
        if found is None or found.wrong_result is None:
            continue
        for other, judged in outcomes.items():
            if other != grade_id and judged.passed:
                judged.fail(
                    f"Graded with {grade_id}'s calls too: {found.wrong_result.rstrip('.')}. An answer must be right "
                    "on the calls of every check, not only on this cell's."
                )


def _messages_of(stream) -> queue.Queue:
    """The messages a process writes to ``stream``, read on a thread of their own as they come; the reason the
    stream ended (``WorkerStopped`` or ``OSError``) is the last."""
    messages: queue.Queue = queue.Queue()

    def read() -> None:
        try:
            while True:
                messages.put(receive(stream))
        except (WorkerStopped, OSError) as err:
            messages.put(err)

    threading.Thread(target=read, daemon=True).start()
    return messages


class _Judge:
    """A judge's process (:mod:`tfperf.autograding.judge`), its messages read on a thread: :meth:`begin` sends it an
    exercise (the instructor's cells and the test cells it runs), :meth:`run` relays its calls to the subject and
    gathers its outcomes. It runs no learner code, so once it finished an exercise it may take the next
    (:class:`_Judges`)."""

    def __init__(self):
        from tfperf.grading import RECORD_ENV_VAR
        from tfperf.grading.speed import TIMED_OUTSIDE_ENV_VAR

        env = dict(os.environ, MPLBACKEND="Agg", PYTHONDONTWRITEBYTECODE="1")
        env[TIMED_OUTSIDE_ENV_VAR] = "1"  # never timed in the judge: see judge.judged
        env.pop(RECORD_ENV_VAR, None)
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tfperf.autograding.judge"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        self.messages = _messages_of(self.process.stdout)
        self.finished = False
        self.outcomes: dict[str, Outcome] = {}  # its test cells' outcomes so far: kept where a later one stopped

    def begin(self, exercise: Exercise, tests: tuple[str, ...]) -> None:
        self.finished = False
        self.outcomes = {}
        sources = dict(zip(exercise.tests, exercise.test_sources))
        self._send(
            {
                "cells": list(exercise.cells[: exercise.answer_position]),  # never an answer: see Exercise.in_judge
                "answer_names": list(exercise.answer_names),
                "tests": list(tests),
                "test_sources": [sources[g] for g in tests],
            }
        )

    def _send(self, header: dict, arrays: list | None = None) -> None:
        try:
            send(self.process.stdin, header, arrays)
        except OSError:
            raise _Stopped("the judge's process stopped.") from None

    def run(self, subject: _Replies, timeout: float) -> dict[str, Outcome]:
        """Relay the judge's calls to ``subject`` until it finished its test cells: their outcomes (:attr:`outcomes`,
        which keeps those of the cells that finished where a later one is stopped)."""
        outcomes = self.outcomes
        wait = START_SECONDS + timeout
        while True:
            try:
                message = self.messages.get(timeout=wait)
            except queue.Empty:
                raise _Stopped(f"a check ran past the time limit ({timeout:g} s) and was stopped.") from None
            wait = timeout
            if isinstance(message, Exception):
                raise _Stopped("the judge's process stopped.")
            header, arrays = message
            if "failed" in header:
                raise _Stopped(f"the judge could not run the instructor's cells ({header['failed']}).")
            if "call" in header:
                self._send(*_relay(header, arrays, subject, lambda h, a: self._called_back(h, a, subject)))
            elif "test" in header:
                outcome = Outcome(f"{JUDGED}\n{header.get('printed', '')}", _error(header.get("error")))
                error = header.get("error")
                if outcome.error is not None and isinstance(error, dict) and error.get("wrong_result") is True:
                    outcome.wrong_result = outcome.error["evalue"].split("\n")[0]
                outcomes[str(header["test"])] = outcome
            elif header.get("finished"):
                self.finished = True
                return outcomes

    def alive(self) -> bool:
        return self.process.poll() is None

    def _called_back(self, header: dict, arrays: list, subject: _Replies) -> tuple[dict, list]:
        """The judge's reply to the subject's call of a function the check passed (:func:`judge.callback_stub`);
        meanwhile, the judge may read the subject's memory (read here, as :func:`_relay` does)."""
        self._send(
            {"callback": header.get("callback"), "args": header.get("args"), "keywords": header.get("keywords")}, arrays
        )
        while True:
            try:
                message = self.messages.get(timeout=START_SECONDS)
            except queue.Empty:
                raise _Stopped("the judge did not answer.") from None
            if isinstance(message, Exception):
                raise _Stopped("the judge's process stopped.")
            reply, arrays = message
            if reply.get("probe") != "memory" or "call" not in reply:
                break
            self._send(subject.memory(reset=bool(reply.get("reset"))))
        if "called_back" in reply:
            return {"do": "called_back", "called_back": reply["called_back"]}, arrays
        return {
            "do": "called_back",
            "callback_error": str(reply.get("callback_error", "the check's function failed")),
        }, []

    def close(self) -> None:
        self.process.kill()
        self.process.wait()


class _Judges:
    """The judge kept between exercises (and submissions) of a grading run: a judge's start imports TensorFlow (about
    3 s of a core), and it never runs learner code. One per environment (``TFPERF_``, ``TF_``, ``CUDA_`` variables:
    another makes a new one); a judge that did not finish its last exercise is stopped, not kept. Stopped at exit."""

    def __init__(self) -> None:
        self.idle: dict[tuple, _Judge] = {}
        atexit.register(self.close)

    @staticmethod
    def _key() -> tuple:
        return tuple(sorted((k, v) for k, v in os.environ.items() if k.startswith(("TFPERF_", "TF_", "CUDA_"))))

    def start(self, exercise: Exercise, tests: tuple[str, ...]) -> _Judge:
        kept = self.idle.pop(self._key(), None)
        if kept is None or not kept.alive():
            kept = _Judge()
        kept.begin(exercise, tests)
        return kept

    def release(self, done: _Judge) -> None:
        if not (done.finished and done.alive()):
            done.close()
            return
        previous = self.idle.pop(self._key(), None)
        if previous is not None:
            previous.close()
        self.idle[self._key()] = done

    def close(self) -> None:
        for kept in self.idle.values():
            kept.close()
        self.idle.clear()


judges = _Judges()


#: The first line of a judged test cell's feedback.
JUDGED = "Decided by the judge, a process where no learner code ran; your answer was called in its own process."


def _count(value: object) -> int:
    """A count the subject sent, or 0 where it sent none (or something that is not one)."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def _relay(message: dict, arrays: list, subject: _Replies, called_back) -> tuple[dict, list]:
    """The judge's call of the answer's function, made in ``subject``: the reply the judge gets (the result as data,
    or the answer's error; for a call, what it printed as read here from the subject's output stream). The answer's
    calls of the check's functions go to the judge meanwhile: ``called_back(header, arrays)`` gives the reply."""
    probe = message.get("probe") if message.get("probe") in judge.PROBES else None
    if probe == "memory":  # read here, from outside the subject: nothing is asked of it
        return subject.memory(reset=bool(message.get("reset"))), []
    request = {"do": "call", "function": str(message.get("call")), "args": message.get("args"), "probe": probe}
    request |= {k: message[k] for k in ("kinds", "names", "marks") if k in message}
    token = subject.output.token() if probe is None and subject.output is not None else None
    if token is not None:
        request["witness"] = token
    try:
        send(subject.process.stdin, request, arrays)
    except OSError:
        raise _Stopped("the process running it stopped (it exited or crashed, or went over a limit).") from None
    # The worker started and ran its cells already (and imported what answers the judge's calls before its first request), but the
    # answer's first call may trace it, convert it with AutoGraph through the restriction's guards and compile it: a
    # margin of its own, at most the start's grace and no more than a cell's limit (so an endless first call at a
    # short limit is stopped in twice that limit, not a minute later)
    header, result = _answered(
        subject, None if subject.relayed else subject.timeout + min(START_SECONDS, subject.timeout)
    )
    subject.relayed += 1
    while "callback" in header:
        reply = called_back(header, result)  # the judge's: a stop there is not the answer's
        try:
            send(subject.process.stdin, *reply)
        except OSError:
            stopped = _Stopped("the process running it stopped (it exited or crashed, or went over a limit).")
            raise marked_wrong(stopped) from None
        header, result = _answered(subject)
    if header.get("error"):
        return {"error": _error(header["error"])}, []
    if probe is not None:
        return {k: v for k, v in header.items() if k != "key"}, []
    reply = {"not_data": str(header["not_data"])} if "not_data" in header else {"result": header.get("result")}
    if token is not None:
        seen = subject.output.printed(token)
        reply["printed"] = {"count": seen.count, "lines": seen.lines} if seen is not None else {"unread": True}
        reply["printed"]["graph_prints"] = _count(header.get("graph_prints"))
    return reply, result


#: What a worker's report of its cells is: one of these keys each.
REPORT_KINDS = frozenset({"cell", "held", "test", "finished"})


def _report_order(cells: int, tests, answer: int | None = None) -> list[tuple[str, object]]:
    """The reports a worker sends, in the one order it sends them: each cell (the answer cell, at ``answer``, after a
    ``held`` report: the worker waits there until it is told to go on), each test cell, then ``finished``."""
    held = [] if answer is None else [("held", answer)]
    return [
        *(item for i in range(cells) for item in ([*held, ("cell", i)] if i == answer else [("cell", i)])),
        *(("test", g) for g in tests),
        ("finished", True),
    ]


def _answered(subject: _Replies, wait: float | None = None) -> tuple[dict, list]:
    """The subject's next reply while one of the answer's calls is under way: a stop meanwhile (no reply within the
    limit, a reply too large to read, the process gone) is marked as that call's wrong result, as
    :meth:`_Replies.ask` marks it."""
    try:
        return subject.next(wait)
    except _Stopped as stopped:
        marked_wrong(stopped)
        raise


class _Stopped(Exception):
    """The worker stopped, ran past the time limit, or sent what it did not write; marked wrong (``marked_wrong``)
    where one of the answer's calls was under way (:meth:`_Replies.ask`, :func:`_answered`)."""


class _Replies:
    """A worker's replies, read on a thread: each within a time limit and carrying the key."""

    def __init__(self, process: subprocess.Popen, key: str, timeout: float):
        self.process, self.key, self.timeout = process, key, timeout
        self.output = printing.WorkerOutput(process.stderr) if process.stderr is not None else None
        self.watched: list[tuple[str, int]] | None = None  # while watching runs: (token, calls) of each
        self.serving = getattr(process, "serving", None)  # whose main thread answers (tfperf.runtime.processes.reading)
        self._inputs = 1  # how many inputs the last ``prepare`` made
        self.timed_calls = 0  # calls of the answer's function run by ``run`` requests
        self.relayed = 0  # the judge's calls relayed to it (``_relay``)
        self.before_answer: int | None = None  # the memory its processes held just before the answer cell ran
        self.before_answer_resident: int | None = None  # and all their resident memory then
        self.folders: tuple[str, ...] = ()  # its working folder, as this process sees it
        self.messages = _messages_of(process.stdout)

    def next(self, wait: float | None = None) -> tuple[dict, list]:
        try:
            message = self.messages.get(timeout=self.timeout if wait is None else wait)
        except queue.Empty:
            raise _Stopped(f"a cell ran past the time limit ({self.timeout:g} s) and was stopped.") from None
        if isinstance(message, NotAMessage):
            raise _Stopped(f"its process sent what could not be read ({message}).")
        if isinstance(message, Exception):
            raise _Stopped("the process running it stopped (it exited or crashed, or went over a limit).")
        header, arrays = message
        if header.get("key") != self.key:
            raise _Stopped("its process sent a message that it did not write (the answer wrote into it).")
        return header, arrays

    def call_watched(self, function: str, args: str) -> str:
        """Call ``function(*args)`` (expressions in the exercise's namespace) in the worker, its output read
        here: the token of :meth:`printing.WorkerOutput.printed`."""
        if self.output is None:
            raise _Stopped("its output could not be read.")
        token = self.output.token()
        self.request(do="prints", function=function, args=args, witness=token)
        return token

    def sync(self) -> None:
        """Send a token drawn now, after the worker's cells ran, and read it back as the next reply: a report that an
        answer wrote ahead of the worker's own (it cannot know the token) leaves the worker's in the way."""
        token = secrets.token_hex(16)
        if self.request(do="sync", token=token).get("sync") != token:
            raise _Stopped("its reports were not all its own: the answer wrote into them.")

    def request(self, **request) -> dict:
        """One request the worker answers with data (``prints``, ``bytes``, ``traces``): its reply; ``CallFailed``
        where it raised. What a timed call of the answer's did (``calls_back``, ``work``: its own data, read after
        the clock) that cannot be read is held as that call's wrong result, as :meth:`ask` holds its result: a stop
        meanwhile is marked, and an error is a marked :class:`NotRunnable`, which the speed check reports."""
        about_a_call = request.get("do") in ("calls_back", "work")
        try:
            send(self.process.stdin, request)
        except OSError:
            raise _Stopped("the process running it stopped (it exited or crashed, or went over a limit).") from None
        try:
            header, _ = self.next()
        except _Stopped as stopped:
            marked_wrong(stopped, about_a_call)
            raise
        if header.get("error"):
            error = _error(header["error"])
            if about_a_call:
                problem = (
                    f"what your function did in a timed call could not be read: {error['ename']}: {error['evalue']}"
                )
                raise marked_wrong(NotRunnable(problem))
            raise CallFailed(f"{error['ename']}: {error['evalue']}")
        return header

    def go(self) -> None:
        """Let the worker run the answer cell, where it waits (its ``held`` report)."""
        try:
            send(self.process.stdin, {"do": "go"})
        except OSError:
            raise _Stopped("the process running it stopped (it exited or crashed, or went over a limit).") from None

    def memory(self, reset: bool = False) -> dict:
        """What the worker's processes hold now, read here in ``/proc`` (and NVML), never asked of them: ``held``
        (their objects' memory, :func:`tfperf.runtime.processes.held_bytes`), ``resident`` and ``peak`` (all their
        resident memory now, and at its peak since the last ``reset``), each with the bytes of the files they wrote
        where they can (:func:`~tfperf.runtime.processes.written_bytes`); ``gpu``; and ``held`` and ``resident``
        before the answer cell ran."""
        root = self.serving or self.process.pid  # a sandbox's own process (bubblewrap) holds next to nothing
        if reset:
            processes.reset_peaks(root)
        inside = self.serving or processes.tree(root)[-1]  # a process inside the sandbox: its /tmp is the sandbox's
        files = processes.written_bytes(inside, self.folders)
        held, resident, peak = processes.held_bytes(root), processes.resident_bytes(root), processes.peak_bytes(root)
        return {
            "held": None if held is None else held + files,
            "resident": None if resident is None else resident + files,
            "peak": None if peak is None else peak + files,
            "gpu": processes.gpu_bytes(processes.tree(root)),
            "before_answer": self.before_answer,
            "before_answer_resident": self.before_answer_resident,
        }

    def end(self) -> None:
        """The speed check is over: the worker waits for the next one."""
        try:
            send(self.process.stdin, {"do": "end"})
        except OSError:
            raise _Stopped("the process running it stopped (it exited or crashed, or went over a limit).") from None

    def ask(self, **request) -> list:
        """One request of a speed check (:mod:`tfperf.autograding.recheck`): the arrays of its reply."""
        if request.get("do") == "prepare":
            self._inputs = len(request.get("seeds", ())) or 1
        if request.get("do") == "run":
            count = request.get("count")
            self.timed_calls += self._inputs if count is None else min(count, self._inputs)
        if request.get("do") == "run" and self.watched is not None and self.output is not None:
            request["witness"] = self.output.token()
            count = request.get("count")
            self.watched.append((request["witness"], self._inputs if count is None else min(count, self._inputs)))
        try:
            send(self.process.stdin, request)
        except OSError:
            raise _Stopped("the process running it stopped (it exited or crashed, or went over a limit).") from None
        try:
            header, arrays = self.next()
        except _Stopped as stopped:
            # one timed call of the answer's (a run request's few calls), or its result, never came back: it took
            # longer than a whole test cell may, where each of the exercise's correctness cells, all its calls
            # together, took less; or the process ended, or sent a result too large to read. An answer that never
            # returns on the exercise's inputs is wrong on them, as one that raised is (one slow over many calls is
            # stopped by the trial's own time limit, between calls, and keeps its other cells)
            marked_wrong(stopped, request.get("do") in ("run", "result"))
            raise
        if "error" in header:
            error = header["error"]
            lines = str(error).strip().splitlines() or [""]
            text = f"{error.get('ename')}: {error.get('evalue')}" if isinstance(error, dict) else lines[-1]
            problem = NotRunnable(f"your function raised an error while it was timed: {text}")
            # a call of the trial on the exercise's inputs, or its result, was not what the exercise asks (it raised,
            # or returned what is not data): held as a wrong result (speed.decide)
            raise marked_wrong(problem, request.get("do") in ("run", "result"))
        return arrays


class Baselines:
    """The unfixed code's workers (:class:`tfperf.autograding.recheck.Worker`), one per distinct worker of an
    instructor's notebook's speed checks (:func:`worker_identity`: two checks that time the same function on the
    same inputs share one), started when first needed and kept for the next checks and submissions of the same
    grading run: they run the instructor's cells only, never learner code. Each later use first runs
    those cells again in a new namespace (``reset``): the unfixed code's own state (the traces that its
    ``tf.function`` keeps, measured to slow it down run after run) never carries over from one
    check or submission to the next. Stopped at exit."""

    def __init__(self) -> None:
        self.workers: dict[tuple, object] = {}
        atexit.register(self.close)

    def worker(self, source: Path, source_nb: NotebookNode, check):
        from tfperf.autograding.recheck import Worker, _worker_argv, program

        key = (str(source), source.stat().st_mtime_ns, worker_identity(check))
        found = self.workers.get(key)
        if found is not None and found.alive():
            try:  # the instructor's cells again, in a new namespace: nothing of the last timing carries over
                found.ask(do="reset", make_inputs=check.make_inputs, calls_back=check.calls_back)
                return found
            except NotRunnable:
                found.close()
        env = dict(os.environ, MPLBACKEND="Agg", PYTHONDONTWRITEBYTECODE="1")
        env.pop("TFPERF_RECORD", None)
        worker = Worker(
            _worker_argv(),
            program(source_nb),
            check,
            check.baseline,
            "the unfixed code's process",
            env=env,
            report_target=True,
        )
        self.workers[key] = worker
        return worker

    def close(self) -> None:
        for worker in self.workers.values():
            worker.close()
        self.workers.clear()


baselines = Baselines()


def worker_identity(check) -> tuple:
    """What an unfixed code's worker is made of: the cells it runs (the check's own definitions), the function it
    times, the target and condition it reports, and the tally of work it names. Checks that differ only in their
    inputs' sizes (``make_inputs``, given again at each ``reset``) or in what the grading process asks of the worker
    (pairs, tolerances) are served by one worker, reset before each: a chapter's visible and hidden check of one
    function (about 4 s of a core saved per check and grading run: a worker's start imports TensorFlow)."""
    return (check.prelude, check.baseline, check.exercise, check.condition, check.work)


def _not_written(cell: NotebookNode, answer: str) -> list[NotebookNode]:
    """The outputs of a test cell whose answer is still the placeholder: the kernel's "not written yet"
    error where it gave one (a better message), otherwise the course's own."""
    for output in cell.get("outputs", []):
        if output.get("output_type") == "error" and "not written yet" in str(output.get("evalue", "")):
            return [output]
    return [
        error_output(
            NOT_WRITTEN,
            f"The answer cell '{answer}' is not written yet: it still holds the placeholder it was released with.",
        )
    ]


class GradeOutsideKernel(Preprocessor):
    """Score every test cell of an exercise from a fresh sandboxed worker, never from the kernel."""

    enabled = Bool(True, help="Decide test cells' outcomes outside the kernel").tag(config=True)
    timeout = Integer(0, help="Seconds per cell in a worker (0: Execute.timeout, else 180)").tag(config=True)
    time_speed_checks = Bool(
        True, help="Time the speed checks from the grading process (False: in the worker, as in the kernel)"
    ).tag(config=True)

    def preprocess(self, nb: NotebookNode, resources: dict) -> tuple[NotebookNode, dict]:
        import nbformat
        from nbgrader.coursedir import CourseDirectory

        from tfperf.grading.speed import speed_checks

        info = resources["nbgrader"]
        coursedir = CourseDirectory(config=self.config)
        source = instructor_notebook(self.config, resources)

        cells = {_grade_id(c): c for c in nb.cells if _grade_id(c)}
        try:
            source_nb = nbformat.read(source, as_version=4)
            found = instructor_exercises(source_nb)
            checks = speed_checks(source_nb) if self.time_speed_checks else []
            placeholders = released_answers(info["db_url"], info["notebook"], info["assignment"], coursedir.course_id)
        except Exception as err:  # noqa: BLE001 (no grade from the kernel either: every test cell fails)
            self.log.error("Cannot grade %s outside the kernel: %s", source, err)
            for cell in nb.cells:
                if is_test(cell):
                    cell.outputs = _problem(f"This check could not be graded outside the kernel ({err}).").outputs()
            return nb, resources
        timeout = self.timeout or int(self.config.Execute.get("timeout", 0) or 180)
        record = self._record_file(resources)
        for exercise in found:
            tests = [cells[g] for g in exercise.tests if g in cells]
            if any(o.get("ename") == "ScreenFailure" for c in tests for o in c.get("outputs", [])):
                continue  # the screen zeroed it: its message stays
            answer = cells.get(exercise.answer)
            if answer is None or not is_written(answer.source, placeholders.get(exercise.answer, "")):
                for cell in tests:
                    cell.outputs = _not_written(cell, exercise.answer)
                continue
            decided = concepts.grade(dict(zip(exercise.tests, exercise.test_sources)), answer.source)
            if decided is not None:  # a concept check: read from the answer cell as written, no worker
                for grade_id, (shown, error) in decided.items():
                    if grade_id in cells:
                        outcome = Outcome(shown)
                        if error is not None:
                            outcome.fail(error)
                        cells[grade_id].outputs = outcome.outputs()
                continue
            self.log.info("Grading exercise '%s' outside the kernel", exercise.answer)
            started = time.monotonic()
            outcomes = grade_exercise(
                exercise,
                answer.source,
                timeout=timeout,
                record=record,
                speed_checks=[c for c in checks if c.grade_id in exercise.tests],
                baseline_for=lambda check: baselines.worker(source, source_nb, check),
            )
            for grade_id, outcome in outcomes.items():
                if grade_id in cells:
                    cells[grade_id].outputs = outcome.outputs()
            passed = sum(outcome.passed for outcome in outcomes.values())
            self.log.info(
                "Exercise '%s': %d of %d checks passed, in %.1f s",
                exercise.answer,
                passed,
                len(outcomes),
                time.monotonic() - started,
            )
        return nb, resources

    @staticmethod
    def _record_file(resources: dict) -> Path | None:
        """Where the kernel's speed checks record (``TFPERF_RECORD``; relative: to the notebook's folder)."""
        from tfperf.grading import RECORD_ENV_VAR

        value = os.environ.get(RECORD_ENV_VAR)
        if not value:
            return None
        return Path(resources.get("metadata", {}).get("path") or ".") / value
