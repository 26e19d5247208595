"""What ``tfperf diagnose`` can name, how it decides from the counts of one run, and what each cause costs.

Every finding has a stable code (a script may test for it), the evidence (the counts it was decided from, per
step), the chapter and section of the course that fix it, and an estimate of the share of a step it costs here:
the time it alone accounts for (host reads times one read's cost, the traces' own time, the input wait, the eager
ops' dispatch, ...), and so the most a fix can gain. A finding whose share is under :data:`NOISE_FLOOR` is not a
problem on this device (``worth`` is False: the report lists it apart, as checked and not worth fixing here, with
what it would cost on a GPU where that differs). The counts come from :mod:`tfperf.measure`'s counters over the
measured steps of a run (after warm-up steps that are not counted), so what they count is the same on a CPU and on
a GPU; what it costs is not, and the shares say so.

Reads and uploads are told apart by whose code made them (:func:`tfperf.measure.host_syncs.origin`): those of
Keras's own loop (``fit`` reading its logs after every call) are the evidence of ``one-step-per-call``, never of
``host-read-every-step``; those inside a ``tf.py_function`` body are the input pipeline's work.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tfperf.measure.pipeline_alone import PipelineAlone
from tfperf.measure.profile_analysis import HIGHLY_INPUT_BOUND, CpuUse, InputWait


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
            "a step takes about as long as one tf.function call on this device (measured by tfperf ceilings)",
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
            "the input pipeline holds the training back",
            "while the step waits in the pipeline's GetNext for the next batch, the device has nothing to do; on a CPU "
            "the pipeline's threads also take cores the step's own work would use: the pipeline, not the model, sets "
            "the pace",
            "chapter 4, section 3 (Parallel map and three kinds of work), section 4 (The chapter's pipeline, one "
            "optimization at a time: vectorize, cache, prefetch) and section 7 (Is my training input-bound?)",
        ),
        Kind(
            "memory-growth",
            "the process holds more memory after every step",
            "memory that grows step after step (tensors kept in a Python list, graphs that accumulate, models built "
            "again without keras.backend.clear_session()) slows the run as it grows and ends it when none is left",
            "chapter 5, section 8 (Progressive slowdown) and chapter 2, section 6 (Functions made in a loop)",
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
class UnitCosts:
    """Seconds of one of each thing a finding counts, on this device: from its card where one was measured, else
    measured in a fraction of a second before the run (:func:`tfperf.diagnosis.run.unit_costs`)."""

    host_read: float  #: a tiny op and ``.numpy()`` of its result
    eager_op: float  #: one tiny eager op
    function_call: float  #: one call of a small tf.function
    print_line: float  #: one short line written to the output
    #: one more character of a printed tensor (``tf.print``'s formatting of its values, and writing them), beyond a line
    print_char: float = 0.0
    h2d_bytes_per_second: float | None = None  #: host-to-device copies (a GPU's card), None elsewhere
    float32_flops_per_second: float | None = None  #: the rate float32 matmuls run at here (card), None without one
    low_precision: tuple[str, float] | None = None  #: the card's fastest lower precision, and its gain on float32
    from_card: bool = False


@dataclass
class MemoryGrowth:
    """How the process's memory changed over the measured steps: in all, and over each half of them where the
    middle was marked (memory that a pipeline's buffers fill once grows in the first half only; a leak, in both)."""

    resident_bytes: int  #: the process's resident memory at the end, less at the start (from /proc)
    tensors: int  #: live eager tensors at the end, less at the start
    holders: list[str] = field(default_factory=list)  #: the script's containers that grew meanwhile, with by how much
    halves: list[tuple[int, int]] | None = None  #: (resident bytes, tensors) gained in each half; None: not marked
    #: about what the items the holders gained hold (arrays' and tensors' bytes, Python's size of the rest); None:
    #: not read
    held_bytes: int | None = None

    def grows_steadily(self, steps: int, *, explained: bool = False) -> bool:
        """Whether both halves grew at :data:`TENSORS_PER_STEP` live tensors a step, or (``explained``: where
        something else shows what accumulates, new graphs or a container of the script that grew) at
        :data:`RESIDENT_BYTES_PER_STEP` resident bytes a step: the process's resident memory alone moves with its
        allocators, whatever the script does."""
        if not self.halves or steps < 2:
            return False
        half = steps / 2
        tensors = all(t >= TENSORS_PER_STEP * half for _, t in self.halves)
        resident = all(r >= RESIDENT_BYTES_PER_STEP * half for r, _ in self.halves)
        return tensors or (resident and (explained or self.holders_explain()))

    def holders_explain(self) -> bool:
        """Whether the script's containers that grew hold at least :data:`HELD_SHARE` of the resident growth (a list
        of a float a step holds bytes, not megabytes); where what they hold was not read, that they grew at all."""
        if not self.holders:
            return False
        return self.held_bytes is None or self.held_bytes >= HELD_SHARE * self.resident_bytes


@dataclass
class Counts:
    """What the counters saw over ``steps`` measured steps (warm-up excluded)."""

    steps: int
    seconds: float
    host_reads: int  #: made by the code being diagnosed (not Keras's, not the input pipeline's)
    read_kinds: dict[str, int]
    uploads: int  #: made by the code being diagnosed, outside the input pipeline
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
    printed_chars: int = 0  #: characters of those lines
    input_wait: InputWait | None = None  #: the Profiler's input wait of the profiled steps, if they were profiled
    profiled_steps: int = 0  #: steps run under the Profiler after the counted ones (not counted)
    keras_reads: int = 0  #: host reads made by Keras's own code (fit reading its logs)
    pipeline_reads: int = 0  #: host reads made inside tf.py_function bodies (the input pipeline's work)
    read_sites: dict[str, int] = field(default_factory=dict)  #: where the code being diagnosed read values
    upload_bytes: int = 0  #: bytes of the uploads counted in ``uploads``
    trace_seconds: float = 0.0  #: the measured steps' time spent tracing
    device_class: str = "cpu"
    costs: UnitCosts | None = None
    matmul_flops: float | None = None  #: float32 matmul FLOPs a step, where every product's shape was known
    memory: MemoryGrowth | None = None
    #: seconds inside the steps' own calls (Keras's train function, the step's tf.function), where they were timed:
    #: on a CPU (on a GPU a call can return before its work is done), in a script (:mod:`tfperf.diagnosis.steps`)
    inside_seconds: float | None = None
    #: the measured steps' own time with the counters on, where ``seconds`` is that of as many steps timed after
    #: them without the counters (a script's run): the counters' own cost is the difference
    counted_seconds: float | None = None
    #: how Keras's fit was fed: its data adapters' class names, by how often (:class:`tfperf.diagnosis.steps.StepClock`)
    keras_inputs: dict[str, int] = field(default_factory=dict)
    #: the pipeline the script's loop took its batches from, pulled alone after the steps (a script's run)
    pipeline_alone: PipelineAlone | None = None

    def per_step(self, value: float) -> float:
        return value / max(self.steps, 1)

    @property
    def seconds_per_step(self) -> float:
        return self.seconds / max(self.steps, 1)


@dataclass
class Finding:
    """One finding of a run: its ``code`` (:data:`CATALOGUE`), the ``evidence`` and a line that says it; ``share``:
    the share of a step it costs here (None: not a time cost, or unknown); ``note``: what that means on this
    device, where the finding is not worth fixing here."""

    code: str
    evidence: dict[str, Any] = field(default_factory=dict)
    summary: str = ""
    share: float | None = None
    note: str = ""
    worth: bool = True
    #: why a cost of at least :data:`NOISE_FLOOR` is set aside, in a few words ("" where it is not): it is not one the
    #: script can fix here (its ``note`` says why in full)
    aside: str = ""

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
#: A cause that costs less than this share of a step is not worth fixing here: within the noise of one run.
NOISE_FLOOR = 0.05
#: Why waiting for batches that Keras slices from in-memory arrays is not an input pipeline to fix.
KERAS_SLICES = (
    "these batches are sliced by Keras from the arrays given to fit, in a tf.data pipeline of its own (already "
    "parallel and prefetched): no stage of the script's to fix; much of what a batch costs there is the same for "
    "every batch, so a larger batch makes its share of a step smaller"
)
#: The share of the machine's cores over a step, taken by the script's pipeline for its batches, from which a CPU
#: step counts as held back by it (``input-bound``). The tool's choice, from the clinic: a heavy map on one thread took
#: 48 to 75%, the per-element work of a plain shuffle-batch-prefetch pipeline up to about 20%
#: (docs/measurements-08_capstone.md).
PIPELINE_CORES_SHARE = 0.30
#: Memory growth that names ``memory-growth``: live eager tensors a step, or resident bytes a step.
TENSORS_PER_STEP, RESIDENT_BYTES_PER_STEP = 1.0, 1 << 20
#: The share of the resident growth that the script's grown containers must hold to explain it (the tool's choice).
HELD_SHARE = 0.25


def _contended(cpu: CpuUse | None, wait_share: float) -> str:
    """Why a wait of ``wait_share`` of the steps, measured while other processes filled the cores, does not say the
    pipeline is too slow ("" where they did not, or the machine's CPU could not be read). Other processes that held a
    share of the machine's cores can have kept the pipeline's threads from a core for about that share of the time,
    not more: a longer wait is the pipeline's own (the tool's reading; measured in docs/measurements-08_capstone.md)."""
    if cpu is None or not cpu.contended or wait_share > cpu.others / cpu.cores:
        return ""
    return (
        f"other processes kept {cpu.others:.1f} of the machine's {cpu.cores} cores busy while the steps "
        f"ran ({cpu.busy:.1f} busy in all): the pipeline's threads may have waited for a core, not for their "
        f"own work, for up to {cpu.others / cpu.cores:.0%} of the time; diagnose again with nothing else running"
    )


def _by_kind(counted: dict[str, int]) -> str:
    """``"36 by np.asarray(), 16 by bool()"``: the most frequent first."""
    return ", ".join(f"{n} by {kind}" for kind, n in sorted(counted.items(), key=lambda kv: -kv[1]))


def _share(seconds: float | None, counts: Counts) -> float | None:
    if seconds is None or counts.seconds <= 0:
        return None
    return min(1.0, seconds / counts.seconds)


def decide(counts: Counts) -> list[Finding]:
    """The findings that ``counts`` support, each with its evidence and its share of a step (where a cost applies);
    ranked: those worth fixing here by their share, largest first, then the others. An empty list when none.

    A step run op by op (``eager-steps``) is a finding of its own: TensorFlow's own eager code (its gradient
    functions, for one) reads and converts values as it goes, so the host reads and uploads of an eager step are
    kept in that finding's evidence instead of being findings of their own; diagnose again once the step is a graph.
    """
    found = []
    per_step = counts.per_step
    costs = counts.costs
    on_gpu = counts.device_class == "gpu"
    # op by op: many eager ops a step, and no graph that runs the step (a step that calls its tf.function, with eager
    # work around it, such as a predict, runs as a graph: that work is priced by the step's time, not named here)
    eager = per_step(counts.eager_ops) >= EAGER_OPS_PER_STEP and per_step(counts.graph_calls) < 1
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
                share=_share(costs and counts.eager_ops * costs.eager_op, counts),
            )
        )
    if per_step(counts.host_reads) >= 1 and not eager:
        kinds = _by_kind(counts.read_kinds)
        sites = sorted(counts.read_sites.items(), key=lambda kv: -kv[1])[:3]
        where = "; ".join(f"{n} at {site}" for site, n in sites if site)
        share = _share(costs and counts.host_reads * costs.host_read, counts)
        found.append(
            Finding(
                "host-read-every-step",
                {
                    "host_reads_per_step": per_step(counts.host_reads),
                    "by": dict(counts.read_kinds),
                    "where": dict(counts.read_sites),
                },
                f"{counts.host_reads} host reads in {counts.steps} steps ({per_step(counts.host_reads):.2f} a step: "
                f"{kinds})" + (f"; {where}" if where else ""),
                share=share,
                note=""
                if on_gpu
                else "on a CPU a read waits for nothing but itself; on a GPU each one would also wait "
                "for the work queued on the device to finish, and leave the device idle while Python goes on",
            )
        )
    if counts.traces >= 1:
        which = ", ".join(f"{name} {n}x" for name, n in sorted(counts.traced.items(), key=lambda kv: -kv[1]))
        found.append(
            Finding(
                "retracing",
                {"traces": counts.traces, "by_function": dict(counts.traced), "seconds": counts.trace_seconds},
                f"{counts.traces} traces during {counts.steps} steps after the warm-up ({which}), "
                f"{counts.trace_seconds * 1e3:.0f} ms of tracing",
                share=_share(counts.trace_seconds, counts),
            )
        )
    in_step = {kind: n for kind, n in counts.upload_kinds.items() if COPIED_AHEAD not in kind}
    if per_step(sum(in_step.values())) >= 1 and not eager:
        kinds = _by_kind(in_step)
        bandwidth = costs.h2d_bytes_per_second if costs else None
        copy_seconds = counts.upload_bytes / bandwidth if (on_gpu and bandwidth) else None
        found.append(
            Finding(
                "per-batch-upload",
                {
                    "uploads_per_step": per_step(sum(in_step.values())),
                    "by": in_step,
                    "bytes_per_step": per_step(counts.upload_bytes),
                },
                f"{sum(in_step.values())} uploads of host data in {counts.steps} steps, "
                f"{per_step(counts.upload_bytes) / 1e6:.2f} MB a step ({kinds})",
                share=_share(copy_seconds, counts) if on_gpu else 0.0,
                note=""
                if on_gpu
                else "this machine has no device to copy them to; on a GPU each would cross from "
                "host memory to the device when the step takes it",
            )
        )
    if per_step(counts.keras_calls) >= 1:
        reads_per_call = counts.keras_reads / max(counts.keras_calls, 1)
        call = counts.function_call or (costs.function_call if costs else None)
        if counts.inside_seconds is not None and call:
            # what fewer calls save: the loop's time around the train function's calls (timed), and each call's own
            # fixed cost (the card's), which a call of several steps pays once
            outside = max(0.0, counts.seconds - counts.inside_seconds)
            around = outside + counts.keras_calls * call
            measured = (
                f"; {outside / counts.seconds:.0%} of the steps' time was spent outside the train function, and each "
                f"call costs about {call * 1e6:.0f} µs on this device"
            )
        else:  # estimated: a call's fixed cost and the reads of its logs
            around = costs and counts.keras_calls * (costs.function_call + reads_per_call * costs.host_read)
            measured = ""
        found.append(
            Finding(
                "one-step-per-call",
                {
                    "keras_function_calls_per_step": per_step(counts.keras_calls),
                    "keras_host_reads_per_call": reads_per_call,
                },
                f"Keras's train function was called {counts.keras_calls} times in {counts.steps} steps, and read "
                f"its logs on the host {reads_per_call:.1f} times a call{measured} (the setting that changes it: "
                "steps_per_execution in compile)",
                share=_share(around, counts),
            )
        )
    only_float32 = bool(counts.matmul_dtypes) and set(counts.matmul_dtypes) == {"float32"}
    if only_float32 and counts.low_precision and counts.low_precision[1] >= LOW_PRECISION_GAIN:
        dtype, gain = counts.low_precision
        rate = costs.float32_flops_per_second if costs else None
        matmul_seconds = counts.matmul_flops * counts.steps / rate if (counts.matmul_flops and rate) else None
        share = _share(matmul_seconds and matmul_seconds * (1 - 1 / gain), counts)
        found.append(
            Finding(
                "low-precision-unused",
                {
                    "matmul_dtypes": dict(counts.matmul_dtypes),
                    "card_dtype": dtype,
                    "card_gain": gain,
                    "matmul_flops_per_step": counts.matmul_flops,
                },
                f"{sum(counts.matmul_dtypes.values())} matrix products in the graphs that ran, all float32; your card: "
                f"{dtype} matmuls {gain:.1f} times as fast as float32"
                + (
                    f"; the products are about {_share(matmul_seconds, counts):.0%} of a step at float32's best rate"
                    if matmul_seconds
                    else ""
                ),
                share=share,
                note=""
                if share is not None
                else "the products' share of a step is not known (their shapes are not "
                "all fixed in the graph): no gain can be promised",
            )
        )
    seconds_per_step = counts.seconds_per_step
    call = counts.function_call or (costs.function_call if costs else None)
    # one call of the step's own function, timed where it could be (a script on a CPU), else the whole step (the
    # card's rule); a call of Keras's train function runs steps_per_execution steps
    calls = counts.keras_calls or counts.steps
    step_call = counts.inside_seconds / max(calls, 1) if counts.inside_seconds else seconds_per_step
    if call and step_call <= OVERHEAD_BOUND * call and not eager:
        # what does not grow with the batch: the calls' own cost and everything around them
        fixed = (counts.seconds - max(0.0, (counts.inside_seconds or counts.seconds) - calls * call)) / counts.steps
        timed = "a call" if counts.inside_seconds else "a step"
        found.append(
            Finding(
                "small-batch",
                {"seconds_per_step": seconds_per_step, "seconds_per_call": step_call, "function_call": call},
                f"{step_call * 1e6:.0f} µs {timed}, {step_call / call:.1f} times the {call * 1e6:.0f} µs of one "
                f"tf.function call on this device: a fixed cost, whatever the batch (about "
                f"{fixed / seconds_per_step:.0%} of a step does not grow with the batch)",
                share=min(1.0, fixed / seconds_per_step),
            )
        )
    input_bound = _input_bound(counts)
    if input_bound is not None:
        found.append(input_bound)
    if per_step(counts.printed_lines) >= 1:
        found.append(
            Finding(
                "print-in-step",
                {"printed_lines_per_step": per_step(counts.printed_lines)},
                f"{counts.printed_lines} lines printed in {counts.steps} steps",
                share=_share(
                    costs and counts.printed_lines * costs.print_line + counts.printed_chars * costs.print_char, counts
                ),
                note=""
                if on_gpu
                else "writing a line costs little here; on a GPU printing a tensor also reads its "
                "value, and each read waits for the device",
            )
        )
    memory = counts.memory
    if memory is not None and memory.grows_steadily(counts.steps, explained=counts.traces > 0):
        held = f"; what grew: {', '.join(memory.holders)}" if memory.holders else ""
        found.append(
            Finding(
                "memory-growth",
                {
                    "resident_bytes_per_step": per_step(memory.resident_bytes),
                    "tensors_per_step": per_step(memory.tensors),
                    "holders": list(memory.holders),
                },
                f"{per_step(memory.tensors):.1f} more live tensors and {per_step(memory.resident_bytes) / 1e6:.2f} MB "
                f"more resident memory after each step{held}",
            )
        )
    for finding in found:
        if finding.aside:
            finding.worth = False
        elif finding.share is not None and finding.share < NOISE_FLOOR:
            finding.worth = False
        elif finding.share is None and finding.note:
            finding.worth = False
    return rank(found)


def _pipeline_cores_share(counts: Counts) -> float | None:
    """On a CPU, the share of the machine's cores over a step that the script's pipeline took for the batches of that
    step, from its CPU time a batch taken alone (None: not measured, or not on a CPU, where the step's work is the
    device's and the wait says it all)."""
    alone = counts.pipeline_alone
    if alone is None or counts.device_class != "cpu" or counts.seconds_per_step <= 0:
        return None
    return min(1.0, alone.cpu_per_batch * alone.per_step / (alone.cores * counts.seconds_per_step))


def _input_bound(counts: Counts) -> Finding | None:
    """``input-bound`` where the profiled steps waited :data:`HIGHLY_INPUT_BOUND` of their time for their batches, or
    where (on a CPU) the script's pipeline took :data:`PIPELINE_CORES_SHARE` of the machine's cores over a step for
    its batches. Its
    share is the larger of the two; a wait alone is set aside where Keras sliced the batches itself, or where other
    processes filled the cores and it is no longer than their share of them (:func:`_contended`; a pipeline's own CPU
    time is the same under their load)."""
    wait = counts.input_wait
    cores_share = _pipeline_cores_share(counts)
    waited = wait is not None and wait.share >= HIGHLY_INPUT_BOUND
    took_cores = cores_share is not None and cores_share >= PIPELINE_CORES_SHARE
    if not (waited or took_cores):
        return None
    # every batch sliced by Keras from the arrays given to fit: a pipeline of Keras's, not the script's
    keras_slices = bool(counts.keras_inputs) and set(counts.keras_inputs) == {"ArrayDataAdapter"}
    evidence: dict[str, Any] = {"pipeline_host_reads": counts.pipeline_reads}
    said = []
    if wait is not None:
        slowest = wait.slowest_stage()
        evidence |= {
            "input_wait_share": wait.share,
            "input_wait_seconds": wait.seconds,
            "profiled_seconds": wait.step_seconds,
            "batches": wait.calls,
            "slowest_stage": slowest[0] if slowest else None,
            "prefetches": wait.prefetches(),
            "xprof_conclusion": wait.conclusion,
        }
        if waited:
            stage = f"; the slowest stage: {slowest[0]}, {slowest[1] * 1e3:.1f} ms of its own" if slowest else ""
            said.append(
                f"the profiled steps waited for their input {wait.share:.0%} of their {wait.step_seconds * 1e3:.0f} ms "
                f"({wait.calls} batches taken from tf.data's Iterator::Root in {wait.seconds * 1e3:.0f} ms, read by "
                f"the TensorFlow Profiler; XProf calls {HIGHLY_INPUT_BOUND:.0%} highly input-bound){stage}"
                + ("" if wait.prefetches() or keras_slices else "; no pipeline prefetches")
            )
    alone = counts.pipeline_alone
    if alone is not None and cores_share is not None:
        evidence |= {
            "pipeline_cpu_seconds_per_batch": alone.cpu_per_batch,
            "pipeline_seconds_per_batch": alone.seconds_per_batch,
            "pipeline_cores_share": cores_share,
            "batches_per_step": alone.per_step,
        }
        if took_cores:
            said.append(
                f"taken alone after the steps, the script's pipeline cost {alone.cpu_per_batch * 1e3:.1f} ms of CPU a "
                f"batch ({alone.seconds_per_batch * 1e3:.1f} ms a batch of wall time, {alone.batches} batches): "
                f"{cores_share:.0%} of the {alone.cores} cores' time over a step of {counts.seconds_per_step * 1e3:.1f} "
                "ms, which its threads took from the step's own work"
                + ("" if waited else " (the step hardly waited for its batches: they were made beside it)")
            )
    contended = _contended(wait.cpu, wait.share) if wait is not None and waited and not took_cores else ""
    share = max(wait.share if waited and not contended else 0.0, cores_share if took_cores else 0.0)
    cached = _below_a_cache(wait)
    if keras_slices:
        note, aside = KERAS_SLICES, "Keras slices the arrays itself"
    elif cached:
        note, aside = cached, "the first epoch fills a cache"
    elif contended:
        note, aside = contended, "other processes filled the cores"
    else:
        note, aside = "", ""
    return Finding(
        "input-bound", evidence, "; and ".join(said), share=share if share > 0 else wait.share, note=note, aside=aside
    )


def _below_a_cache(wait: InputWait | None) -> str:
    """Why a pipeline whose slowest stage runs below its ``cache()`` costs what was measured in its first epoch only
    ("" where it does not): the measured steps are early in a run, while the first epoch fills the cache; later epochs
    read the cache and never run the stages below it."""
    slowest = wait.slowest_stage() if wait is not None else None
    if slowest is None or not any("Cache" in part for part in slowest[0].split("::")[:-1]):
        return ""
    return (
        f"the slowest stage ({slowest[0].split('::')[-1]}) runs below the pipeline's cache(): its work is paid while "
        "the first epoch fills the cache, and later epochs read the cache instead; diagnose with --warmup past the "
        "first epoch's steps to see those"
    )


def rank(found: list[Finding]) -> list[Finding]:
    """Worth fixing first, largest share first (a finding without a share, memory growth, after those with one);
    then the others, in the same order."""
    return sorted(found, key=lambda f: (not f.worth, f.share is None, -(f.share or 0.0)))
