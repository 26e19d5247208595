"""What ``tfperf diagnose`` can name, and how it decides from the counts of one run.

Every finding has a stable code (a script may test for it), the evidence (the counts it was decided from, per
step), and the chapter and section of the course that fix it. The counts come from :mod:`tfperf.measure`'s counters
over the measured steps of a run (after warm-up steps that are not counted), so they are the same on a CPU and on a
GPU: a host read is a host read wherever it stalls.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tfperf.measure.profile_analysis import HIGHLY_INPUT_BOUND, InputWait


@dataclass(frozen=True)
class Kind:
    """One kind of finding: its ``code``, a ``title``, why it costs time, and where the course fixes it."""

    code: str
    title: str
    why: str
    fix: str


CATALOGUE = {
    kind.code: kind
    for kind in (
        Kind(
            "host-read-every-step",
            "the host reads a tensor's value in every step",
            "each read waits for the device to finish the work queued so far (a sync point): on a GPU the device "
            "then idles while Python catches up",
            "chapter 5, section 2 (Sync points, counted) and section 3 (The incident, reproduced); for Keras's own "
            "reads of the logs, chapter 3, section 3 (steps_per_execution)",
        ),
        Kind(
            "retracing",
            "a tf.function traces again while training",
            "each trace runs the Python code again to build a new graph, and keeps that graph alive",
            "chapter 2, section 4 (Retracing) and section 6 (Functions made in a loop, and Python hyperparameters)",
        ),
        Kind(
            "eager-steps",
            "the step runs op by op in eager mode",
            "every operation pays Python's dispatch cost, and nothing is optimized across operations",
            "chapter 2, section 1 (Eager execution: one operation at a time) and section 3 (When graphs help)",
        ),
        Kind(
            "per-batch-upload",
            "host data is copied into tensors in every step",
            "on a GPU each NumPy array, Python list or tf.data batch in host memory crosses to the device when the "
            "step takes it (tf.data's prefetch_to_device copies ahead of the step instead, and is not counted here)",
            "chapter 5, section 6 (Per-batch copies and tf.data) and chapter 4, section 8 (Feeding the device)",
        ),
        Kind(
            "one-step-per-call",
            "Keras runs one train step per call of its train function",
            "between calls, fit reads the logs on the host and runs the callbacks: once per step, unless "
            "steps_per_execution runs several steps in one call",
            "chapter 3, section 2 (What fit does between steps) and section 3 (steps_per_execution)",
        ),
        Kind(
            "small-batch",
            "a step takes about as long as one tf.function call on this device's card",
            "a step that short is overhead-bound: the fixed cost of launching it, not its arithmetic or its bytes, "
            "sets its time, and a larger batch does more work for about the same cost",
            "chapter 6, section 2 (Three floors under every step), chapter 3, section 3 (steps_per_execution) and "
            "section 9 (Batch size)",
        ),
        Kind(
            "low-precision-unused",
            "the matrix products compute in float32 where this device's card says a lower precision is much faster",
            "float32 matmuls run at a fraction of the rate the device reaches in bfloat16 or float16 (on NVIDIA GPUs, "
            "tensor cores); a Keras mixed precision policy computes in the lower precision and keeps the variables "
            "in float32",
            "chapter 6, section 4 (Mixed precision) and Exercise 2",
        ),
        Kind(
            "input-bound",
            "the training waits for its input pipeline",
            "while the step waits in the pipeline's GetNext for the next batch, the device has nothing to do: the "
            "pipeline, not the model, sets the pace",
            "chapter 4, section 3 (Parallel map and three kinds of work), section 4 (The chapter's pipeline, one "
            "optimization at a time: vectorize, cache, prefetch) and section 7 (Is my training input-bound?)",
        ),
        Kind(
            "print-in-step",
            "the step prints",
            "printing a tensor reads its value (a sync point), and writing output is host work in every step",
            "chapter 5, section 5 (print, tf.print, and what printing costs) and chapter 3, section 5 (The incident)",
        ),
    )
}


@dataclass
class Counts:
    """What the counters saw over ``steps`` measured steps (warm-up excluded)."""

    steps: int
    seconds: float
    host_reads: int
    read_kinds: dict[str, int]
    uploads: int
    upload_kinds: dict[str, int]
    keras_calls: int  #: calls of the graph of Keras's train (or test) function: once per steps_per_execution steps
    function_call: float | None  #: seconds of one tf.function call on the device's card (None: no card)
    matmul_dtypes: dict[str, int]  #: matrix-product nodes by dtype in the graphs that ran
    low_precision: tuple[str, float] | None  #: the card's fastest lower-precision matmul dtype, and its gain on float32
    traces: int  #: of functions other than tf.data's (a pipeline's functions trace once per pipeline built)
    traced: dict[str, int]
    pipeline_traces: int
    eager_ops: int
    graph_calls: int
    printed_lines: int
    input_wait: InputWait | None = None  #: the Profiler's input wait of the profiled steps, if they were profiled
    profiled_steps: int = 0  #: steps run under the Profiler after the counted ones (not counted)

    def per_step(self, value: float) -> float:
        return value / max(self.steps, 1)


@dataclass
class Finding:
    """One finding of a run: its ``code`` (:data:`CATALOGUE`), the ``evidence`` and a line that says it."""

    code: str
    evidence: dict[str, Any] = field(default_factory=dict)
    summary: str = ""

    @property
    def kind(self) -> Kind:
        return CATALOGUE[self.code]


#: How :mod:`tfperf.measure.host_syncs` names the uploads that ``prefetch_to_device`` made ahead of the step.
COPIED_AHEAD = "copied ahead by prefetch_to_device"
#: How much faster the card's best lower-precision matmul must be than float32 for ``low-precision-unused``.
LOW_PRECISION_GAIN = 1.5
#: A step at most this many times the card's tf.function call is overhead-bound (``small-batch``).
OVERHEAD_BOUND = 2.0
#: Eager operations per step from which a step counts as run op by op (a graph step runs none, or a handful
#: around the call: the optimizer's step counter, a metric read).
EAGER_OPS_PER_STEP = 10


def _by_kind(counted: dict[str, int]) -> str:
    """``"36 by np.asarray(), 16 by bool()"``: the most frequent first."""
    return ", ".join(f"{n} by {kind}" for kind, n in sorted(counted.items(), key=lambda kv: -kv[1]))


def decide(counts: Counts) -> list[Finding]:
    """The findings that ``counts`` support, each with its evidence; an empty list when none.

    A step run op by op (``eager-steps``) is the finding to fix first: TensorFlow's own eager code (its gradient
    functions, for one) reads and converts values as it goes, so the host reads and uploads of an eager step are
    kept in that finding's evidence instead of being findings of their own; diagnose again once the step is a graph.
    """
    found = []
    per_step = counts.per_step
    eager = per_step(counts.eager_ops) >= EAGER_OPS_PER_STEP
    if eager:
        found.append(
            Finding(
                "eager-steps",
                {
                    "eager_ops_per_step": per_step(counts.eager_ops),
                    "graph_calls_per_step": per_step(counts.graph_calls),
                    "host_reads_per_step": per_step(counts.host_reads),
                    "uploads_per_step": per_step(counts.uploads),
                },
                f"{per_step(counts.eager_ops):.0f} eager operations a step, "
                f"{per_step(counts.graph_calls):.2f} tf.function calls a step (and, op by op, "
                f"{per_step(counts.host_reads):.2f} host reads and {per_step(counts.uploads):.2f} uploads a step: "
                "diagnose again once the step is a graph)",
            )
        )
    if per_step(counts.host_reads) >= 1 and not eager:
        kinds = _by_kind(counts.read_kinds)
        found.append(
            Finding(
                "host-read-every-step",
                {"host_reads_per_step": per_step(counts.host_reads), "by": dict(counts.read_kinds)},
                f"{counts.host_reads} host reads in {counts.steps} steps ({per_step(counts.host_reads):.2f} a step: "
                f"{kinds})",
            )
        )
    if counts.traces >= 1:
        which = ", ".join(f"{name} {n}x" for name, n in sorted(counts.traced.items(), key=lambda kv: -kv[1]))
        found.append(
            Finding(
                "retracing",
                {"traces": counts.traces, "by_function": dict(counts.traced)},
                f"{counts.traces} traces during {counts.steps} steps after the warm-up ({which})",
            )
        )
    in_step = {kind: n for kind, n in counts.upload_kinds.items() if COPIED_AHEAD not in kind}
    if per_step(sum(in_step.values())) >= 1 and not eager:
        kinds = _by_kind(in_step)
        found.append(
            Finding(
                "per-batch-upload",
                {"uploads_per_step": per_step(sum(in_step.values())), "by": in_step},
                f"{sum(in_step.values())} uploads of host data in {counts.steps} steps ({kinds})",
            )
        )
    if per_step(counts.keras_calls) >= 1:
        found.append(
            Finding(
                "one-step-per-call",
                {"keras_function_calls_per_step": per_step(counts.keras_calls)},
                f"Keras's train function was called {counts.keras_calls} times in {counts.steps} steps",
            )
        )
    only_float32 = bool(counts.matmul_dtypes) and set(counts.matmul_dtypes) == {"float32"}
    if only_float32 and counts.low_precision and counts.low_precision[1] >= LOW_PRECISION_GAIN:
        dtype, gain = counts.low_precision
        found.append(
            Finding(
                "low-precision-unused",
                {"matmul_dtypes": dict(counts.matmul_dtypes), "card_dtype": dtype, "card_gain": gain},
                f"{sum(counts.matmul_dtypes.values())} matrix products in the graphs that ran, all float32; your card: "
                f"{dtype} matmuls {gain:.1f} times as fast as float32",
            )
        )
    seconds_per_step = counts.seconds / max(counts.steps, 1)
    if counts.function_call and seconds_per_step <= OVERHEAD_BOUND * counts.function_call and not eager:
        found.append(
            Finding(
                "small-batch",
                {"seconds_per_step": seconds_per_step, "function_call": counts.function_call},
                f"{seconds_per_step * 1e6:.0f} µs a step, {seconds_per_step / counts.function_call:.1f} times the "
                f"{counts.function_call * 1e6:.0f} µs of one tf.function call on your card",
            )
        )
    wait = counts.input_wait
    if wait is not None and wait.share >= HIGHLY_INPUT_BOUND:
        slowest = wait.slowest_stage()
        stage = f"; the slowest stage: {slowest[0]}, {slowest[1] * 1e3:.1f} ms of its own" if slowest else ""
        found.append(
            Finding(
                "input-bound",
                {
                    "input_wait_share": wait.share,
                    "input_wait_seconds": wait.seconds,
                    "profiled_seconds": wait.step_seconds,
                    "batches": wait.calls,
                    "slowest_stage": slowest[0] if slowest else None,
                    "prefetches": wait.prefetches(),
                    "xprof_conclusion": wait.conclusion,
                },
                f"the profiled steps waited for their input {wait.share:.0%} of their {wait.step_seconds * 1e3:.0f} ms "
                f"({wait.calls} batches taken from tf.data's Iterator::Root in {wait.seconds * 1e3:.0f} ms, read by "
                f"the TensorFlow Profiler; XProf calls {HIGHLY_INPUT_BOUND:.0%} highly input-bound){stage}"
                + ("" if wait.prefetches() else "; no pipeline prefetches"),
            )
        )
    if per_step(counts.printed_lines) >= 1:
        found.append(
            Finding(
                "print-in-step",
                {"printed_lines_per_step": per_step(counts.printed_lines)},
                f"{counts.printed_lines} lines printed in {counts.steps} steps",
            )
        )
    return found
