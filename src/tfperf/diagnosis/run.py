"""Measure a run of training steps with the counters on, and report what slows it (:mod:`tfperf.diagnosis.findings`).

In a notebook: ``tfperf.diagnose(train, steps=20)``, where ``train(steps)`` runs that many steps of the learner's
own code (a ``fit`` with ``steps_per_epoch=steps``, a custom loop, anything). It is called twice: once for
``warmup`` steps that are not counted (tracing, the first call's costs), then for ``steps`` steps under a
:class:`Measurement`: the counters of :mod:`tfperf.measure` (host reads and uploads and whose code made them,
traces and their time, eager operations and ``tf.function`` calls), the output captured and counted (Python's
``print`` and TensorFlow's ``tf.print`` alike, TensorFlow's own log lines left out), and the process's memory.

A script as its author wrote it is run by :mod:`tfperf.diagnosis.script` (``python -m tfperf diagnose SCRIPT``),
which starts and stops the same :class:`Measurement` at the steps it finds.
"""

from __future__ import annotations

import collections
import contextlib
import gc
import os
import sys
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from tfperf.diagnosis.findings import NOISE_FLOOR, Counts, Finding, MemoryGrowth, UnitCosts, decide
from tfperf.measure import ceilings, graph_dtypes, host_syncs, op_counts, profile_analysis, timing, traces
from tfperf.runtime import device, logs

#: Where tf.data's own functions are defined: those it traces for a pipeline's transformations (``map``,
#: ``filter``: ``StructuredFunctionWrapper``) and for its own datasets (``prefetch_to_device``'s copy).
TF_DATA_PACKAGE = "tensorflow.python.data."
#: The graph that Keras's train function calls once per call (``keras/src/backend/tensorflow/trainer.py``,
#: ``_make_function``): it runs ``steps_per_execution`` steps, so it runs once a step when that is 1.
KERAS_CALL = "tf.function multi_step_on_iterator"


@dataclass
class Diagnosis:
    """The counts of one run and the findings they support, ranked (:func:`tfperf.diagnosis.findings.rank`)."""

    findings: list[Finding]
    device: str
    warmup: int
    counts: Counts
    profile: str | None = None  #: the TensorFlow Profiler's capture of more steps (an ``.xplane.pb`` file), if asked
    profile_note: str | None = None  #: why the Profiler's analysis of the capture could not be read, if it could not
    step: str = ""  #: what was taken as one step (a script's, :mod:`tfperf.diagnosis.script`)
    notes: list[str] = field(default_factory=list)  #: what else the report must say (a script that ended early)
    keep_profile: bool = True  #: whether the capture stays for XProf (False: a temporary one, for the input wait)

    def codes(self) -> list[str]:
        """Every finding's code, those worth fixing here first (the evidence of each holds on any device)."""
        return [f.code for f in self.findings]

    def problems(self) -> list[Finding]:
        """The findings worth fixing on this device: each costs at least :data:`NOISE_FLOOR` of a step here, and is
        not set aside as a cost the script cannot fix here (``Finding.aside``)."""
        return [f for f in self.findings if f.worth]

    def to_dict(self) -> dict[str, Any]:
        return {
            "device": self.device,
            "warmup": self.warmup,
            "step": self.step,
            "profile": self.profile if self.keep_profile else None,
            "profile_note": self.profile_note,
            "notes": list(self.notes),
            "counts": asdict(self.counts),
            "findings": [
                {
                    "code": f.code,
                    "title": f.kind.title,
                    "evidence": f.evidence,
                    "summary": f.summary,
                    "fix": f.kind.fix,
                    "share": f.share,
                    "worth": f.worth,
                    "note": f.note,
                    "aside": f.aside,
                }
                for f in self.findings
            ],
        }

    def report(self, *, everything: bool = False) -> str:
        """The findings as text, largest cost first: each code, what it costs here, its evidence, why it costs, and
        where the course fixes it; then, in a line each, what was checked and is not worth fixing on this device
        (``everything``: in full)."""
        c = self.counts
        step = f" (a step: {self.step})" if self.step else ""
        lines = [
            f"{c.steps} steps diagnosed after {self.warmup} warm-up steps (not counted){step}: "
            f"{c.seconds_per_step * 1e3:.2f} ms a step. {self.device}",
            *self.notes,
        ]
        problems = self.problems()
        aside = [f for f in self.findings if f.aside]
        if not problems and aside:
            lines.append(
                "No finding worth fixing in the script here: "
                + ", ".join(f"{f.code} ({_short_cost(f)})" for f in aside)
                + " costs a share of a step, but not one the script can fix here (said below)."
            )
        elif not problems:
            lines.append(
                "No finding worth fixing here: no cause costs as much as "
                f"{NOISE_FLOOR:.0%} of a step (host reads, uploads, prints, retracing, eager steps, input wait)."
            )
        for f in problems:
            lines += [f"[{f.code}] {f.kind.title}{_costs(f)}: {f.summary}."]
            if f.note:
                lines.append(f"    on this device: {f.note}.")
            lines += [f"    why it costs: {f.kind.why}.", f"    fix: {f.kind.fix}."]
        checked = [f for f in self.findings if not f.worth]
        if checked and everything:
            lines.append(
                f"Checked, and not worth fixing here (each under {NOISE_FLOOR:.0%} of a step, no cost here, or a "
                "cost the script cannot fix here: its note says why):"
            )
            for f in checked:
                lines += [f"[{f.code}] {f.kind.title}{_costs(f)}: {f.summary}."]
                if f.note:
                    lines.append(f"    on this device: {f.note}.")
                lines.append(f"    fix, where it costs: {f.kind.fix}.")
        elif checked:
            lines.append(
                "Checked, and not worth fixing here: "
                + ", ".join(f"{f.code} ({_short_cost(f)})" for f in checked)
                + " (--all, or report(everything=True), says more)."
            )
        lines += self._input_lines()
        return "\n".join(lines)

    def _input_lines(self) -> list[str]:
        c = self.counts
        if self.profile:
            wait = c.input_wait
            lines = []
            if wait is not None and not wait.calls:
                lines.append(
                    f"The TensorFlow Profiler saw {c.profiled_steps} more steps take no batch from a tf.data pipeline: "
                    "their input comes from elsewhere (arrays, tensors), so they cannot wait for one."
                )
            elif wait is not None:
                lines.append(
                    f"The TensorFlow Profiler's input-pipeline analysis of {c.profiled_steps} more steps: they waited "
                    f"for their input {wait.share:.0%} of the time ({wait.calls} batches from tf.data)"
                    + (
                        f"; over the diagnosed steps the machine's {wait.cpu.cores} cores were {wait.cpu.busy:.1f} busy, "
                        f"{wait.cpu.others:.1f} of them by other processes."
                        if wait.cpu is not None
                        else "."
                    )
                )
                if "POTENTIALLY" in wait.conclusion and wait.share < profile_analysis.HIGHLY_INPUT_BOUND:
                    lines.append(
                        "XProf says POTENTIALLY input-bound where little of a step waits for input but much of it is "
                        "'All Others' (host time outside the step's ops: I/O or Python); this tool counts only the "
                        "time the training waited for the pipeline's iterator."
                    )
            else:
                lines.append(f"input-bound not checked: {self.profile_note}.")
            if self.keep_profile:
                logdir = Path(self.profile).parents[3]  # <logdir>/plugins/profile/<run>/<host>.xplane.pb
                lines.append(
                    f"The TensorFlow Profiler's capture is in {logdir}: open it with XProf (xprof --logdir {logdir} "
                    f"--port 6006), or TensorBoard once installed (pip install tensorboard; tensorboard --logdir "
                    f"{logdir})."
                )
            return lines
        return ["input-bound not checked: add --profile-dir DIR (profile_dir=) to let the Profiler measure it."]


def _costs(f: Finding) -> str:
    return f" (about {f.share:.0%} of a step here)" if f.share is not None and f.share >= 0.005 else ""


def _short_cost(f: Finding) -> str:
    if f.aside:
        return f"{f.share:.1%} of a step, set aside: {f.aside}"
    if f.note and not f.share:
        return "no cost on this device"
    if f.share is not None:
        return f"{f.share:.1%} of a step"
    return "cost unknown"


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


def unit_costs(card: Any) -> UnitCosts:
    """What one host read, eager op, tf.function call, printed line and printed character cost on this device: the
    card's figures where it has them, else measured now (about a third of a second). A character is priced from
    ``tf.print`` of a tensor of :data:`PRINTED_VALUES` values in full, less a short line, over its characters: a step
    that prints a whole tensor pays for formatting every value, not for one line."""
    tf = logs.tensorflow()
    x = tf.ones([4])
    plain = tf.function(_plus_one)

    def measured(fn: Callable[[], Any]) -> float:
        return min(timing.measure(fn, repeats=3, warmup=2, min_time=0.01).samples)

    def write_a_line() -> None:
        print("a line of output, as a step would write it")

    values = tf.random.uniform([PRINTED_VALUES])

    def print_a_tensor() -> None:
        tf.print(values, summarize=-1)

    with logs.captured_output() as once:
        print_a_tensor()
    characters = len(once.native) + len(once.stdout) + len(once.python)
    with logs.captured_output():
        line = measured(write_a_line)
        tensor = measured(print_a_tensor)
    float32 = _ceiling(card, ceilings.float32_roof(card)) if card is not None else None
    # a read of a value already computed: on a CPU that is all it costs; on a GPU it also waits for the device to
    # run what was queued, which the card's scalar read (an op and its read) prices
    on_gpu = device.device_class() == "gpu"
    return UnitCosts(
        host_read=(_ceiling(card, "scalar_read") if on_gpu else None) or measured(lambda: x.numpy()),
        eager_op=_ceiling(card, "eager_op") or measured(lambda: tf.add(x, x)),
        function_call=_ceiling(card, "function_call") or measured(lambda: plain(x)),
        print_line=line,
        print_char=max(0.0, tensor - line) / max(characters, 1),
        h2d_bytes_per_second=_ceiling(card, "copy_h2d"),
        float32_flops_per_second=float32,
        low_precision=_low_precision(card),
        from_card=card is not None,
    )


def _plus_one(v):
    return v + 1.0


#: Values of the tensor whose printing prices a printed character (:func:`unit_costs`).
PRINTED_VALUES = 4096


def _printed(captured: logs.Captured) -> tuple[int, int]:
    """The lines the steps printed (TensorFlow's own log lines left out), and their characters."""
    text = "\n".join((captured.stdout, captured.python, captured.native))
    lines = [line for line in text.splitlines() if line.strip() and not logs.is_noise(line)]
    return len(lines), sum(len(line) for line in lines)


def _resident_bytes() -> int:
    """The process's resident memory, from ``/proc/self/statm`` (0 where there is no /proc)."""
    try:
        with open("/proc/self/statm", encoding="ascii") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def _live_tensors() -> int:
    from tensorflow.python.framework import ops

    return sum(1 for o in gc.get_objects() if isinstance(o, ops.EagerTensor))


def _container_sizes(namespace: dict | None) -> dict[str, int]:
    """The lengths of the lists, dicts, sets and deques among a script's global names."""
    sizes = {}
    for name, value in list((namespace or {}).items()):
        if isinstance(value, (list, dict, set, collections.deque)) and not name.startswith("__"):
            sizes[name] = len(value)
    return sizes


def _bytes_of(value: Any, depth: int = 2) -> int:
    """About what ``value`` holds: an array's or a tensor's bytes, a container's items' (``depth`` levels down), or
    Python's size of the object."""
    nbytes = getattr(value, "nbytes", None)
    if isinstance(nbytes, int):
        return nbytes
    shape, dtype = getattr(value, "shape", None), getattr(value, "dtype", None)
    if shape is not None and hasattr(shape, "num_elements") and hasattr(dtype, "size"):
        return int(shape.num_elements() or 0) * int(dtype.size)
    if depth > 0 and isinstance(value, (list, tuple, set, collections.deque)):
        return sys.getsizeof(value) + sum(_bytes_of(item, depth - 1) for item in value)
    if depth > 0 and isinstance(value, dict):
        return sys.getsizeof(value) + sum(_bytes_of(item, depth - 1) for item in value.values())
    return sys.getsizeof(value)


def _added_bytes(container: Any, before: int) -> int:
    """About what the items a script's container gained past its first ``before`` hold (a list's or a deque's last
    items, a dict's last values in insertion order; a set, all of it)."""
    if isinstance(container, (list, collections.deque)):
        return sum(_bytes_of(item) for item in list(container)[before:])
    if isinstance(container, dict):
        return sum(_bytes_of(item) for item in list(container.values())[before:])
    return _bytes_of(container)


class Measurement:
    """The counters of one run of steps: :meth:`start` before the first measured step, :meth:`stop` after the last
    (from the same thread), then :meth:`counts`. ``whole_run``: the traces of the whole run (warm-up included),
    whose graphs' matmul FLOPs it reads; ``namespace``: the script's globals, where it looks for what holds memory."""

    def __init__(self, whole_run: traces.Traces, *, namespace: dict | None = None):
        self.whole_run = whole_run
        self.namespace = namespace
        self._stack = contextlib.ExitStack()

    def start(self) -> None:
        gc.collect()
        self._memory = (_resident_bytes(), _live_tensors(), _container_sizes(self.namespace))
        stack = self._stack
        self.printed = stack.enter_context(logs.captured_output())
        self.reads = stack.enter_context(host_syncs.counting(origins=True))
        self.traced = stack.enter_context(traces.counting(clock=timing.now))
        self.ops = stack.enter_context(op_counts.counting())
        device.sync()
        self._started = timing.now()

    def mark(self) -> None:
        """The middle of the measured steps: memory is sampled here too, to tell steady growth from a buffer that
        fills once (call between two steps)."""
        self._middle = (_resident_bytes(), _live_tensors())

    def stop(self) -> None:
        device.sync()
        self.seconds = timing.now() - self._started
        self._stack.close()
        gc.collect()
        resident, tensors, sizes = self._memory
        grown = _container_sizes(self.namespace)
        holders = [f"{name} ({grown[name] - n:+d} items)" for name, n in sizes.items() if grown.get(name, n) > n]
        held = sum(_added_bytes(self.namespace.get(name), n) for name, n in sizes.items() if grown.get(name, n) > n)
        end = (_resident_bytes(), _live_tensors())
        middle = getattr(self, "_middle", None)
        halves = None
        if middle is not None:
            halves = [(middle[0] - resident, middle[1] - tensors), (end[0] - middle[0], end[1] - middle[1])]
        self.memory = MemoryGrowth(end[0] - resident, end[1] - tensors, holders, halves, held_bytes=held)

    def counts(self, steps: int, card: Any, costs: UnitCosts) -> Counts:
        ops, reads, traced = self.ops, self.reads, self.traced
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
        by_who: collections.Counter = collections.Counter()
        sites: collections.Counter = collections.Counter()
        for (who, where), n in reads.read_origins.items():
            by_who[who] += n
            if who == host_syncs.YOURS:
                sites[where] += n
        yours = by_who[host_syncs.YOURS]
        kinds = {kind: n for (who, kind), n in reads.origin_kinds.items() if who == host_syncs.YOURS}
        uploads = sum(n for (who, _), n in reads.upload_origins.items() if who != host_syncs.PIPELINE)
        upload_kinds = (
            dict(reads.upload_kinds) if uploads == reads.uploads else {"host data": uploads} if uploads else {}
        )
        ran = [n for n in ops.raw_runs if n.startswith("__inference_")]
        flops = [(self.whole_run.matmul_flops(name), ops.raw_runs[name]) for name in ran]
        matmul_flops = (
            sum(f * n for f, n in flops) / max(steps, 1) if flops and all(f is not None for f, _ in flops) else None
        )
        traced_seconds = traced.seconds
        printed = _printed(self.printed)
        return Counts(
            steps=steps,
            seconds=self.seconds,
            host_reads=yours,
            read_kinds=kinds,
            uploads=uploads,
            upload_kinds=upload_kinds,
            traces=traced.count - pipeline_traces,
            traced=dict(traced_by_name),
            pipeline_traces=pipeline_traces,
            eager_ops=ops.count - graph_calls,
            graph_calls=graph_calls,
            keras_calls=ops.runs.get(KERAS_CALL, 0),
            function_call=_ceiling(card, "function_call"),
            matmul_dtypes=dict(graph_dtypes.matmul_dtypes(ran)),
            low_precision=_low_precision(card),
            printed_lines=printed[0],
            printed_chars=printed[1],
            keras_reads=by_who[host_syncs.KERAS],
            pipeline_reads=by_who[host_syncs.PIPELINE],
            read_sites={where: n for where, n in sites.items() if where},
            upload_bytes=reads.upload_bytes,
            trace_seconds=traced_seconds,
            device_class=device.device_class(),
            costs=costs,
            matmul_flops=matmul_flops or None,
            memory=self.memory,
        )


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

    ``card``: the device card whose figures price each finding (:func:`unit_costs`) and tell a step that is
    overhead-bound (``small-batch``); by default this device's card if ``python -m tfperf ceilings`` measured it
    (never measured here), None: none (the costs are then measured quickly). ``profile_dir``: after the counted
    steps, ``train(profile_steps)`` runs once more under the TensorFlow Profiler as one marked step
    (:func:`tfperf.measure.profile_analysis.capture`), which writes its capture there for XProf or TensorBoard;
    XProf's analysis of it decides ``input-bound``. The counts and the times come from the counted steps only."""
    card = _card(card)
    if steps < 1 or warmup < 0:
        raise ValueError(f"steps must be at least 1 and warmup at least 0 (got steps={steps}, warmup={warmup})")
    costs = unit_costs(card)
    with traces.counting() as whole_run:
        if warmup:
            with logs.captured_output():
                train(warmup)
        measurement = Measurement(whole_run)
        cpu_from = profile_analysis.cpu_counters()  # the machine's CPU over the run: seconds, not a short capture
        measurement.start()
        try:
            train(steps)
        finally:
            measurement.stop()
    counts = measurement.counts(steps, card, costs)
    profile = note = None
    if profile_dir is not None:
        with logs.captured_output():  # what the steps print was counted above
            written, seconds = profile_analysis.capture(lambda: train(profile_steps), profile_dir)
        profile, counts.profiled_steps = str(written), profile_steps
        try:
            counts.input_wait = profile_analysis.input_wait(written, seconds, profile_analysis.cpu_use_since(cpu_from))
        except profile_analysis.ProfilerAnalysisUnavailable as err:
            note = str(err)
    return Diagnosis(decide(counts), logs.quietly(device.detect).summary(), warmup, counts, profile, note)
