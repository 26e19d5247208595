"""A speed trial: one function timed against another as interleaved pairs on new inputs, every result compared.

The one engine of the course's speed checks. The kernel's visible check (:func:`tfperf.grading.speed.assert_speedup`)
runs it on two :class:`LocalSide` objects in the kernel's process; the grading process
(:mod:`tfperf.autograding.recheck`) runs it on two workers, the answer's and the unfixed code's, reading the clock
out of their reach. A *side* answers the requests a worker answers (:mod:`tfperf.autograding.recheck`):
``ask(do="prepare", seeds=[...])`` makes a sample's inputs, one per seed, before the clock starts;
``ask(do="run", count=n)`` runs the function on the first ``n`` (timed here, around the request); ``ask(do="result",
index=i)`` returns call ``i``'s result as NumPy arrays; ``request(do="calls_back", index=i)`` the calls it made of the
functions among its inputs; ``request(do="work", index=i)`` what call ``i`` added to the course's tally of work,
where the check names one, and the runs it had queued at each call back it owes (:class:`Samples`). Two sides given the same seed compute on the same inputs.
"""

from __future__ import annotations

import contextlib
import hashlib
import random
import statistics
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from tfperf.grading.calls import GradingFailure
from tfperf.grading.results import calls_differ
from tfperf.measure import timing
from tfperf.runtime import device, processes

MIN_SAMPLE_SECONDS = 0.05  # a sample's least length: timer resolution is noise
MAX_CALLS_PER_SAMPLE = 1000


@dataclass(frozen=True)
class Closeness:
    """How close a result must be to the unfixed code's (``numpy.allclose``'s ``rtol`` and ``atol``)."""

    rtol: float
    atol: float


@dataclass
class Verdict:
    """What a trial found: the pairs' ratios (unfixed code's seconds over the answer's) or the problem that ended it."""

    exercise: str
    target: float
    ratios: list[float] = field(default_factory=list)
    problem: str | None = None
    #: The problem is that a compared call computed something else than the unfixed code's call on the same inputs
    #: (its result, its calls back, the tally of its work): a wrong answer, not a slow one.
    wrong: bool = False
    seconds: dict[str, float] = field(default_factory=dict)  # median seconds per call: "answer", "baseline"
    preparing: float | None = None  # the answer's inputs took this share of what was allowed beyond the baseline's
    waited: float | None = None  # seconds the answer's worker waited for a CPU making a sample's inputs (median)
    planned: int = 0  # pairs the verdict was to rest on; fewer were taken where it was settled sooner
    second_look: int = 0  # pairs taken again where the answer's inputs first took too long to make

    @property
    def measured(self) -> str:
        """The median and the pairs, then in one parenthesis: their range, each side's median time per call, where the
        pairs stopped early, and how many were taken again."""
        details = [
            f"{min(self.ratios):.2f}x-{max(self.ratios):.2f}x",
            f"{_duration(self.seconds['answer'])} vs {_duration(self.seconds['baseline'])} per call"
            if self.seconds
            else "",
            timing.settled_early(len(self.ratios), self.planned),
            f"{self.second_look} of them taken again: the inputs first took long to make" if self.second_look else "",
        ]
        return f"median speedup {self.median:.2f}x over {len(self.ratios)} pairs ({'; '.join(d for d in details if d)})"

    def row(self, device_class: str) -> dict:
        """The row a speed check appends to its record (``TFPERF_RECORD``: ``tfperf calibrate``, the instructor's
        report), from the kernel's check and from the grading process alike."""
        return {
            "exercise": self.exercise,
            "device_class": device_class,
            "target": self.target,
            "ratios": list(self.ratios),
            "candidate_s": self.seconds.get("answer"),
            "baseline_s": self.seconds.get("baseline"),
        }

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


def _duration(seconds: float) -> str:
    return f"{seconds:.3g} s" if seconds >= 1 else f"{seconds * 1e3:.3g} ms"


def _same_calls(answer, baseline, index: int, close: Closeness) -> str | None:
    """Whether the answer's call ``index`` of its last sample called back the functions among its inputs as due
    (:func:`tfperf.grading.results.calls_differ`): due, the unfixed code's worker says from its call on the same
    inputs (its sample's first)."""
    problem = calls_differ(
        answer.request(do="calls_back", index=index)["calls"],
        baseline.request(do="calls_back", index=0)["calls"],
        rtol=close.rtol,
        atol=close.atol,
    )
    return None if problem is None else f"in a timed call, {problem}"


def _same_work(answer, baseline, index: int) -> str | None:
    """Whether the answer's call ``index`` of its last sample added to the course's tally of work (:class:`Samples`)
    what the unfixed code's call on the same inputs (its sample's first) added, to float tolerance (a sum of float32
    values made in another order differs in its last bits)."""
    import numpy as np

    answered, unfixed = answer.request(do="work", index=index), baseline.request(do="work", index=0)
    got, expected = answered["work"], unfixed["work"]
    for name, value in expected.items():
        mine = got.get(name)
        if mine is None or not np.isclose(float(mine), float(value), rtol=1e-5, atol=1e-3):
            said = "none" if mine is None else f"{float(mine):.10g}"
            return (
                f"in a timed call, the {name}: {said}, against {float(value):.10g} in the unfixed code's call on the "
                "same inputs: the timed calls must do the work the checked calls do"
            )
    return _calls_back_in_time(answered.get("runs_at_calls"), unfixed.get("runs_at_calls"))


def _calls_back_in_time(got: list[int] | None, due: list[int] | None) -> str | None:
    """Whether each of the answer's calls back (a report) came at most one block of runs late: by its k-th, no more
    runs queued than the unfixed code had made by its (k+1)-th due call, the rule
    :func:`tfperf.grading.syncs.assert_host_syncs_at_most` checks on the cell's own calls (the last may come once all
    runs are queued: their number is compared before). ``got``: the runs the answer's call had queued at each of its
    calls back; ``due``: the unfixed code's at each call the answer owes. Nothing to compare where either is missing
    or the calls differ in number (compared before)."""
    if got is None or due is None or len(got) != len(due):
        return None
    for k, (runs, limit) in enumerate(zip(got, due[1:])):
        if runs > limit:
            return (
                f"in a timed call, its report {k + 1} of {len(got)} was made after {runs} runs of the training step "
                f"had been queued, while the unfixed code's next report came after {limit}: report while the loop "
                "trains (at most one block late), on every call"
            )
    return None


def _compare(got: list, expected: list, close: Closeness) -> str | None:
    import numpy as np

    if len(got) != len(expected):
        return f"the answer returned {len(got)} arrays; the unfixed code {len(expected)}"
    for g, e in zip(got, expected):
        if g.shape != e.shape:
            return f"a result has shape {g.shape}; the unfixed code's has {e.shape}"
        if not np.allclose(g, e, rtol=close.rtol, atol=close.atol, equal_nan=True):
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


def _sample_size(worker, seeds: Iterator[int], alone: float, prepare=None) -> int:
    """Calls a sample of ``worker`` makes to take MIN_SAMPLE_SECONDS, from a call's time: of one call alone
    (``alone``, seconds, measured by the caller), or of a call among up to four made on inputs made together, as a
    timed sample's are, whichever is slower. One call alone would not do: an answer fast on a lone input (a memo
    keyed by ``id()``, which a freed input's id can meet again) got a thousand calls a sample, slow on a sample's live
    inputs (one failing check took 110 s, 2026-11-27). The calls together are timed twice, the faster time counting:
    the first sample of several large inputs grows the worker's memory and took several times as long a call
    (chapter 6's answer: a sample of one 7 ms call, under ``MIN_SAMPLE_SECONDS``, the request's own cost in its
    time; ``docs/measurements-grading.md``)."""

    prepare = prepare or (lambda worker, seeds: worker.ask(do="prepare", seeds=seeds))

    def per_call(calls: int) -> float:
        prepare(worker, [next(seeds) for _ in range(calls)])
        _, seconds = timing.stopwatch(lambda: worker.ask(do="run", count=calls), sync=lambda: None)
        return seconds / calls

    def wanted(seconds: float) -> int:
        return max(1, min(MAX_CALLS_PER_SAMPLE, int(MIN_SAMPLE_SECONDS / max(seconds, 1e-6)) + 1))

    together = min(wanted(alone), 4)
    if together == 1:
        return 1
    per = min(per_call(together), per_call(together))  # the first warms the worker up to a sample's inputs
    return wanted(max(alone, per))


def trial(
    baseline,
    answer,
    *,
    exercise: str,
    target: float,
    close: Closeness,
    pairs: int = 7,
    time_limit: float | None = None,
    every_pair: bool = False,
    between_pairs: Callable[[], None] | None = None,
    from_proc: bool = False,
    limits: CallLimits | None = None,
    work: bool = False,
) -> Verdict:
    """Time ``answer`` against ``baseline`` (sides: ``ask(do=...)``) as interleaved pairs on new inputs.

    The clock is read here, around each sample's ``run``. After every pair, one of the answer's calls, drawn
    here and never told to its side, is compared with the unfixed code's result on the same inputs (the unfixed
    code's timed sample starts with them), within ``close`` (its ``rtol`` and ``atol``), and so are two untimed calls
    first: they warm both sides up, and the second tells a call's time.
    Each side's inputs are made just before its sample
    and that is timed too (less what the worker waited for a CPU that other processes held, read from ``/proc`` with
    ``from_proc`` where the worker's serving thread is known: :func:`tfperf.runtime.processes.reading`): the answer's side may
    not take much longer to make them than the unfixed code's (``PREPARE_*``; a median over that first gets a second
    look, twice as many pairs more), nor compute while the unfixed code is timed (``IDLE_*``, where its process is
    known). A median between the square root of the target and the target gets twice as many pairs more, and the
    median of all decides. The pairs stop once the ones to come could not change that verdict
    (:func:`tfperf.measure.timing.settled_at`; none stop early with ``every_pair``, as ``tfperf calibrate`` wants);
    settled above the target, the answer's samples of the pairs left are still run, untimed, and one drawn call of
    each compared, so a pass rests on as many compared results as before. ``between_pairs`` runs after each pair (the
    kernel's guard). ``time_limit``: seconds the whole timing may take, as a test cell's time limit bounds a check
    (an answer slow on the timed calls only made one check take minutes); past it, the check fails. ``limits``:
    the host reads and uploads one call may make, counted on every call of both sides (:class:`CallsCounted`: both
    pay the same count) and checked on the answer's. ``work``: each compared call also added to the course's tally of
    work (:class:`Samples`' ``work``) what the unfixed code's call on the same inputs added: a rule the cell checks on
    calls of its own (chapter 5's steps, each ``train_step`` on the weights and the batch) holds on the timed calls
    too, where an answer might tell them apart and do other work; and each call back it owes (a report) came at most
    one block of the tally's runs after the unfixed code's (:func:`_calls_back_in_time`)."""
    started = timing.now()
    verdict = Verdict(exercise, target)
    pid = getattr(getattr(answer, "process", None), "pid", None)
    answer_busy = (lambda: processes.busy_seconds(pid)) if from_proc and pid is not None else (lambda: 0.0)
    draw = random.SystemRandom()
    seeds = iter(draw.randrange(2**32) for _ in range(10**7))
    key = draw.randbytes(16)  # the tallies' seeds, drawn here: the same for two sides' calls on the same inputs

    def prepare(worker, seeds: list[int]) -> None:
        if not work:
            worker.ask(do="prepare", seeds=seeds)
            return
        tallies = [
            int.from_bytes(hashlib.blake2b(f"{s}".encode(), key=key, digest_size=8).digest()) >> 1 for s in seeds
        ]
        worker.ask(do="prepare", seeds=seeds, tallies=tallies)

    def same_result(seed: int, index: int) -> str | None:
        prepare(baseline, [seed])
        baseline.ask(do="run")
        return compared(index)

    def compared(index: int) -> str | None:
        """The answer's call ``index`` against the unfixed code's last sample's first call (the same inputs)."""
        problem = (
            _compare(answer.ask(do="result", index=index), baseline.ask(do="result", index=0), close)
            or _same_calls(answer, baseline, index, close)
            or (_same_work(answer, baseline, index) if work else None)
        )
        verdict.wrong = problem is not None
        return problem

    if limits:
        for side in (answer, baseline):
            side.ask(do="count_calls")
    alone: dict = {}  # seconds of one call alone, each side, from the second untimed call (the first warms up)
    for _ in range(2):  # untimed: the answer computes what the unfixed code computes
        seed = next(seeds)
        prepare(answer, [seed])
        _, alone[answer] = timing.stopwatch(lambda: answer.ask(do="run"), sync=lambda: None)
        prepare(baseline, [seed])
        _, alone[baseline] = timing.stopwatch(lambda: baseline.ask(do="run"), sync=lambda: None)
        if problem := compared(0):
            verdict.problem = problem
            return verdict
    calls = {worker: _sample_size(worker, seeds, alone[worker], prepare) for worker in (baseline, answer)}
    seconds: dict = {baseline: [], answer: []}
    preparing: dict = {baseline: [], answer: []}  # seconds each side took to make a sample's inputs
    waiting: dict = {baseline: [], answer: []}  # of which it waited for a CPU that other processes held (not counted)

    def preparing_time(worker, seeds: list[int]) -> float:
        """Seconds ``worker`` took to make the inputs of ``seeds``, less what its serving thread waited for a CPU
        that other processes held (:func:`tfperf.runtime.processes.reading`), where that thread is known."""
        serving = getattr(worker, "serving", None)
        root = getattr(getattr(worker, "process", None), "pid", None)
        before = processes.reading(root, serving) if from_proc and serving and root else None
        _, took = timing.stopwatch(lambda: prepare(worker, seeds), sync=lambda: None)
        after = processes.reading(root, serving) if before is not None else None
        waiting[worker].append(processes.waited_for_others(before, after) if before is not None else 0.0)
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
                ", waits for a CPU that other processes held left out"
                if from_proc and getattr(answer, "serving", None)
                else ""
            )
            return (
                f"your code worked while its inputs were made, before the clock started ({excess:.2f} s more "
                f"than the unfixed code took for as many inputs{left_out}, the median of {len(preparing[answer])} "
                "samples): a result must be computed when the function is called"
            )
        return None

    def timed_pairs(count: int, settled) -> str | None:
        for _ in range(count):
            order = (answer, baseline) if len(verdict.ratios) % 2 == 0 else (baseline, answer)  # each first in turn
            size = max(calls.values())
            # The call compared after the pair (never told to the answer's worker): the unfixed code's sample starts
            # with its inputs, so its timed run gives the result to compare with, not a run of its own.
            kept = draw.randrange(calls[answer])
            batch = {answer: [next(seeds) for _ in range(size)]}
            batch[baseline] = [batch[answer][kept], *(next(seeds) for _ in range(size - 1))]
            for worker in order:  # sides that share their inputs' making (in this process) make them now, untimed
                if hasattr(worker, "draw"):
                    worker.draw(batch[worker])
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
            if problem := compared(kept):
                return problem
            for worker in order:
                seconds[worker].append(took[worker] / calls[worker])
            verdict.ratios.append(seconds[baseline][-1] / max(seconds[answer][-1], 1e-12))
            if between_pairs is not None:
                between_pairs()
            if time_limit is not None and timing.now() - started > time_limit:
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
            prepare(answer, batch)
            answer.ask(do="run", count=calls[answer])
            kept = draw.randrange(calls[answer])
            if problem := same_result(batch[kept], kept):
                return problem
            if time_limit is not None and timing.now() - started > time_limit:
                return f"the speed check ran past its time limit ({time_limit:g} s) while its results were compared"
        return None

    def settled_at(planned: int, **closer):
        return (lambda ratios: False) if every_pair else timing.settled_at(target, planned, **closer)

    verdict.planned = pairs
    verdict.problem = timed_pairs(pairs, settled_at(pairs))
    if verdict.problem is None and timing.needs_a_closer_look(verdict.median, target):
        verdict.planned = 3 * pairs  # close to the target: more evidence, not a verdict on a few
        verdict.problem = timed_pairs(2 * pairs, settled_at(3 * pairs, closer_look=False))
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
    if verdict.problem is None and limits:
        verdict.problem = limits.broken(answer.request(do="counted"))
    if verdict.ratios:
        verdict.seconds = {
            "answer": statistics.median(seconds[answer]),
            "baseline": statistics.median(seconds[baseline]),
        }
    return verdict


# ---------------------------------------------------------------- sides in this process


def leaves(value: Any) -> list:
    """A settled result (:func:`tfperf.measure.timing.settle`) as a flat list of NumPy arrays (tensors, arrays,
    numbers; nested lists and tuples). Read after the clock, so only NumPy's or TensorFlow's own conversion runs: a
    result that could not be made concrete inside the clock raises here, and the check fails."""
    import numpy as np

    if isinstance(value, (list, tuple)):
        return [leaf for item in value for leaf in leaves(item)]
    if isinstance(value, timing.Unsettled):
        raise TypeError(f"the result is {value!r}")
    if timing.is_computed(value) and hasattr(value, "numpy"):
        value = value.numpy()
    return [np.asarray(value)]


class Draws:
    """Inputs for two sides in one process, by seed: ``make_inputs()`` (unseeded) runs once for a seed, and each side
    asking for it gets its own copy of the arrays (:func:`tfperf.measure.timing.copy_arrays`: a call that changes its
    inputs in place changes no other side's). Only the seeds of the last two samples are kept: a trial gives the
    unfixed code's sample one seed of the answer's sample of the same pair."""

    def __init__(self, make_inputs: Callable[[], Any]) -> None:
        self._make = make_inputs
        self._made: dict[int, tuple] = {}
        self._samples: deque[list[int]] = deque()

    def made(self, seeds: list[int]) -> list[tuple]:
        """Each seed's inputs, made where they were not yet (kept while one of the last two samples uses them)."""
        made = [self._made[s] if s in self._made else tuple(self._make()) for s in seeds]
        self._made.update(zip(seeds, made))
        self._samples.append(list(seeds))
        while len(self._samples) > 2:
            for seed in self._samples.popleft():
                if not any(seed in kept for kept in self._samples):
                    self._made.pop(seed, None)
        return made

    def sample(self, seeds: list[int]) -> list[tuple]:
        return [timing.copy_arrays(inputs) for inputs in self.made(seeds)]


class Samples:
    """One side's samples, as a worker and a side in this process keep them alike: :meth:`prepare` makes each seed's
    inputs (``make(seeds)``: one tuple of arguments a seed) and replaces the functions among them
    (``record(args, calls)``: each call noted in ``calls``); :meth:`run` calls ``function`` on each (or the first
    ``count``), every result made concrete inside the request (:func:`tfperf.measure.timing.settle`) and the device
    waited for before and after, ``around(work)`` running the calls (to capture or read what they print);
    :meth:`result` gives one result as arrays (:func:`leaves`); ``made`` and ``calls`` stay readable for the calls'
    comparison. ``work``, where given, is the course's tally of work (:func:`tfperf.experiments.gpu_sync.work_done`:
    ``work(seed)`` a block that tallies what runs in it, weighted from ``seed``, read without a wait): each call runs
    in one, its result settled, with the seed the trial sent for its inputs (:meth:`prepare`'s ``tallies``), and
    :meth:`worked` gives what the call added, read after the clock."""

    def __init__(
        self,
        function: Callable[..., Any],
        make: Callable[[list[int]], list[tuple]],
        record: Callable[[tuple, list], tuple],
        work: Callable[[int], Any] | None = None,
    ) -> None:
        self.function, self.make, self.record, self.work = function, make, record, work
        self.made: list[tuple] = []  # each sample's inputs as made (its functions not replaced)
        self.calls: list[list] = []  # each sample's calls of those functions
        self.inputs: list[tuple] = []
        self.results: list = []
        self.counted: CallsCounted | None = None  # with :meth:`count_calls`: every call's reads and uploads
        self.tally_seeds: list[int] = []  # with ``work``: each input's tally seed, as the trial sent them
        self.tallies: list = []  # with ``work``: each call's tally (:class:`tfperf.experiments.gpu_sync.Tally`)
        self.open_tally = None  # with ``work``: the tally of the call running now, told of each call back
        self.note_at: set[int] | None = None  # the calls back to note (all where None): those found due so far

    def prepare(self, seeds: list[int], tallies: list[int] | None = None) -> None:
        self.made, self.calls, self.inputs, self.results = [], [], [], []  # the last sample's memory freed first
        self.tally_seeds = [int(t) for t in tallies] if tallies is not None else [0] * len(seeds)
        self.made = self.make(seeds)
        self.calls = [CallsNoted(self._called_back) for _ in self.made]
        self.inputs = [self.record(args, calls) for args, calls in zip(self.made, self.calls)]

    def run(self, count: int | None = None, around: Callable[[Callable[[], list]], list] = lambda work: work()) -> None:
        chosen = self.inputs if count is None else self.inputs[: int(count)]
        for recorded in self.calls[: len(chosen)]:
            recorded.clear()  # a sample run again records its calls again
        device.sync()
        self.tallies = []
        self.results = around(lambda: [self._settled_call(a, t) for a, t in zip(chosen, self.tally_seeds)])
        device.sync()

    def _settled_call(self, args: tuple, tally_seed: int) -> Any:
        if self.work is None:
            return timing.settle(self._call(args))
        with self.work(tally_seed) as tally:
            self.open_tally = tally
            try:
                result = timing.settle(self._call(args))
            finally:
                self.open_tally = None
        self.tallies.append(tally)
        return result

    def _called_back(self, position: int) -> None:
        if self.open_tally is None or not hasattr(self.open_tally, "called_back"):
            return
        if self.note_at is None or position in self.note_at:
            self.open_tally.called_back(position)

    def worked(self, index: int) -> dict:
        """What call ``index`` of the last run added to the tally of work, by name (empty without ``work``)."""
        return {} if self.work is None else self.tallies[index].added()

    def runs_at_calls(self, index: int, due: list | None = None) -> list[int] | None:
        """With ``work`` whose tally notes them: at each call back of call ``index`` of the last run, the runs it had
        queued; with ``due`` (the calls an answer owes, picked from this call's own: :func:`due_positions`), at those
        calls only. None where there is nothing to say (no such tally, calls not picked from this call's, or one not
        noted). With ``due``, later calls note only the calls back found due so far (:attr:`note_at`): the unfixed
        code's side, which calls back on every step where an answer does on some, then pays a note per call back the
        answer owes, as the answer does, and not one per step (measured in ``docs/measurements-grading.md``)."""
        tally = self.tallies[index] if self.work is not None else None
        if tally is None or not hasattr(tally, "runs_at_calls"):
            return None
        noted = dict(tally.runs_at_calls())
        if due is None:
            positions: list[int] | None = list(range(len(self.calls[index])))
        else:
            positions = due_positions(self.calls[index], due)
            if positions is not None:
                self.note_at = (self.note_at or set()) | set(positions)
        if positions is None or any(p not in noted for p in positions):
            return None
        return [noted[p] for p in positions]

    def _call(self, args: tuple) -> Any:
        if self.counted is None:
            return self.function(*args)
        from tfperf.measure import host_syncs

        host_syncs.give(list(args))  # the call's own arguments: reading their shapes is not a sync
        with host_syncs.counting(ops=False) as syncs:
            result = self.function(*args)
        self.counted.add(syncs)
        return result

    def count_calls(self) -> None:
        """From now on, count each call's host reads and uploads (:class:`CallsCounted`)."""
        self.counted = self.counted or CallsCounted()

    def counts(self) -> dict:
        """What was counted, as data (:meth:`CallsCounted.as_data`; no calls where nothing was)."""
        return self.counted.as_data() if self.counted is not None else {"calls": 0}

    def result(self, index: int) -> list:
        return leaves(self.results[index])


class CallsNoted(list):
    """A sample's calls of the functions among its inputs (each call's numbers, appended by the recorder a side
    passes, :func:`tfperf.grading.speed.recording`): appending one first calls ``noted(position)``, which tells the
    tally of the call running now (:meth:`Samples._called_back`) that the function called back, and where."""

    def __init__(self, noted: Callable[[int], None]) -> None:
        super().__init__()
        self.noted = noted

    def append(self, call: Any) -> None:
        self.noted(len(self))
        super().append(call)


def due_positions(calls: list, due: list) -> list[int] | None:
    """Where each of ``due`` (calls a ``calls_back`` picked from ``calls``, :func:`tfperf.grading.speed.calls_due`)
    stands in ``calls``, matched by identity in order; None where one is not among them (made anew)."""
    positions, start = [], 0
    for call in due:
        found = next((i for i in range(start, len(calls)) if calls[i] is call), None)
        if found is None:
            return None
        positions.append(found)
        start = found + 1
    return positions


@dataclass
class CallsCounted:
    """The host reads and uploads of every timed call, by the course's counter without its op callback
    (:func:`tfperf.measure.host_syncs.counting` with ``ops=False``: the reads that bring a value into Python, and the
    copies of host data into tensors, at a small cost both sides pay alike), and the most that one call made of each. A trial
    with ``limits`` checks them: the rule a test cell counts on a call of its own holds on every timed call too, so
    an answer cannot keep it only where it can tell it is counted."""

    calls: int = 0
    reads: tuple[int, str] = (0, "no host reads")  # the most one call made, and how
    uploads: tuple[int, str] = (0, "no uploads")

    def add(self, syncs) -> None:
        self.calls += 1
        if syncs.count > self.reads[0]:
            self.reads = (syncs.count, syncs.describe())
        if syncs.uploads > self.uploads[0]:
            self.uploads = (syncs.uploads, syncs.describe_uploads())

    def as_data(self) -> dict:
        return {"calls": self.calls, "reads": list(self.reads), "uploads": list(self.uploads)}


@dataclass(frozen=True)
class CallLimits:
    """The most host reads (``host_syncs``) and uploads one timed call may make (None: not counted)."""

    host_syncs: int | None = None
    uploads: int | None = None

    def __bool__(self) -> bool:
        return self.host_syncs is not None or self.uploads is not None

    def broken(self, seen: dict) -> str | None:
        """What the answer's counts (:meth:`CallsCounted.as_data`) break of these limits, or None."""
        if not int(seen.get("calls", 0)):
            return "your function's timed calls were not counted"
        for limit, (most, how), unit in (
            (self.host_syncs, seen.get("reads", (0, "")), "host reads"),
            (self.uploads, seen.get("uploads", (0, "")), "uploads"),
        ):
            if limit is not None and int(most) > limit:
                return (
                    f"one of your function's timed calls made {how}; at most {limit} {unit} a call expected, on "
                    "every call, timed or not"
                )
        return None


class LocalSide:
    """One side of a trial run in this process: ``function`` on inputs from ``draws`` (:class:`Samples`), answering
    what a worker answers (:func:`tfperf.autograding.worker.serve_samples`). The functions among a call's inputs
    are replaced by ``record(args, calls)`` (:func:`tfperf.grading.speed.recording`), which notes each call's numbers;
    ``due(calls, args)``, where given, gives the calls an answer owes from the unfixed code's; ``quiet()``, where
    given, a context the calls run in; ``work``, where given, the course's tally of work (:class:`Samples`). An
    exception from ``function`` becomes a :class:`GradingFailure` naming ``who``."""

    def __init__(
        self,
        function: Callable[..., Any],
        draws: Draws,
        *,
        who: str,
        record: Callable[[tuple, list], tuple],
        due: Callable[[list, tuple], list] | None = None,
        quiet: Callable[[], Any] | None = None,
        work: Callable[[int], Any] | None = None,
    ) -> None:
        self.samples = Samples(function, draws.sample, record, work)
        self.draws = draws
        self.who, self.due, self.quiet = who, due, quiet or contextlib.nullcontext

    def draw(self, seeds: list[int]) -> None:
        """Make the inputs of ``seeds`` now, before the trial times a sample's making: two sides in this process share
        them (:class:`Draws`), and the one that made them first would pay for both sides' draws (the trial times only
        each side's copies then)."""
        self.draws.made(list(seeds))

    def _quietly(self, work: Callable[[], list]) -> list:
        with self.quiet():
            return work()

    def ask(self, **request) -> list:
        do = request["do"]
        if do == "prepare":
            self.samples.prepare([int(seed) for seed in request["seeds"]], request.get("tallies"))
        elif do == "count_calls":
            self.samples.count_calls()
        elif do == "run":
            device.sync()  # work queued before (the inputs' making) fails here, not as the function's error
            try:
                self.samples.run(request.get("count"), around=self._quietly)
            except GradingFailure:
                raise
            except Exception as err:
                raise GradingFailure(f"{self.who} raised {type(err).__name__} while being timed: {err}") from err
        elif do == "result":
            try:
                return self.samples.result(int(request["index"]))
            except TypeError as err:
                raise GradingFailure(f"{self.who}'s result in a timed call: {err}") from err
        return []

    def request(self, **request) -> dict:
        if request.get("do") == "counted":
            return self.samples.counts()
        index = int(request["index"])
        calls = self.samples.calls[index]
        due = None if self.due is None else self.due(calls, self.samples.made[index])
        if request.get("do") == "work":
            return {"work": self.samples.worked(index), "runs_at_calls": self.samples.runs_at_calls(index, due)}
        return {"calls": calls if due is None else due}
