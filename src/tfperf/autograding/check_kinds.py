"""The kinds of check that the grading process decides itself, in one table (:data:`KINDS`), and what a worker reads
for them on request (:data:`PROBES`).

A test cell that passed in the answer's worker counts only once each of its checks of these kinds is decided here,
out of the notebook's reach (:func:`tfperf.autograding.outside.grade_exercise`, kind by kind in the order of
:data:`KINDS`). A kind is one module holding:

- the assertion that the notebooks' test cells call (re-exported by :mod:`tfperf.grading`), whose signature is the
  spec's: what a test cell leaves out takes the assertion's own default;
- ``specs(grading, grade_id, source) -> list``: its checks in a test cell, read from the cell's text, the
  assertion's own defaults for what the call leaves out (:func:`tfperf.grading.specs.arguments`);
- ``AFTER_THE_JUDGE``: whether a test cell that the judge ran (:mod:`tfperf.autograding.judge`) still has its checks
  of this kind decided here;
- ``decide(grading, check, outcome)``: the decision, made here from data that the workers send on request (never
  a verdict of theirs); a failure goes into ``outcome.error``, what was measured into ``outcome.printed``;
- where the answer's worker reads something for it: ``read(request, namespace) -> dict``, named in :data:`PROBES`
  (served by :func:`tfperf.autograding.worker.serve_outside_checks` and in the judge's calls,
  :func:`tfperf.autograding.worker.answer_call`).

Adding a kind is that module and its line here. The checks that the judge runs whole (a test cell whose calls of the
answer are all made from the judge, :mod:`tfperf.autograding.judge`) need no kind: the judge's process runs the
course's own assertions.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tfperf.grading import printing, speed, tracing, traffic

#: The kinds, in the order they are decided: the speed checks (``speed``) last, since their timed calls are
#: watched for their cell's prints and traces checks too.
KINDS = (printing, traffic, speed)

#: What the answer's worker reads on a request ``{"do": name, ...}`` or a judged call's ``probe``: name -> reader.
PROBES: dict[str, Callable[[dict, dict], dict]] = {
    "prints": printing.read,
    "bytes": traffic.read,
    "traces": tracing.read,
}


@dataclass
class Grading:
    """What a kind's :func:`decide` works with for one exercise of one submission."""

    exercise: Any  #: the :class:`tfperf.autograding.outside.Exercise`
    answer: Any  #: the answer's worker (:class:`tfperf.autograding.outside._Replies`): data on request only
    speed_checks: list  #: the notebook's speed checks timed from here (:func:`tfperf.grading.speed.speed_checks`)
    in_judge: tuple[str, ...]  #: the test cells the judge ran
    clean_worker: Callable[[Any], Any] | None  #: a speed check -> the unfixed code's worker; None: none here
    record: Path | None  #: where the speed checks' rows go

    def source(self, grade_id: str) -> str:
        """The source of the exercise's test cell ``grade_id``."""
        return self.exercise.test_sources[self.exercise.tests.index(grade_id)]

    def unfixed_worker(self, grade_id: str, function: str):
        """A worker that runs the instructor's cells only, never learner code, for a kind that reads the unfixed code
        (``function``, source) of test cell ``grade_id``: a speed check's of the exercise (already running them),
        else one of its own."""
        if self.speed_checks:
            return self.clean_worker(self.speed_checks[0])
        return self.clean_worker(speed.SpeedCheck(grade_id, "", function, function, "lambda: ()", ""))

    def pending(self, passed: list[str]) -> list[tuple[Any, str, Any]]:
        """``(kind, grade_id, check)`` of every check of the ``passed`` test cells left to decide here, in order."""
        return [
            (kind, grade_id, check)
            for kind in KINDS
            for grade_id in passed
            if kind.AFTER_THE_JUDGE or grade_id not in self.in_judge
            for check in kind.specs(self, grade_id, self.source(grade_id))
        ]
