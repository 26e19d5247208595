"""Run a learner's training with the counters on, and report what slows it (:mod:`tfperf.diagnosis.findings`).

The contract is one function: ``train(steps)`` runs ``steps`` training steps of the learner's own code (a ``fit``
with ``steps_per_epoch=steps``, a custom loop, anything), and is called twice: once for ``warmup`` steps that are not
counted (tracing, the first call's costs), then for ``steps`` steps under the counters of :mod:`tfperf.measure`
(host reads and uploads, traces, eager operations and ``tf.function`` calls) with its output captured and counted
(Python's ``print`` and TensorFlow's ``tf.print`` alike, TensorFlow's own log lines left out).

In a notebook: ``tfperf.diagnose(train, steps=20)``; for a script that defines ``train``:
``python -m tfperf diagnose my_training.py --steps 20 [--json]``.
"""

from __future__ import annotations

import collections
import gc
import runpy
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from tfperf.diagnosis.findings import Counts, Finding, decide
from tfperf.measure import ceilings, graph_dtypes, host_syncs, op_counts, profile_analysis, timing, traces
from tfperf.runtime import device, logs

#: Where tf.data's own functions are defined: those it traces for a pipeline's transformations (``map``,
#: ``filter``: ``StructuredFunctionWrapper``) and for its own datasets (``prefetch_to_device``'s copy).
TF_DATA_PACKAGE = "tensorflow.python.data."


@dataclass
class Diagnosis:
    """The counts of one run and the findings they support."""

    findings: list[Finding]
    device: str
    warmup: int
    counts: Counts
    profile: str | None = None  #: the TensorFlow Profiler's capture of more steps (an ``.xplane.pb`` file), if asked
    profile_note: str | None = None  #: why the Profiler's analysis of the capture could not be read, if it could not

    def codes(self) -> list[str]:
        return [f.code for f in self.findings]

    def to_dict(self) -> dict[str, Any]:
        return {
            "device": self.device,
            "warmup": self.warmup,
            "profile": self.profile,
            "profile_note": self.profile_note,
            "counts": asdict(self.counts),
            "findings": [
                {"code": f.code, "title": f.kind.title, "evidence": f.evidence, "summary": f.summary, "fix": f.kind.fix}
                for f in self.findings
            ],
        }

    def report(self) -> str:
        """The findings as text: each code, its evidence, why it costs, and where the course fixes it."""
        c = self.counts
        lines = [
            f"{c.steps} steps diagnosed after {self.warmup} warm-up steps (not counted): {c.seconds / c.steps * 1e3:.2f} "
            f"ms a step. {self.device}",
        ]
        if not self.findings:
            lines.append("No finding: no host read, upload or print in every step, no retracing, no eager steps.")
        for f in self.findings:
            lines += [
                f"[{f.code}] {f.kind.title}: {f.summary}.",
                f"    why it costs: {f.kind.why}.",
                f"    fix: {f.kind.fix}.",
            ]
        if self.profile:
            logdir = Path(self.profile).parents[3]  # <logdir>/plugins/profile/<run>/<host>.xplane.pb
            wait = c.input_wait
            if wait is not None:
                lines.append(
                    f"The TensorFlow Profiler's input-pipeline analysis of {c.profiled_steps} more steps: they waited "
                    f"for their input {wait.share:.0%} of the time ({wait.calls} batches from tf.data)."
                )
            else:
                lines.append(f"input-bound not checked: {self.profile_note}.")
            lines.append(
                f"The TensorFlow Profiler captured them in {logdir}: open it with XProf (xprof --logdir {logdir} "
                f"--port 6006) or TensorBoard's profile plugin (tensorboard --logdir {logdir})."
            )
        else:
            lines.append(
                "input-bound not checked: add --profile-dir DIR (profile_dir=) to let the Profiler measure it."
            )
        return "\n".join(lines)


def _card(card: Any) -> Any:
    """``card``, or this device's cached card for ``"cached"`` (None when none was measured)."""
    if isinstance(card, str) and card == "cached":
        return ceilings.cached()
    return card


def _ceiling(card: Any, name: str) -> float | None:
    found = card.get(name) if card is not None else None
    return found.value if found is not None and found.value > 0 else None


def _low_precision(card: Any) -> tuple[str, float] | None:
    """The card's fastest of bfloat16 and float16 matmuls, and its rate over the rate float32 matmuls run at here
    (TensorFloat-32's where it is on and the card measured it: :func:`tfperf.measure.ceilings.float32_roof`)."""
    if card is None:
        return None
    float32 = _ceiling(card, ceilings.float32_roof(card))
    lower = [(dtype, _ceiling(card, f"matmul_{dtype}")) for dtype in ("bfloat16", "float16")]
    lower = [(dtype, rate) for dtype, rate in lower if rate]
    if not float32 or not lower:
        return None
    dtype, rate = max(lower, key=lambda pair: pair[1])
    return dtype, rate / float32


def _printed_lines(captured: logs.Captured) -> int:
    text = "\n".join((captured.stdout, captured.python, captured.native))
    return sum(1 for line in text.splitlines() if line.strip() and not logs.is_noise(line))


#: The graph that Keras's train function calls once per call (``keras/src/backend/tensorflow/trainer.py``,
#: ``_make_function``): it runs ``steps_per_execution`` steps, so it runs once a step when that is 1.
KERAS_CALL = "tf.function multi_step_on_iterator"


def diagnose(
    train: Callable[[int], Any],
    *,
    steps: int = 20,
    warmup: int = 2,
    card: Any = "cached",
    profile_dir: str | Path | None = None,
    profile_steps: int = 10,
) -> Diagnosis:
    """Run ``train(warmup)`` uncounted, then ``train(steps)`` with the counters on; the findings of that run.

    ``card``: the device card whose ``function_call`` tells a step that is overhead-bound (``small-batch``); by
    default this device's card if ``python -m tfperf ceilings`` measured it (never measured here), None: none.
    ``profile_dir``: after the counted steps, ``train(profile_steps)`` runs once more under the TensorFlow Profiler
    as one marked step (:func:`tfperf.measure.profile_analysis.capture`), which writes its capture there for XProf or
    TensorBoard; XProf's analysis of it decides ``input-bound``. The counts and the times come from the counted
    steps only."""
    card = _card(card)
    if steps < 1 or warmup < 0:
        raise ValueError(f"steps must be at least 1 and warmup at least 0 (got steps={steps}, warmup={warmup})")
    if warmup:
        with logs.captured_output():
            train(warmup)
    with (
        logs.captured_output() as printed,
        host_syncs.counting() as reads,
        traces.counting() as traced,
        op_counts.counting() as ops,
    ):
        _, seconds = timing.stopwatch(lambda: train(steps), sync=device.sync)
    graph_calls = sum(n for name, n in ops.runs.items() if name.startswith("tf.function "))
    traced_by_name: collections.Counter = collections.Counter()
    pipeline_traces = 0
    for fn, n in traced.by_function.items():
        # tf.data traces the functions of every pipeline it builds (a fit call, an epoch's iterator of a
        # prefetch_to_device): not a step's retracing
        if str(getattr(fn, "__module__", "")).startswith(TF_DATA_PACKAGE):
            pipeline_traces += n
        else:
            traced_by_name[getattr(fn, "__qualname__", str(fn))] += n
    counts = Counts(
        steps=steps,
        seconds=seconds,
        host_reads=reads.count,
        read_kinds=dict(reads.kinds),
        uploads=reads.uploads,
        upload_kinds=dict(reads.upload_kinds),
        traces=traced.count - pipeline_traces,
        traced=dict(traced_by_name),
        pipeline_traces=pipeline_traces,
        eager_ops=ops.count - graph_calls,
        graph_calls=graph_calls,
        keras_calls=ops.runs.get(KERAS_CALL, 0),
        function_call=_ceiling(card, "function_call"),
        matmul_dtypes=dict(graph_dtypes.matmul_dtypes(n for n in ops.raw_runs if n.startswith("__inference_"))),
        low_precision=_low_precision(card),
        printed_lines=_printed_lines(printed),
    )
    profile = note = None
    if profile_dir is not None:
        with logs.captured_output():  # what the steps print was counted above
            written, seconds = profile_analysis.capture(lambda: train(profile_steps), profile_dir)
        profile, counts.profiled_steps = str(written), profile_steps
        try:
            counts.input_wait = profile_analysis.input_wait(written, seconds)
        except profile_analysis.ProfilerAnalysisUnavailable as err:
            note = str(err)
    return Diagnosis(decide(counts), logs.quietly(device.detect).summary(), warmup, counts, profile, note)


def diagnose_script(path: str | Path, *, steps: int = 20, warmup: int = 2, **options: Any) -> Diagnosis:
    """Run the script at ``path`` as a module (its ``if __name__ == "__main__"`` block does not run), then
    :func:`diagnose` the ``train(steps)`` function it defines."""
    namespace = runpy.run_path(str(path), run_name="__tfperf_diagnose__")
    train = namespace.get("train")
    if not callable(train):
        raise ValueError(
            f"{path} defines no train(steps) function: write one that runs that many training steps of your code "
            "(a fit with steps_per_epoch=steps, or your own loop), and keep the script's own run under "
            "if __name__ == '__main__':"
        )
    try:
        return diagnose(train, steps=steps, warmup=warmup, **options)
    finally:
        # Let go of what the script made (its tf.data iterators above all) while the interpreter is whole: an
        # iterator of a Dataset.from_generator pipeline collected at interpreter shutdown hung the process (tested)
        train.__globals__.clear()
        namespace.clear()
        gc.collect()
