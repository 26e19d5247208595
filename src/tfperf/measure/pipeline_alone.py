"""What a ``tf.data`` pipeline costs on its own: batches pulled from a live iterator with no training step between.

tf.data runs much of a pipeline ahead of the step, on threads of its own: by default it fuses a ``map`` and the
``batch`` after it into one asynchronous stage and adds a prefetch after a last stage that is synchronous
(``map_and_batch_fusion`` and ``inject_prefetch`` in ``tf.data.experimental.OptimizationOptions``, both on by
default). On a CPU those threads share the cores with the step's own, so a pipeline whose work is heavy slows every
step even when the step never waits in ``GetNext``: the Profiler's input wait stays small while the pipeline takes a
large part of the machine. What it takes shows in the CPU time each batch costs when the pipeline runs alone.

:func:`pull` takes batches from an iterator, reading the process's CPU time (every thread's: :func:`tfperf.measure.timing.cpu_now`)
and the wall time at each; :class:`PipelineAlone` keeps the later half of them, after the batches a buffer held ready
were taken (those cost no work while they are taken).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from tfperf.measure import timing


@dataclass
class PipelineAlone:
    """Batches taken from a pipeline with nothing else running in the process, over the later half of a pull."""

    batches: int  #: batches counted (the later half of those taken)
    seconds: float  #: wall time over them
    cpu_seconds: float  #: the process's CPU time over them, every thread's
    taken: int  #: every batch taken, the first half included
    ended: bool = False  #: the iterator ran out before the pull's end
    cores: int = 1  #: the cores this process may run on (its threads and the step's share them)
    per_step: float = 1.0  #: batches a training step took from this pipeline (set by the caller that knows)

    @property
    def seconds_per_batch(self) -> float:
        return self.seconds / self.batches

    @property
    def cpu_per_batch(self) -> float:
        return self.cpu_seconds / self.batches


def pull(iterator: Any, *, most: int = 48, seconds: float = 1.5) -> PipelineAlone | None:
    """Take up to ``most`` batches from ``iterator`` (fewer once ``seconds`` have passed); the later half of them
    measured, or None where fewer than 4 batches could be taken."""
    marks = [(timing.now(), timing.cpu_now())]
    ended = False
    while len(marks) <= most and marks[-1][0] - marks[0][0] < seconds:
        try:
            next(iterator)
        except StopIteration:
            ended = True
            break
        marks.append((timing.now(), timing.cpu_now()))
    taken = len(marks) - 1
    if taken < 4:
        return None
    start = marks[(taken + 1) // 2]
    end = marks[-1]
    return PipelineAlone(
        batches=taken - (taken + 1) // 2,
        seconds=end[0] - start[0],
        cpu_seconds=end[1] - start[1],
        taken=taken,
        ended=ended,
        cores=_cores(),
    )


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1
