"""Diagnose a training script as its author wrote it: ``python -m tfperf diagnose SCRIPT.py [-- ARGS]``.

The script runs as ``__main__`` (its ``sys.argv`` set to the script and ``ARGS``), unmodified. While it runs,
:class:`tfperf.diagnosis.steps.StepClock` finds its training steps (Keras's ``fit``, a tf.function that updates
variables, an optimizer applied eagerly); after ``warmup`` of them a :class:`tfperf.diagnosis.run.Measurement`
counts ``steps`` more, then (``input_wait``) the TensorFlow Profiler captures ``profile_steps`` more for the input
wait, then the pipeline the script's loop takes its batches from is pulled alone for a moment
(:func:`tfperf.measure.pipeline_alone.pull`: what its batches cost the cores with no step beside them), and the
script is stopped there: its whole training never runs. A script that trains no step, or ends first,
says so; a script that does not compile or raises says where, in its own file and line.

A script that only defines ``train(steps)`` (the course's first contract) and keeps its own run under
``if __name__ == "__main__":`` still works: when running it finds no step, its ``train`` is diagnosed as
:func:`tfperf.diagnosis.run.diagnose` does.
"""

from __future__ import annotations

import builtins
import contextlib
import gc
import sys
import tempfile
import traceback
from pathlib import Path
from typing import Any

from tfperf.diagnosis.findings import decide
from tfperf.diagnosis.run import Diagnosis, Measurement, diagnose, unit_costs
from tfperf.diagnosis.steps import KERAS_FIT, StepClock
from tfperf.measure import pipeline_alone, profile_analysis, timing
from tfperf.measure.pipeline_alone import PipelineAlone
from tfperf.runtime import device, logs

#: Calls of the step (each of one or more steps) that the Profiler captures at least, for the input wait.
PROFILED_CALLS = 3


class ScriptProblem(Exception):
    """What went wrong with the script itself, in one line for its author."""


class _Diagnosed(BaseException):
    """Raised from a step hook once the script's steps are measured: it stops the script there."""


class _Session:
    """The phases of a script's run, moved on by its steps: warm-up, measured, profiled, stopped."""

    def __init__(self, *, steps: int, warmup: int, profile_steps: int, profile_dir: Path | None, namespace: dict):
        self.steps, self.warmup, self.profile_steps, self.profile_dir = steps, warmup, profile_steps, profile_dir
        self.namespace = namespace
        self.seen = 0
        self.phase = "warm-up"
        self.what = ""
        self.measurement: Measurement | None = None
        self.measured = 0
        self.marked = False
        self.capture: profile_analysis.Capture | None = None
        self.profiled = 0
        self.profiled_calls = 0
        self.captured: tuple[Path, float] | None = None
        #: the machine's CPU from the measured steps to the end of the profiled ones: seconds, where the capture alone
        #: would be too short for /proc/stat's clock ticks
        self.cpu: profile_analysis.CpuUse | None = None
        self.cpu_from: tuple[float, float, float, int] | None = None
        self.clock: StepClock | None = None
        #: the uncounted steps after the measured ones: (steps, seconds, seconds inside the steps' calls)
        self.timed: tuple[int, float, float] | None = None
        #: the batches each tf.data iterator had handed to the script when the measured steps began
        self.batches_from: dict[int, int] = {}
        #: the iterator the script's loop took most of the measured steps' batches from, and how many it took
        self.fed_by: tuple[object, int] | None = None
        self.alone: PipelineAlone | None = None

    def on_steps(self, count: int, what: str) -> None:
        self.seen += count
        self.what = self.what or what
        if self.phase == "warm-up" and self.seen >= self.warmup:
            self.phase, self.from_step = "measured", self.seen
            self.measurement = Measurement(self.clock.traces, namespace=self.namespace)
            self.inside_from = self.clock.inside_seconds
            self.cpu_from = profile_analysis.cpu_counters()
            self.batches_from = self.clock.batches_taken()
            self.measurement.start()
        elif self.phase == "measured" and self.seen - self.from_step < self.steps:
            if not self.marked and self.seen - self.from_step >= self.steps / 2:
                self.measurement.mark()
                self.marked = True
        elif self.phase == "measured" and self.seen - self.from_step >= self.steps:
            self._end_measurement()
            self.phase, self.from_step = "timed", self.seen
            self.inside_from = self.clock.inside_seconds
            device.sync()
            self.timed_from = timing.now()
        elif self.phase == "timed" and self.seen - self.from_step >= self.steps:
            self._end_timing()
            if self.profile_dir is None:
                self._pull_alone()
                raise _Diagnosed
            self.phase, self.from_step = "profiled", self.seen
            self.capture = profile_analysis.Capture(self.profile_dir)
        elif self.phase == "profiled":
            self.profiled_calls += 1
            # several calls too: with many steps a call (steps_per_execution), one call's wait depends on how full
            # the pipeline's prefetch buffer happened to be when it started
            if self.seen - self.from_step >= self.profile_steps and self.profiled_calls >= PROFILED_CALLS:
                self._end_capture()
                self._pull_alone()
                raise _Diagnosed

    def _end_measurement(self) -> None:
        self.measurement.stop()
        self.fed_by = self.clock.busiest_iterator(self.batches_from)
        self.inside = self.clock.inside_seconds - self.inside_from
        self.measured = self.seen - self.from_step
        self.phase = "measured, done"

    def _end_timing(self) -> None:
        """The same number of steps again, timed without the counters (whose own cost, a stack walk per host read,
        is time a step does not spend uncounted): the time a share of a step is a share of."""
        device.sync()
        self.timed = (
            self.seen - self.from_step,
            timing.now() - self.timed_from,
            self.clock.inside_seconds - self.inside_from,
        )
        self.phase = "timed, done"

    def _end_capture(self) -> None:
        self.captured = self.capture.stop()
        self.cpu = profile_analysis.cpu_use_since(self.cpu_from)
        self.profiled = self.seen - self.from_step
        self.capture = None
        self.phase = "done"

    def _pull_alone(self) -> None:
        """Take batches from the pipeline the measured steps were fed by, with no step between them (the script
        stops next, so what it would have trained on is not missed)."""
        if self.fed_by is not None:
            iterator, taken = self.fed_by
            self.fed_by = None
            alone = pipeline_alone.pull(iterator)
            if alone is not None:
                alone.per_step = taken / max(self.measured, 1)
            self.alone = alone

    def finish(self) -> None:
        """The script ended (or failed): close whatever phase is open."""
        if self.phase == "measured":
            self._end_measurement()
        if self.phase == "timed" and self.seen > self.from_step:
            self._end_timing()
        if self.capture is not None:
            self._end_capture()


def compile_script(path: Path) -> Any:
    """The script's code, or :class:`ScriptProblem` for a missing file or a syntax error (its line)."""
    if not path.is_file():
        raise ScriptProblem(f"no such script: {path}")
    try:
        return compile(path.read_text(encoding="utf-8"), str(path), "exec")
    except SyntaxError as err:
        raise ScriptProblem(f"{path}, line {err.lineno}: SyntaxError: {err.msg}") from None
    except (UnicodeDecodeError, ValueError) as err:
        raise ScriptProblem(f"{path} cannot be read as Python: {err}") from None


def _where_it_failed(err: BaseException, path: Path) -> str:
    """The innermost frame of the traceback in the script's own file (else in any file outside the libraries)."""
    frames = traceback.extract_tb(err.__traceback__)
    mine = [f for f in frames if Path(f.filename) == path] or [
        f for f in frames if not any(p in f.filename for p in ("/tensorflow/", "/keras/", "/tfperf/", "/numpy/"))
    ]
    if not mine:
        return str(path)
    frame = mine[-1]
    return f"{frame.filename}, line {frame.lineno}, in {frame.name}"


def diagnose_script(
    path: str | Path,
    args: list[str] | tuple[str, ...] = (),
    *,
    steps: int = 20,
    warmup: int = 2,
    card: Any = "cached",
    profile_dir: str | Path | None = None,
    profile_steps: int = 5,
    input_wait: bool = True,
) -> Diagnosis:
    """Run the script at ``path`` as ``__main__`` with ``args``, diagnose ``steps`` of its training steps after
    ``warmup`` ones, and stop it. ``input_wait``: then capture ``profile_steps`` more with the TensorFlow Profiler
    for the input wait, in ``profile_dir`` (kept for XProf) or a temporary folder (deleted). Raises
    :class:`ScriptProblem` where the script cannot be diagnosed."""
    from tfperf.diagnosis.run import _card

    path = Path(path).resolve()
    code = compile_script(path)
    if steps < 1 or warmup < 0:
        raise ScriptProblem(f"--steps must be at least 1 and --warmup at least 0 (got {steps} and {warmup})")
    card = _card(card)
    costs = unit_costs(card)
    with contextlib.ExitStack() as cleanup:
        capture_dir = None
        if input_wait:
            capture_dir = (
                Path(profile_dir) if profile_dir else Path(cleanup.enter_context(tempfile.TemporaryDirectory()))
            )
            capture_dir.mkdir(parents=True, exist_ok=True)
        namespace = {"__name__": "__main__", "__file__": str(path), "__builtins__": builtins}
        session = _Session(
            steps=steps, warmup=warmup, profile_steps=profile_steps, profile_dir=capture_dir, namespace=namespace
        )
        clock = StepClock(session.on_steps)
        session.clock = clock
        argv, sys.argv = sys.argv, [str(path), *args]
        sys.path.insert(0, str(path.parent))
        ended = "it ran to its end"
        try:
            with clock.running():
                try:
                    exec(code, namespace)
                except _Diagnosed:
                    ended = ""
                except SystemExit as exit_:
                    ended = f"it exited (status {exit_.code})"
                except BaseException as err:  # the script's own error: said in one line, its file and line
                    session.finish()
                    where = _where_it_failed(err, path)
                    after = f" after {session.seen} training step(s)" if session.seen else " before any training step"
                    raise ScriptProblem(f"{where}: {type(err).__name__}: {err} (the script failed{after})") from None
                finally:
                    if ended:
                        session.finish()
        finally:
            sys.argv = argv
            with contextlib.suppress(ValueError):
                sys.path.remove(str(path.parent))
        if not clock.steps:
            train = namespace.get("train")
            if callable(train):  # the course's first contract: a script that defines train(steps)
                return diagnose(train, steps=steps, warmup=warmup, card=card, profile_dir=profile_dir)
            raise ScriptProblem(
                f"no training step found in {path.name}: {ended} without calling Keras's fit or train_on_batch, an "
                "optimizer's apply_gradients, or a tf.function that updates variables"
            )
        if session.measurement is None or not session.measured:
            raise ScriptProblem(
                f"{path.name} ran {session.seen} training step(s), then {ended}: fewer than the {warmup} warm-up "
                f"steps and one measured step (--warmup {max(0, session.seen - 1)} --steps 1 would measure one)"
            )
        counts = session.measurement.counts(session.measured, card, costs)
        inside = session.inside
        if session.timed is not None:  # the time of steps without the counters' own cost, for as many steps
            timed_steps, timed_seconds, timed_inside = session.timed
            counts.counted_seconds = counts.seconds
            counts.seconds = timed_seconds * counts.steps / timed_steps
            inside = timed_inside * counts.steps / timed_steps
        counts.pipeline_alone = session.alone
        if clock.source == KERAS_FIT:  # the data adapters of the fit whose steps these were (not of a predict)
            counts.keras_inputs = dict(clock.keras_inputs)
        if device.device_class() == "cpu" and inside > 0:  # a GPU's call returns before its work is done
            counts.inside_seconds = inside
        notes = []
        if session.measured < steps:
            notes.append(f"The script ended after {session.measured} of the {steps} steps asked for ({ended}).")
        profile = note = None
        if session.captured is not None:
            written, seconds = session.captured
            profile, counts.profiled_steps = str(written), session.profiled
            try:
                counts.input_wait = profile_analysis.input_wait(written, seconds, session.cpu)
            except profile_analysis.ProfilerAnalysisUnavailable as err:
                note = str(err)
        elif input_wait:
            note = "the script ended before the Profiler's steps"
        found = Diagnosis(
            decide(counts),
            logs.quietly(device.detect).summary(),
            warmup,
            counts,
            profile,
            note,
            step=session.what,
            notes=notes,
            keep_profile=profile_dir is not None,
        )
        _let_go(namespace)
        return found


def _let_go(namespace: dict) -> None:
    """Let go of what the script made while the interpreter is whole: its tf.data iterators first, which stops the
    threads that run its pipeline's functions (those read the script's globals: cleared under a running thread, a
    name used there is gone), then the rest. An iterator left to the interpreter's shutdown hung the process once."""
    from tensorflow.python.data.ops import iterator_ops

    for name, value in list(namespace.items()):
        if isinstance(value, iterator_ops.OwnedIterator):
            del namespace[name]
    gc.collect()
    namespace.clear()
    gc.collect()
