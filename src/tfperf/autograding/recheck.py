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
"""

from __future__ import annotations

import argparse
import ast
import json
import linecache
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from tfperf.autograding.cells import arguments, is_test, literal, replay_source
from tfperf.autograding.messages import NotRunnable, WorkerStopped, receive, send
from tfperf.autograding.scheduler import busy_seconds, reading, waited_for_others
from tfperf.autograding.speed_samples import seeded, serve_samples

MIN_SAMPLE_SECONDS = 0.05  # as the kernel's check (assert_speedup's min_time)
MAX_CALLS_PER_SAMPLE = 1000


# ---------------------------------------------------------------- what to re-time


@dataclass(frozen=True)
class SpeedCheck:
    """One ``grading.assert_speedup`` call of a test cell, as source text."""

    grade_id: str
    exercise: str
    candidate: str
    baseline: str
    make_inputs: str
    prelude: str  # the test cell's own definitions (functions, imports) before the call
    hidden: bool = False  # in the cell's hidden part
    rtol: float = field(default_factory=lambda: _default("rtol"))  # each as assert_speedup's own
    atol: float = field(default_factory=lambda: _default("atol"))
    pairs: int = field(default_factory=lambda: _default("pairs"))
    condition: str | None = None  # the test of the ``if`` the call is in (top level of the cell): timed where it holds
    calls_back: str | None = None  # its ``calls_back`` (source): evaluated in the unfixed code's worker only


def _default(name: str) -> object:
    from tfperf.autograding.cells import default
    from tfperf.grading.speed import assert_speedup

    return default(assert_speedup, name)


def _nbgrader(cell) -> dict:
    return cell.get("metadata", {}).get("nbgrader", {})


def speed_checks(source_nb) -> list[SpeedCheck]:
    """Every ``assert_speedup`` call in the test cells of the instructor's notebook (its arguments' defaults are
    ``assert_speedup``'s own)."""
    from tfperf.grading.speed import assert_speedup

    found = []
    for cell in source_nb.cells:
        if not is_test(cell):
            continue
        tree = ast.parse(cell.source)
        hidden_from = cell.source.find("### BEGIN HIDDEN TESTS")
        hidden_line = cell.source[:hidden_from].count("\n") + 1 if hidden_from >= 0 else None
        definitions = [
            node for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.ClassDef))
        ]
        prelude = "\n".join(ast.get_source_segment(cell.source, node) for node in definitions)
        conditions = {}  # a call in a top-level if's body: its test; in its else branch: the test negated
        for node in (n for n in tree.body if isinstance(n, ast.If)):
            test = ast.get_source_segment(cell.source, node.test)
            for branch, condition in ((node.body, test), (node.orelse, f"not ({test})")):
                conditions |= {id(inner): condition for statement in branch for inner in ast.walk(statement)}
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "assert_speedup"):
                continue
            given = arguments(node, assert_speedup)
            found.append(
                SpeedCheck(
                    grade_id=_nbgrader(cell)["grade_id"],
                    exercise=literal(given["exercise"]),
                    candidate=ast.get_source_segment(cell.source, given["candidate"]),
                    baseline=ast.get_source_segment(cell.source, given["baseline"]),
                    make_inputs=ast.get_source_segment(cell.source, given["make_inputs"]),
                    prelude=prelude,
                    hidden=hidden_line is not None and node.lineno > hidden_line,
                    rtol=literal(given["rtol"]),
                    atol=literal(given["atol"]),
                    pairs=literal(given["pairs"]),
                    condition=conditions.get(id(node)),
                    calls_back=None
                    if given["calls_back"] is None
                    else ast.get_source_segment(cell.source, given["calls_back"]),
                )
            )
    return found


def program(source_nb, answers_nb=None) -> list[str]:
    """The cells a worker runs: the source notebook's order; locked cells from the source; answer
    cells from ``answers_nb`` (the submission) or the source's reference; test cells left out;
    demonstration cells cut to their imports."""
    answers = {}
    if answers_nb is not None:
        answers = {_nbgrader(c).get("grade_id"): c.source for c in answers_nb.cells if _nbgrader(c).get("solution")}
    cells = []
    for cell in source_nb.cells:
        source = replay_source(cell)
        if source is None:
            continue
        meta = _nbgrader(cell)
        if meta.get("solution") and answers_nb is not None:
            if meta["grade_id"] not in answers:
                raise NotRunnable(f"the submission has no answer cell {meta['grade_id']!r}")
            source = answers[meta["grade_id"]]
        cells.append(source)
    return cells


# ---------------------------------------------------------------- the workers


def serve(requests: BinaryIO, replies: BinaryIO) -> None:
    """A worker: run the cells it is sent, say the exercise's target where it is asked, then serve samples
    (:func:`tfperf.autograding.speed_samples.serve_samples`) and ``bytes`` readings (:mod:`tfperf.autograding.bytes_checks`).
    ``reset`` runs the cells again in a new namespace (new objects: a ``tf.function``'s traces, a model's state),
    as a fresh process would have them, unless the check's condition was found false (nothing of it is timed here);
    its ``make_inputs``, where given, replaces the one the worker was started with."""
    from tfperf.autograding import bytes_checks
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
            due = eval(header["calls_back"], namespace) if header.get("calls_back") else None
            return eval(header["function"], namespace), eval(header["make_inputs"], namespace), due

    try:
        function, make_inputs, due = load()
        ready: dict = {"ready": True, "condition": current.get("holds", True)}
        if header.get("exercise"):
            ready |= target_of(header["exercise"])
    except BaseException:
        send(replies, {"error": traceback.format_exc(limit=3)})
        return
    send(replies, ready)
    reply = lambda head, arrays=None: send(replies, head, arrays)  # noqa: E731
    while True:
        request = serve_samples(lambda: receive(requests)[0], reply, function, make_inputs, due)
        if request.get("do") == "bytes":  # the reference's bytes (the only reading asked of the unfixed code)
            try:
                reply(bytes_checks.read(request, current["namespace"]))
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


def target_of(exercise: str) -> dict:
    """The target of ``exercise`` on this machine, as the unfixed code's worker reports it."""
    from tfperf.grading import targets
    from tfperf.runtime import device

    device_class = device.device_class()
    return {
        "target": targets.target_for(exercise, device_class),
        "device_class": device_class,
        "measured": targets.is_measured(exercise, device_class),
    }


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
        check: SpeedCheck,
        function: str,
        what: str,
        preexec_fn=None,
        env: dict | None = None,
        report_target: bool = False,
        direct: bool = True,
    ):
        """``direct``: ``argv`` starts the worker itself, not a sandbox around it: its process serves the requests
        (``serving``, else None)."""
        self.what = what
        self.process = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            preexec_fn=preexec_fn,
            env=env,
        )
        self.serving = self.process.pid if direct else None
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


@dataclass
class Verdict:
    exercise: str
    target: float
    ratios: list[float] = field(default_factory=list)
    problem: str | None = None
    seconds: dict[str, float] = field(default_factory=dict)  # median seconds per call: "answer", "baseline"
    preparing: float | None = None  # the answer's inputs took this share of what was allowed beyond the baseline's
    waited: float | None = None  # seconds the answer's worker waited for a CPU making a sample's inputs (median)
    planned: int = 0  # pairs the verdict was to rest on; fewer were taken where it was settled sooner
    second_look: int = 0  # pairs taken again where the answer's inputs first took too long to make

    @property
    def measured(self) -> str:
        """The median, the pairs and their range, and where the pairs stopped early."""
        from tfperf.measure import timing

        spread = f"{min(self.ratios):.2f}x-{max(self.ratios):.2f}x"
        early = timing.settled_early(len(self.ratios), self.planned)
        again = (
            f" ({self.second_look} of them taken again: the inputs first took long to make)" if self.second_look else ""
        )
        return f"median speedup {self.median:.2f}x over {len(self.ratios)} pairs ({spread}){early}{again}"

    @property
    def median(self) -> float | None:
        return statistics.median(self.ratios) if self.ratios else None

    @property
    def passed(self) -> bool:
        return self.problem is None and self.median is not None and self.median >= self.target

    def line(self) -> str:
        if self.problem:
            return f"{self.exercise}: NOT PASSED out of the kernel: {self.problem}"
        return (
            f"{self.exercise}: {'passed' if self.passed else 'NOT PASSED'} out of the kernel: {self.measured}, "
            f"target {self.target:.2f}x"
        )


def _worker_argv() -> list[str]:
    return [sys.executable, "-m", "tfperf.autograding.recheck", "worker"]


def _same_calls(answer, baseline, index: int, check: SpeedCheck) -> str | None:
    """Whether the answer's call ``index`` of its last sample called back the functions among its inputs as due
    (:func:`tfperf.grading.results.calls_differ`): due, the unfixed code's worker says from its call on the same
    inputs (its sample's first)."""
    from tfperf.grading.results import calls_differ

    problem = calls_differ(
        answer.request(do="calls_back", index=index)["calls"],
        baseline.request(do="calls_back", index=0)["calls"],
        rtol=check.rtol,
        atol=check.atol,
    )
    return None if problem is None else f"in a timed call, {problem}"


def _compare(got: list, expected: list, check: SpeedCheck) -> str | None:
    import numpy as np

    if len(got) != len(expected):
        return f"the answer returned {len(got)} arrays; the unfixed code {len(expected)}"
    for g, e in zip(got, expected):
        if g.shape != e.shape:
            return f"a result has shape {g.shape}; the unfixed code's has {e.shape}"
        if not np.allclose(g, e, rtol=check.rtol, atol=check.atol, equal_nan=True):
            return "a result differs from the unfixed code's on the same inputs"
    return None


#: CPU seconds the answer's processes may use while the unfixed code is timed: a process waiting for its
#: next request uses next to none; more than this (plus ``IDLE_SHARE`` of the sample) is work competing
#: with the unfixed code for the grader's cores.
IDLE_CPU_SECONDS = 0.02
IDLE_SHARE = 0.05

#: Both workers make as many inputs for a sample (the unfixed code's then runs on the first of them).
#: Over the samples, the median of how much longer the answer's worker took to make them than the unfixed
#: code's may not pass a floor, a share of the answer's own timed seconds for a sample and a share of the
#: unfixed code's time making them (noise). More is work done while inputs were made, before the clock
#: started (results computed in advance from the inputs as they were drawn); at most about a fifth of a
#: sample can hide there, far from any target. A median, not a sum: the first samples of many large inputs
#: grow a process's memory and can take several times as long as the next ones, on either side (measured
#: with chapter 6's inputs of 16 MB), which a sum charged to the side that paid it.
PREPARE_FLOOR_SECONDS = 0.01
PREPARE_SHARE = 0.10
PREPARE_NOISE_SHARE = 0.25


def _sample_size(worker, seeds: Iterator[int], alone: float) -> int:
    """Calls a sample of ``worker`` makes to take MIN_SAMPLE_SECONDS, from a call's time: of one call alone
    (``alone``, seconds, measured by the caller), or of a call among up to four made on inputs made together, as a
    timed sample's are, whichever is slower. One call alone would not do: an answer fast on a lone input (a memo
    keyed by ``id()``, which a freed input's id can meet again) got a thousand calls a sample, slow on a sample's live
    inputs (one failing check took 110 s, 2026-11-27)."""
    from tfperf.measure import timing

    def per_call(calls: int) -> float:
        worker.ask(do="prepare", seeds=[next(seeds) for _ in range(calls)])
        _, seconds = timing.stopwatch(lambda: worker.ask(do="run", count=calls), sync=lambda: None)
        return seconds / calls

    def wanted(seconds: float) -> int:
        return max(1, min(MAX_CALLS_PER_SAMPLE, int(MIN_SAMPLE_SECONDS / max(seconds, 1e-6)) + 1))

    together = min(wanted(alone), 4)
    return wanted(max(alone, per_call(together))) if together > 1 else 1


def recheck_one(
    check: SpeedCheck,
    baseline,
    answer,
    *,
    pairs: int = 7,
    target: float | None = None,
    time_limit: float | None = None,
) -> Verdict:
    """Time ``answer`` against ``baseline`` (workers: ``ask(do=...)``) as interleaved pairs on new inputs.

    The clock is read here, around each sample's ``run``. After every pair, one of the answer's calls, drawn
    here and never told to its worker, is compared with the unfixed code's result on the same inputs (the unfixed
    code's timed sample starts with them), and so are two untimed calls first: they warm both sides up, and the
    second tells a call's time.
    Each side's inputs are made just before its sample
    and that is timed too (less what the worker waited for a CPU that other processes held, where its serving
    thread is known: :mod:`tfperf.autograding.scheduler`): the answer's worker may not take much longer to make
    them than the unfixed code's (``PREPARE_*``; a median over that first gets a second look, twice as many pairs
    more), nor compute while the unfixed code is timed (``IDLE_*``). A median between the square root of the target and
    the target gets twice as many pairs more, and the median of all decides (as in the kernel's
    check). The pairs stop once the ones to come could not change that verdict
    (:func:`tfperf.measure.timing.settled_at`); settled above the target, the answer's samples of the pairs left are
    still run, untimed, and one drawn call of each compared, so a pass rests on as many compared results as before. ``target``: default, the one the baseline worker reported, else this machine's. ``time_limit``: seconds
    the whole timing may take, as a test cell's time limit bounds the kernel's own check (an answer slow on the timed
    calls only made one check take minutes); past it, the check fails."""
    from tfperf.measure import timing

    started = time.monotonic()

    if target is None:
        target = getattr(baseline, "ready", {}).get("target")
    if target is None:
        target = target_of(check.exercise)["target"]
    verdict = Verdict(check.exercise, target)
    pid = getattr(getattr(answer, "process", None), "pid", None)
    answer_busy = (lambda: busy_seconds(pid)) if pid is not None else (lambda: 0.0)
    draw = random.SystemRandom()
    seeds = iter(draw.randrange(2**32) for _ in range(10**7))

    def same_result(seed: int, index: int) -> str | None:
        baseline.ask(do="prepare", seeds=[seed])
        baseline.ask(do="run")
        return _compare(answer.ask(do="result", index=index), baseline.ask(do="result", index=0), check) or _same_calls(
            answer, baseline, index, check
        )

    alone: dict = {}  # seconds of one call alone, each side, from the second untimed call (the first warms up)
    for _ in range(2):  # untimed: the answer computes what the unfixed code computes
        seed = next(seeds)
        answer.ask(do="prepare", seeds=[seed])
        _, alone[answer] = timing.stopwatch(lambda: answer.ask(do="run"), sync=lambda: None)
        baseline.ask(do="prepare", seeds=[seed])
        _, alone[baseline] = timing.stopwatch(lambda: baseline.ask(do="run"), sync=lambda: None)
        if problem := _compare(
            answer.ask(do="result", index=0), baseline.ask(do="result", index=0), check
        ) or _same_calls(answer, baseline, 0, check):
            verdict.problem = problem
            return verdict
    calls = {worker: _sample_size(worker, seeds, alone[worker]) for worker in (baseline, answer)}
    seconds: dict = {baseline: [], answer: []}
    preparing: dict = {baseline: [], answer: []}  # seconds each side took to make a sample's inputs
    waiting: dict = {baseline: [], answer: []}  # of which it waited for a CPU that other processes held (not counted)

    def preparing_time(worker, seeds: list[int]) -> float:
        """Seconds ``worker`` took to make the inputs of ``seeds``, less what its serving thread waited for a CPU
        that other processes held (:mod:`tfperf.autograding.scheduler`), where that thread is known."""
        serving = getattr(worker, "serving", None)
        root = getattr(getattr(worker, "process", None), "pid", None)
        before = reading(root, serving) if serving and root else None
        _, took = timing.stopwatch(lambda: worker.ask(do="prepare", seeds=seeds), sync=lambda: None)
        after = reading(root, serving) if before is not None else None
        waiting[worker].append(waited_for_others(before, after))
        return took - waiting[worker][-1]

    def worked_while_preparing() -> str | None:
        excess = statistics.median(a - b for a, b in zip(preparing[answer], preparing[baseline]))
        allowed = (
            PREPARE_FLOOR_SECONDS
            + PREPARE_SHARE * statistics.median(seconds[answer]) * calls[answer]
            + PREPARE_NOISE_SHARE * statistics.median(preparing[baseline])
        )
        verdict.preparing = excess / allowed
        verdict.waited = statistics.median(waiting[answer])
        if excess > allowed:
            left_out = (
                ", waits for a CPU that other processes held left out" if getattr(answer, "serving", None) else ""
            )
            return (
                f"your code worked while its inputs were made, before the clock started ({excess:.2f} s more "
                f"than the unfixed code took for as many inputs{left_out}, the median of {len(preparing[answer])} "
                "samples): a result must be computed when the function is called"
            )
        return None

    def timed_pairs(count: int, settled) -> str | None:
        for index in range(count):
            order = (answer, baseline) if (len(verdict.ratios) + index) % 2 == 0 else (baseline, answer)
            size = max(calls.values())
            # The call compared after the pair (never told to the answer's worker): the unfixed code's sample starts
            # with its inputs, so its timed run gives the result to compare with, not a run of its own.
            kept = draw.randrange(calls[answer])
            batch = {answer: [next(seeds) for _ in range(size)]}
            batch[baseline] = [batch[answer][kept], *(next(seeds) for _ in range(size - 1))]
            took = {}
            for worker in order:
                preparing[worker].append(preparing_time(worker, batch[worker]))
                before = answer_busy()
                _, took[worker] = timing.stopwatch(lambda w=worker: w.ask(do="run", count=calls[w]), sync=lambda: None)
                if (
                    worker is baseline
                    and (busy := answer_busy() - before) > IDLE_CPU_SECONDS + IDLE_SHARE * took[worker]
                ):
                    return (
                        f"your code kept computing while the unfixed code was timed ({busy:.2f} s of CPU in "
                        f"{took[worker]:.2f} s): answers must not leave work running in the background"
                    )
            expected = baseline.ask(do="result", index=0)
            if problem := _compare(answer.ask(do="result", index=kept), expected, check) or _same_calls(
                answer, baseline, kept, check
            ):
                return problem
            for worker in order:
                seconds[worker].append(took[worker] / calls[worker])
            verdict.ratios.append(seconds[baseline][-1] / max(seconds[answer][-1], 1e-12))
            if time_limit is not None and time.monotonic() - started > time_limit:
                return (
                    f"the speed check ran past its time limit ({time_limit:g} s) after {len(verdict.ratios)} pairs "
                    f"of timed calls (your function's last took {seconds[answer][-1]:.3g} s a call)"
                )
            if settled(verdict.ratios):
                return None
        return None

    def compared_only(count: int) -> str | None:
        """Samples of the answer that are not timed, one drawn call of each compared: as many results compared as
        if every planned pair had been taken (an answer that skips work on some calls is not drawn less often)."""
        for _ in range(count):
            batch = [next(seeds) for _ in range(calls[answer])]
            answer.ask(do="prepare", seeds=batch)
            answer.ask(do="run", count=calls[answer])
            kept = draw.randrange(calls[answer])
            if problem := same_result(batch[kept], kept):
                return problem
            if time_limit is not None and time.monotonic() - started > time_limit:
                return f"the speed check ran past its time limit ({time_limit:g} s) while its results were compared"
        return None

    verdict.planned = pairs
    verdict.problem = timed_pairs(pairs, timing.settled_at(target, pairs))
    if verdict.problem is None and timing.needs_a_closer_look(verdict.median, target):
        verdict.planned = 3 * pairs  # close to the target: more evidence, not a verdict on a few
        verdict.problem = timed_pairs(2 * pairs, timing.settled_at(target, 3 * pairs, closer_look=False))
    if verdict.problem is None and verdict.ratios and verdict.median >= target:  # settled above: still compared
        verdict.problem = compared_only(verdict.planned - len(verdict.ratios))
    if verdict.problem is None and verdict.ratios and verdict.median >= target and worked_while_preparing():
        # Fast enough, but the inputs took too long to make: a second look, twice as many timed pairs more, each
        # like the others, then the medians of all decide. A stall that held the answer's worker for a few samples
        # (load can) is outvoted; work hidden in every sample's inputs is not, and an answer that stops hiding it
        # once looked at again is timed at its own speed in most pairs.
        verdict.second_look = 2 * len(verdict.ratios)
        verdict.problem = timed_pairs(verdict.second_look, lambda ratios: False)
        verdict.planned = len(verdict.ratios)
    if verdict.problem is None and verdict.ratios:
        verdict.problem = worked_while_preparing()
    if verdict.ratios:
        verdict.seconds = {
            "answer": statistics.median(seconds[answer]),
            "baseline": statistics.median(seconds[baseline]),
        }
    return verdict


# ---------------------------------------------------------------- a check kind (tfperf.autograding.check_kinds)


#: A cell the judge ran is timed here too: the judge checks results only, never a clock (it would time the pipes).
AFTER_THE_JUDGE = True


def specs(grading, grade_id: str, source: str) -> list[SpeedCheck]:
    """The speed checks of a test cell that the grading process times once the cell passed in the answer's
    worker (those of the notebook's :func:`speed_checks` in that cell; none where nothing is timed outside)."""
    return [check for check in grading.speed_checks if check.grade_id == grade_id]


def decide(grading, check: SpeedCheck, outcome) -> None:
    """Time ``check`` with the clock in this process: the answer's function in its exercise's worker
    (``grading.answer``), the unfixed code in a worker that never ran learner code (``grading.clean_worker``).
    The outcome of its test cell passes only if the speedup reaches the target, every result compared. A prints
    check of the same cell on the same function watches every timed call too (its limit holds for each), and the
    functions of the cell's trace checks may not trace during the timed calls (:mod:`tfperf.autograding.trace_checks`)."""
    from tfperf.autograding import prints_checks, trace_checks

    answer, said = grading.answer, "Timed by the grading process, out of the notebook's reach"
    source = grading.source(check.grade_id)
    prints = next(
        (p for p in prints_checks.prints_checks(check.grade_id, source) if p.function == check.candidate), None
    )
    traces = trace_checks.traces_checks(check.grade_id, source)
    try:
        baseline = grading.clean_worker(check)
        if not baseline.ready.get("condition", True):  # decided in the unfixed code's worker, as the cell decides it
            outcome.printed += f"{said}: not timed on this machine ({check.condition} is false there).\n"
            return
        before = [trace_checks.counted(answer, t) for t in traces]
        answer.ask(do="speed", function=check.candidate, make_inputs=check.make_inputs)
    except NotRunnable as problem:
        outcome.error = {"ename": "GradingFailure", "evalue": f"{said}: {problem}"}
        return
    answer.timed_calls = 0
    answer.watched = [] if prints is not None else None
    try:
        verdict = recheck_one(check, baseline, answer, pairs=check.pairs, time_limit=answer.timeout)
    except NotRunnable as problem:
        outcome.error = {"ename": "GradingFailure", "evalue": f"{said}: {problem}"}
        return
    finally:
        watched, answer.watched = answer.watched, None
        answer.end()
    if prints is not None and watched:
        if problem := prints_checks.while_timed(answer.output, watched, prints):
            outcome.error = {"ename": "GradingFailure", "evalue": f"{said}: {problem}"}
            return
    for check_traces, counted_before in zip(traces, before):
        after = trace_checks.counted(answer, check_traces)
        if problem := trace_checks.retraced(check_traces, counted_before, after, answer.timed_calls):
            outcome.error = {"ename": "GradingFailure", "evalue": f"{said}: {problem}"}
            return
    device_class = str(getattr(baseline, "ready", {}).get("device_class", "")).upper()
    if verdict.problem:
        outcome.error = {"ename": "GradingFailure", "evalue": f"{said}: {verdict.problem}."}
        return
    _record_verdict(verdict, device_class.lower(), grading.record)
    if not verdict.passed:
        outcome.error = {
            "ename": "GradingFailure",
            "evalue": f"{said}: same results as the unfixed code, but not fast enough: {verdict.measured}; "
            f"the target on a {device_class} is at least {verdict.target:.2f}x.",
        }
        return
    outcome.printed += f"{said}: {verdict.measured}; target {verdict.target:.2f}x on {device_class}.\n"


def _record_verdict(verdict: Verdict, device_class: str, record: Path | None) -> None:
    """The row a speed check records (``TFPERF_RECORD``, as :func:`tfperf.grading.speed.assert_speedup` writes
    them), for the instructor's report."""
    if record is None:
        return
    row = {
        "exercise": verdict.exercise,
        "device_class": device_class,
        "target": verdict.target,
        "ratios": list(verdict.ratios),
        "candidate_s": verdict.seconds.get("answer"),
        "baseline_s": verdict.seconds.get("baseline"),
        "timed": "outside",
        "preparing_share": verdict.preparing,
        "preparing_waited": verdict.waited,
    }
    with record.open("a", encoding="utf-8") as f:
        f.write(json.dumps(row) + "\n")


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
        c for c in speed_checks(source_nb) if (not exercises or c.exercise in exercises) and (hidden or not c.hidden)
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
                )
                verdicts.append(recheck_one(check, baseline, answer, pairs=pairs))
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
