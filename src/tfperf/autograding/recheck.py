"""A second opinion on a submission's speed checks, timed out of its reach: ``python -m tfperf recheck``.

In the grading kernel the learner's code and the checks share one process, and the guard
notices only the changes it knows about. ``recheck`` times each ``grading.assert_speedup``
of a submission again with three processes:

- the *baseline worker* runs the instructor's notebook (given cells, no learner code) and
  calls the unfixed code;
- the *answer worker* runs the learner's answer cells, with the instructor's locked cells, in
  the grading sandbox (``tfperf.autograding.sandbox``), and calls the learner's function;
- this process sends both the same inputs (``make_inputs`` run under the same seed in each),
  reads the clock around each of their samples (interleaved pairs, median ratio, as the
  check does), and compares every result of the answer with the baseline's.

Nothing the learner's code does in its process can reach the clock, the target, the unfixed
code or the comparison. Messages from the answer worker are JSON and NumPy ``.npy`` arrays
(never pickles), so a hostile answer cannot run code in this process.

What it runs of the submission: its answer cells and the instructor's locked cells, in the
source notebook's order; demonstration cells only for their imports (as ``nbgrader`` cells
cannot depend on more). An answer that needs a cell of its own outside the answer cells
is reported as not runnable here.

The grading process times every ``grading.assert_speedup`` of a test cell that passed this way too: the speed check
kind (:mod:`tfperf.grading.speed`: the assertion, its spec, :func:`tfperf.grading.speed.decide`) uses this module's
:class:`Worker` for the unfixed code and the exercise's worker for the answer, with the one speed trial that the
kernel's visible check runs too (:func:`tfperf.grading.speed_trial.trial`).

**A worker's side** (:func:`tfperf.autograding.worker.serve_samples`, :func:`~tfperf.autograding.worker.seeded`): inputs made from seeds, samples run, results returned,
each on request; the calls of the functions among a sample's inputs, as data. The process that asks holds the clock:
it reads it around each ``run`` request. A worker makes the inputs of a sample (``prepare``) before it is timed, runs
the function on each, or on the first ``count`` (``run``: every result made concrete and the device waited for,
inside the request), and sends a result back as ``.npy`` arrays when asked (``result``). A ``run`` with a
``witness`` token is not captured: the asking process reads what it prints (:mod:`tfperf.grading.printing`). A
function among the inputs (a report function) reaches the function timed as the one a judged call passes does
(:func:`tfperf.autograding.worker.callback_stub`), and its calls are recorded in the worker (a tensor argument
read inside the clock, as the judge's stub reads it): ``calls_back`` sends those of a sample's call as numbers (with
``due``, the unfixed code's worker sends the calls due from the answer instead). Served alike by this module's
workers (the unfixed code) and by the exercise workers (the answer).
"""

from __future__ import annotations

import argparse
import linecache
import os
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import BinaryIO

from tfperf.autograding.cells import replay_source
from tfperf.grading import speed
from tfperf.grading.messages import NotRunnable, WorkerStopped, receive, send
from tfperf.grading.specs import nbgrader_of
from tfperf.grading.speed_trial import Verdict
from tfperf.runtime import processes


def program(source_nb, answers_nb=None) -> list[str]:
    """The cells a worker runs: the source notebook's order; locked cells from the source; answer
    cells from ``answers_nb`` (the submission) or the source's reference; test cells left out;
    demonstration cells cut to their imports."""
    answers = {}
    if answers_nb is not None:
        answers = {nbgrader_of(c).get("grade_id"): c.source for c in answers_nb.cells if nbgrader_of(c).get("solution")}
    cells = []
    for cell in source_nb.cells:
        source = replay_source(cell)
        if source is None:
            continue
        meta = nbgrader_of(cell)
        if meta.get("solution") and answers_nb is not None:
            if meta["grade_id"] not in answers:
                raise NotRunnable(f"the submission has no answer cell {meta['grade_id']!r}")
            source = answers[meta["grade_id"]]
        cells.append(source)
    return cells


def serve(requests: BinaryIO, replies: BinaryIO) -> None:
    """A worker: run the cells it is sent, say the exercise's target where it is asked, then serve samples
    (:func:`serve_samples`) and ``bytes`` readings (:mod:`tfperf.grading.traffic`).
    ``reset`` runs the cells again in a new namespace (new objects: a ``tf.function``'s traces, a model's state),
    as a fresh process would have them, unless the check's condition was found false (nothing of it is timed here);
    its ``make_inputs``, where given, replaces the one the worker was started with."""
    from tfperf.autograding.worker import keep_counters_installed, seeded, serve_samples
    from tfperf.grading import traffic
    from tfperf.runtime import logs

    header, _ = receive(requests)
    current: dict = {}  # "namespace": the one the cells last ran in

    def load() -> tuple:
        if current.get("holds") is False:  # not timed on this machine: the cells are not run again for nothing
            return None, None, None  # (chapter 7's served check: each run of its cells started 3 TensorFlow servers)
        namespace: dict = {"__name__": "__main__"}
        current["namespace"] = namespace
        with logs.captured_output(), seeded(0):
            for index, source in enumerate([*header["cells"], header["prelude"]]):
                name = f"<cell {index}>"  # AutoGraph reads a function's source through linecache
                linecache.cache[name] = (len(source), None, source.splitlines(keepends=True), name)
                exec(compile(source, name, "exec"), namespace)
            if header.get("condition") and not current.setdefault("holds", bool(eval(header["condition"], namespace))):
                return None, None, None  # not timed on this machine: nothing to build
            keep_counters_installed()  # as the answer's worker has them while timed
            due = eval(header["calls_back"], namespace) if header.get("calls_back") else None
            if header.get("work"):  # the unfixed code's worker: the test cell's source, named for the answer's
                current["work"] = eval(header["work"], namespace)
                current["work_name"] = speed.work_name(current["work"])
            elif header.get("work_name"):  # the answer's: the course's function, imported by that name
                current["work"] = speed.work_named(header["work_name"])
            return eval(header["function"], namespace), eval(header["make_inputs"], namespace), due

    try:
        function, make_inputs, due = load()
        ready: dict = {"ready": True, "condition": current.get("holds", True), "work": current.get("work_name")}
        if header.get("exercise"):
            ready |= speed.target_of(header["exercise"])
    except BaseException:
        send(replies, {"error": traceback.format_exc(limit=3)})
        return
    send(replies, ready)
    reply = lambda head, arrays=None: send(replies, head, arrays)  # noqa: E731
    while True:
        request = serve_samples(lambda: receive(requests)[0], reply, function, make_inputs, due, current.get("work"))
        if request.get("do") == "bytes":  # the reference's bytes (the only reading asked of the unfixed code)
            try:
                reply(traffic.read(request, current["namespace"]))
            except BaseException:
                reply({"error": traceback.format_exc(limit=3)})
            continue
        if request.get("do") != "reset":
            return
        try:  # another check of the same function may make its inputs otherwise (its own sizes)
            header["make_inputs"] = request.get("make_inputs", header["make_inputs"])
            header["calls_back"] = request.get("calls_back", header.get("calls_back"))
            function, make_inputs, due = load()
        except BaseException:
            reply({"error": traceback.format_exc(limit=3)})
            return
        reply({"ok": True})


def _worker_main() -> None:
    replies = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # whatever the cells print goes to stderr, not into the replies
    serve(sys.stdin.buffer, replies)


class Worker:
    """A worker process, reached through its stdin and stdout; ``ready``: what it said once its cells ran."""

    def __init__(
        self,
        argv: list[str],
        cells: list[str],
        check: speed.SpeedCheck,
        function: str,
        what: str,
        preexec_fn=None,
        env: dict | None = None,
        report_target: bool = False,
        direct: bool = True,
        work: str | None = None,
    ):
        """``direct``: ``argv`` starts the worker itself, not a sandbox around it: its process serves the requests.
        Otherwise the worker's own process inside the sandbox serves them, found before it is sent anything (so
        before it runs any code but its own: :func:`_started_inside`). ``serving``: that process, None where it
        was not found (the waits for a CPU are then not left out of its time making inputs). ``work``: the name of the
        check's tally of work, as the unfixed code's worker gave it (``ready["work"]``), for the answer's worker."""
        self.what = what
        self.process = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            preexec_fn=preexec_fn,
            env=env,
        )
        self.serving = self.process.pid if direct else _started_inside(self.process.pid)
        send(
            self.process.stdin,
            {
                "cells": cells,
                "prelude": check.prelude,
                "function": function,
                "make_inputs": check.make_inputs,
                "exercise": check.exercise if report_target else None,
                "condition": check.condition if report_target else None,
                "calls_back": check.calls_back if report_target else None,
                "work": check.work if report_target else None,
                "work_name": work,
            },
        )
        self.ready, _ = self._expect()

    def ask(self, **request) -> list:
        try:
            send(self.process.stdin, request)
        except OSError as err:
            raise NotRunnable(f"{self.what} stopped ({err})") from err
        return self._expect()[1]

    def request(self, **request) -> dict:
        """One request answered with data only (``bytes``): the reply's header."""
        try:
            send(self.process.stdin, request)
        except OSError as err:
            raise NotRunnable(f"{self.what} stopped ({err})") from err
        return self._expect()[0]

    def _expect(self) -> tuple[dict, list]:
        try:
            header, arrays = receive(self.process.stdout)
        except WorkerStopped as err:
            raise NotRunnable(f"{self.what} stopped ({err})") from err
        if "error" in header:
            raise NotRunnable(f"{self.what} failed:\n{header['error']}")
        return header, arrays

    def alive(self) -> bool:
        return self.process.poll() is None

    def close(self) -> None:
        try:
            send(self.process.stdin, {"do": "exit"})
        except OSError:
            pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


# ---------------------------------------------------------------- the parent


def _started_inside(root: int, wait: float = 10.0) -> int | None:
    """The pid of the worker's own process below ``root`` (a sandbox: bubblewrap's processes around it), once it
    started; None where it did not within ``wait`` seconds."""
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        for pid in processes.tree(root)[1:]:
            try:
                argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if Path(argv[0].decode(errors="replace")).name != "bwrap" and b"tfperf.autograding.recheck" in argv:
                return pid
        time.sleep(0.01)
    return None


def _worker_argv() -> list[str]:
    return [sys.executable, "-m", "tfperf.autograding.recheck", "worker"]


# ---------------------------------------------------------------- the command


def recheck(
    submission: Path,
    source: Path,
    *,
    pairs: int = 7,
    sandboxed: bool = True,
    exercises: list[str] | None = None,
    hidden: bool = True,
) -> list[Verdict]:
    """Re-time every speed check of ``submission`` (a notebook) against ``source`` (the instructor's);
    ``hidden=False`` leaves out the checks of the hidden tests."""
    import nbformat

    from tfperf.autograding import sandbox

    source_nb = nbformat.read(source, as_version=4)
    try:
        answers_nb = nbformat.read(submission, as_version=4)
    except Exception as err:
        raise NotRunnable(f"{submission} is not a readable notebook ({err})") from err
    checks = [
        c
        for c in speed.speed_checks(source_nb)
        if (not exercises or c.exercise in exercises) and (hidden or not c.hidden)
    ]
    baseline_cells, answer_cells = program(source_nb), program(source_nb, answers_nb)
    verdicts = []
    for check in checks:
        with tempfile.TemporaryDirectory(prefix="tfperf-recheck-") as workdir:
            answer_argv = _worker_argv()
            if sandboxed:
                answer_argv = sandbox.bwrap_argv(
                    workdir, workdir, answer_argv, bwrap=sandbox.find_bwrap(), hidden=sandbox.hidden_paths()
                )
            baseline = answer = None
            try:
                baseline = Worker(
                    _worker_argv(),
                    baseline_cells,
                    check,
                    check.baseline,
                    "the unfixed code's process",
                    report_target=True,
                )
                if not baseline.ready.get("condition", True):
                    continue  # the check's condition does not hold on this machine: nothing is timed
                answer = Worker(
                    answer_argv,
                    answer_cells,
                    check,
                    check.candidate,
                    "the answer's process",
                    preexec_fn=sandbox.Limits().apply if sandboxed else None,
                    direct=not sandboxed,
                    work=baseline.ready.get("work"),
                )
                verdicts.append(speed.timed_outside(check, baseline, answer, pairs=pairs))
            except NotRunnable as problem:
                from tfperf.grading import targets

                verdicts.append(Verdict(check.exercise, targets.target_for(check.exercise), problem=str(problem)))
            finally:
                for worker in (answer, baseline):
                    if worker is not None:
                        worker.close()
    return verdicts


def find_source(submission: Path) -> Path:
    """The instructor's notebook of the same name in the checkout's ``solutions/``."""
    from tfperf.runtime import checkout

    matches = sorted((checkout.course_root() / "solutions").glob(f"*/{submission.name}"))
    if len(matches) != 1:
        raise NotRunnable(f"no single solutions/*/{submission.name}: pass --source")
    return matches[0]


def main(argv: list[str] | None = None) -> int:
    args = argv if argv is not None else sys.argv[1:]
    if args[:1] == ["worker"]:
        _worker_main()
        return 0
    parser = argparse.ArgumentParser(prog="python -m tfperf recheck", description=__doc__.split("\n\n")[0])
    add_arguments(parser)
    return run(parser.parse_args(args))


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("submission", type=Path, help="the submitted notebook")
    parser.add_argument("--source", type=Path, help="the instructor's notebook (default: solutions/*/<same name>)")
    parser.add_argument("--exercise", action="append", help="only this exercise (repeatable)")
    parser.add_argument("--pairs", type=int, default=7, help="timed pairs per check (default 7)")
    parser.add_argument(
        "--no-sandbox", action="store_true", help="run the answer without bubblewrap (trusted code only)"
    )


def run(args: argparse.Namespace) -> int:
    """Print one line per speed check; exit 1 unless every one passed."""
    try:
        source = args.source or find_source(args.submission)
        verdicts = recheck(
            args.submission, source, pairs=args.pairs, sandboxed=not args.no_sandbox, exercises=args.exercise
        )
    except NotRunnable as problem:
        print(f"recheck: {problem}", file=sys.stderr)
        return 2
    for verdict in verdicts:
        print(verdict.line())
    if not verdicts:
        print("No speed checks in this notebook.")
    return 0 if verdicts and all(v.passed for v in verdicts) else 1


if __name__ == "__main__":
    sys.exit(main())
