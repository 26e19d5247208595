"""Checks of a training run recorded in the run registry (chapter 8): one row, complete, and true to the run."""

from __future__ import annotations

import math
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tfperf.grading import guard
from tfperf.grading.calls import GradingFailure, call, reread
from tfperf.measure import timing

#: A recorded duration may be this share of the time a warmed-up copy of the script takes for the same steps, and
#: no less (timing noise; an honest record includes the first call's tracing, and is longer).
FLOOR_SHARE = 0.3


#: Runs of the warmed-up copy timed: the least is kept, since other processes' load only makes a run longer.
WARM_RUNS = 5


def _warm_seconds(script: Any, steps: int) -> float:
    """Seconds a copy of ``script`` (same sizes and data), warmed up, takes for ``steps`` steps: the least of
    :data:`WARM_RUNS` runs (one run, timed beside other work, once took 4.4 times an honest record's duration)."""
    from tfperf.experiments import capstone

    twin = capstone.make_training(
        script.pitfalls, batch=script.batch, width=script.width, records=len(script.data[0]), seed=script.seed
    )
    twin.train(2)
    return min(timing.stopwatch(lambda: twin.train(steps))[1] for _ in range(WARM_RUNS))


@guard.checked
def check_recorded_run(
    record_run: Callable[[Any, Any, int], Any], *, steps: int = 8, section: str | None = None
) -> None:
    """Fail unless ``record_run(runs, script, steps)`` trains the capstone's fixed script for ``steps`` steps and
    records it in ``runs`` as one finished run with every required field (:meth:`Run.missing`), read back through a
    new connection: the examples it trained on, the data's hash, the batch and the steps among the hyperparameters,
    a duration within the call's own time and no shorter than a share of what a warmed-up copy of the script takes
    (:data:`FLOOR_SHARE`), a throughput of examples over that duration, a finite final loss."""
    from tfperf.diagnosis.registry import Registry
    from tfperf.experiments import capstone  # imports TensorFlow: only when a check runs

    script = capstone.make_training([], batch=32, width=64, records=512)
    who = f"record_run(runs, script, {steps})"
    with tempfile.TemporaryDirectory() as folder:
        url = f"sqlite:///{Path(folder) / 'runs.sqlite'}"
        given, reader = Registry(url), None
        try:
            _, wall = timing.stopwatch(lambda: call(record_run, (given, script, steps), who=who, section=section))
            reader = Registry(url)  # a new connection: what was committed
            stored = reader.runs()
        finally:
            for registry in (given, reader):
                if registry is not None:
                    registry.engine.dispose()
    if len(stored) != 1:
        raise GradingFailure(f"{who} left {len(stored)} runs in the registry; expected exactly one.{reread(section)}")
    [run] = stored
    problems = []
    if run.status != "finished":
        problems.append(f"its status is {run.status!r}, not 'finished'")
    if run.missing():
        problems.append(f"it leaves {', '.join(run.missing())} empty")
    if script.steps_done() < steps:
        problems.append(f"the script ran {script.steps_done()} steps, fewer than {steps}")
    if run.examples != steps * script.batch:
        problems.append(
            f"examples is {run.examples}; {steps} steps of {script.batch} examples are {steps * script.batch}"
        )
    if run.data_hash != capstone.data_hash(script):
        problems.append("data_hash is not the hash of the data the script trains on (registry.data_hash(x, y))")
    wanted = {"batch": script.batch, "steps": steps}
    if any(run.hyperparameters.get(name) != value for name, value in wanted.items()):
        problems.append(f"the hyperparameters {run.hyperparameters} do not hold batch={script.batch} and steps={steps}")
    least = FLOOR_SHARE * _warm_seconds(script, steps)
    if not (run.duration_s and least <= run.duration_s <= wall):
        problems.append(
            f"duration_s is {run.duration_s}; the call took {wall:.3f} s, and the run is part of it, and a warmed-up "
            f"copy of the script took {least / FLOOR_SHARE:.3f} s for those steps here"
        )
    elif run.examples and not (
        run.throughput and math.isclose(run.throughput, run.examples / run.duration_s, rel_tol=1e-6)
    ):
        problems.append(
            f"throughput is {run.throughput}; examples / duration_s = {run.examples} / {run.duration_s:.6g} "
            f"= {run.examples / run.duration_s:.6g}"
        )
    loss = run.metrics.get("loss")
    if not isinstance(loss, int | float) or not math.isfinite(loss):
        problems.append(f"metrics holds no finite 'loss' ({run.metrics})")
    if problems:
        listed = "".join(f"\n  - {problem}" for problem in problems)
        raise GradingFailure(f"{who} recorded a run, but:{listed}{reread(section)}")
