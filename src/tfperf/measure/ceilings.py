"""The device card: what this device can do at best, measured here.

Each ceiling is the best of repeated, synced, warmed-up timings (:func:`tfperf.measure.timing.measure`: the least
seconds per call of 5 samples) on fresh random inputs (never zeros, which some hardware computes faster):

- matmul throughput per dtype, best over a sweep of square shapes (FLOP/s, 2·n³ per product), float32 also compiled
  by XLA (a step compiled by XLA can beat the eager product);
- memory bandwidth by working set (:func:`memory_sweep`): elementwise multiplications over tensors of several sizes,
  as one eager op, as a tf.function of dependent ops run back to back (as an op-by-op step runs them) and compiled by
  XLA, the best of the three at each size (bytes read + written per second). Small tensors stay in a cache, which is
  faster than memory: a step is compared with the bandwidth measured at its own tensors' size (:func:`memory_roof`),
  one roof per size, as a cache-aware roofline draws them; ``memory_bandwidth`` is the largest size's;
- host→device and device→host copy bandwidth by size (GPU only);
- the cost of dispatching one tiny eager op, of calling a ``tf.function``, and of one scalar read
  (a tiny op and ``.numpy()`` of its result: the round trip a training loop pays per logged value).

:func:`card` keeps a measured card in the user's cache folder, one file per device, TensorFlow version
and size (``python -m tfperf ceilings``; ``--force`` measures again).
"""

from __future__ import annotations

import functools
import json
import math
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from tfperf.measure import timing
from tfperf.runtime import device, logs, sizes

MATMUL_DTYPES = ("float32", "tf32", "bfloat16", "float16")
#: Bytes a call of the memory probe's tf.function moves (:func:`memory_sweep`): enough that its call's cost is small.
MEMORY_CALL_BYTES = 256 * 2**20
#: A share of a ceiling up to this is the ceiling reached: two measurements of the same work vary by a few percent
#: (the card keeps the best of 5 samples, a step the median of its own). Above it, the card does not bound it.
NOISE = 1.10
#: The version of what a card holds: a card kept by an older version is measured again.
CARD_VERSION = 2


@dataclass(frozen=True)
class Ceiling:
    """One measured figure: ``value`` in ``unit``; ``detail`` says at which shape or size."""

    name: str
    value: float
    unit: str
    detail: str = ""


@dataclass
class Card:
    """Every ceiling measured on one device, and how long measuring them took."""

    device: str
    device_class: str
    tensorflow: str
    ceilings: list[Ceiling] = field(default_factory=list)
    sweeps: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    seconds: float = 0.0

    def get(self, name: str) -> Ceiling | None:
        return next((c for c in self.ceilings if c.name == name), None)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Card:
        fields = {k: data[k] for k in ("device", "device_class", "tensorflow", "sweeps", "seconds")}
        return cls(**fields, ceilings=[Ceiling(**c) for c in data["ceilings"]])

    def table(self) -> list[str]:
        """The card as lines of text, each figure in a readable unit."""
        lines = [f"Device card: {self.device}", f"(measured in {self.seconds:.1f} s; TensorFlow {self.tensorflow})"]
        for c in self.ceilings:
            lines.append(f"  {c.name:18s} {_readable(c.value, c.unit):>14s}  {c.detail}".rstrip())
        return lines


def _readable(value: float, unit: str) -> str:
    if unit == "FLOP/s":
        if value < 1e8:
            return f"{value / 1e6:.1f} MFLOP/s"
        return f"{value / 1e12:.2f} TFLOP/s" if value >= 1e11 else f"{value / 1e9:.1f} GFLOP/s"
    if unit == "B/s":
        return f"{value / 1e9:.1f} GB/s"
    if unit == "s":
        return f"{value * 1e6:.1f} µs" if value < 1e-3 else f"{value * 1e3:.2f} ms"
    return f"{value:g} {unit}"


def _tf():
    return logs.tensorflow()


def _fresh(shape: Sequence[int], dtype: str = "float32", where: str | None = None):
    """Uniform in [0.5, 1.5): never zero, never denormal."""
    tf = _tf()
    with tf.device(where or device.compute_device()):
        return tf.cast(tf.random.uniform(shape, 0.5, 1.5, dtype=tf.float32), dtype)


def _seconds_per_call(fn: Callable[[], Any], *, repeats: int = 5, min_time: float = 0.05) -> float:
    """The least seconds per call of ``repeats`` samples: a ceiling is the best the device did (the steps compared
    with it are medians, which a busy moment slows as it would slow a median ceiling)."""
    return min(timing.measure(fn, repeats=repeats, warmup=2, min_time=min_time).samples)


def matmul_sweep(dtype: str, shapes: Sequence[int], *, xla: bool = False) -> list[dict[str, Any]]:
    """FLOP/s of ``a @ b`` for each square size ``n`` (``"tf32"``: float32 with TensorFloat-32 on;
    ``"float32"``: with it off), eager or (``xla``) compiled by XLA. Restores TensorFloat-32's setting afterwards."""
    tf = _tf()
    was = tf.config.experimental.tensor_float_32_execution_enabled()
    tf.config.experimental.enable_tensor_float_32_execution(dtype == "tf32")
    compiled = tf.function(_product, jit_compile=True) if xla else None
    rows = []
    try:
        for n in shapes:
            a = _fresh((n, n), "float32" if dtype == "tf32" else dtype)
            b = _fresh((n, n), "float32" if dtype == "tf32" else dtype)
            per_call = _seconds_per_call(lambda a=a, b=b: (compiled or tf.linalg.matmul)(a, b))
            rows.append({"n": n, "seconds": per_call, "flops": 2.0 * n**3 / per_call, "xla": xla})
            del a, b
    finally:
        tf.config.experimental.enable_tensor_float_32_execution(was)
    return rows


def _product(a, b):
    import tensorflow as tf  # imported already (logs.tensorflow() would touch os.environ while traced)

    return tf.linalg.matmul(a, b)


def _scaled(x, c):
    return x * c


def _scaled_times(x, c, *, ops: int):
    for _ in range(ops):
        x = x * c
    return x


def memory_bandwidth(elements: int) -> dict[str, Any]:
    """Bytes per second of ``x * c`` over ``elements`` float32 values (one read and one write each), eager."""
    tf = _tf()
    x = _fresh((elements,))
    c = tf.constant(1.0001)
    per_call = _seconds_per_call(lambda: x * c)
    moved = 2 * 4 * elements
    return {"bytes": moved, "seconds": per_call, "bytes_per_second": moved / per_call}


def memory_sweep(sizes_elements: Sequence[int]) -> list[dict[str, Any]]:
    """The memory bandwidth at each working set: for tensors of ``n`` float32 values, the best bytes per second of
    ``x * c`` eager, of ``x * c`` compiled by XLA, and of a ``tf.function`` of dependent multiplications run back to
    back (as an op-by-op step runs its ops), enough of them to move :data:`MEMORY_CALL_BYTES` a call (at most 256),
    so that the call's own cost is a small part of the time. Each op reads its input and writes its output. One row
    per size: ``elements``, ``tensor_bytes``, ``bytes_per_second`` and ``how`` (the best)."""
    tf = _tf()
    fused = tf.function(_scaled, jit_compile=True)
    rows = []
    for n in sizes_elements:
        x, c = _fresh((n,)), tf.constant(1.0001)
        ops = int(min(256, max(8, MEMORY_CALL_BYTES // (8 * n))))
        chain = tf.function(functools.partial(_scaled_times, ops=ops))
        rates = {
            "one eager op": 8 * n / _seconds_per_call(lambda x=x: x * c),
            "one op compiled by XLA": 8 * n / _seconds_per_call(lambda x=x: fused(x, c)),
            f"{ops} ops run back to back in a tf.function": ops * 8 * n / _seconds_per_call(lambda x=x: chain(x, c)),
        }
        how = max(rates, key=rates.get)
        rows.append({"elements": n, "tensor_bytes": 4 * n, "bytes_per_second": rates[how], "how": how})
        del x
    return rows


def memory_roof(card: Card, tensor_bytes: float | None = None) -> tuple[float, str]:
    """The memory bandwidth that bounds a step whose tensors hold ``tensor_bytes`` each, and where the card measured
    it: the best of the card's sweep at sizes within a factor of 4 of it (else the nearest size measured); without a
    size or a sweep, the card's ``memory_bandwidth``."""
    rows = card.sweeps.get("memory") or []
    if tensor_bytes is None or not rows:
        found = card.get("memory_bandwidth")
        if found is None:
            raise ValueError(
                "the device card has no memory_bandwidth: measure it with `python -m tfperf ceilings --force`"
            )
        return found.value, found.detail
    near = [r for r in rows if tensor_bytes / 4 <= r["tensor_bytes"] <= tensor_bytes * 4]
    if not near:
        near = [min(rows, key=lambda r: abs(math.log(r["tensor_bytes"] / tensor_bytes)))]
    best = max(near, key=lambda r: r["bytes_per_second"])
    return best["bytes_per_second"], f"at tensors of {readable_size(best['tensor_bytes'])}"


def float32_roof(card: Card, tf32: bool | None = None) -> str:
    """The name of the card's row that float32 matmuls run at here: ``matmul_tf32`` where TensorFloat-32 is on
    (``tf32``; default: TensorFlow's setting now, on by default) and the card measured it, else ``matmul_float32``."""
    if tf32 is None:
        tf32 = _tf().config.experimental.tensor_float_32_execution_enabled()
    return "matmul_tf32" if tf32 and card.get("matmul_tf32") is not None else "matmul_float32"


def roofs(card: Card, tensor_bytes: float | None = None) -> dict[str, float]:
    """The card as a dict (ceiling name -> value) as it bounds a step here: ``matmul_float32`` is the rate float32
    matmuls run at (:func:`float32_roof`), ``memory_bandwidth`` the bandwidth at the step's tensors' size
    (:func:`memory_roof`)."""
    found = {c.name: c.value for c in card.ceilings}
    roof = card.get(float32_roof(card))
    if roof is not None:
        found["matmul_float32"] = roof.value
    if card.get("memory_bandwidth") is not None:
        found["memory_bandwidth"] = memory_roof(card, tensor_bytes)[0]
    return found


def readable_size(nbytes: float) -> str:
    """Bytes in a readable binary unit ("4 MiB")."""
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if nbytes >= scale:
            return f"{nbytes / scale:.3g} {unit}"
    return f"{nbytes:.0f} bytes"


def copy_sweep(direction: str, sizes_bytes: Sequence[int]) -> list[dict[str, Any]]:
    """Bytes per second of copying a float32 tensor host→device (``"h2d"``) or device→host (``"d2h"``)."""
    tf = _tf()
    source, target = ("/CPU:0", "/GPU:0") if direction == "h2d" else ("/GPU:0", "/CPU:0")

    # In a tf.function: eager TensorFlow keeps a tensor's copy on another device and hands it out again
    # (a host->device "copy" of the same tensor measured 10 TB/s on an H100); a function copies on every call.
    @tf.function(jit_compile=False)
    def copy(x):
        with tf.device(target):
            return tf.identity(x)

    rows = []
    for nbytes in sizes_bytes:
        x = _fresh((max(1, nbytes // 4),), where=source)
        per_call = _seconds_per_call(lambda x=x: copy(x))
        rows.append({"bytes": nbytes, "seconds": per_call, "bytes_per_second": nbytes / per_call})
    return rows


def overheads() -> dict[str, tuple[float, str]]:
    """Seconds per tiny eager op, per ``tf.function`` call (the least of a plain one and one compiled by XLA: on a
    CPU an XLA-compiled call measured cheaper), and per scalar read (op + ``.numpy()``), each with a detail."""
    tf = _tf()
    x = _fresh((4,))
    y = _fresh((4,))
    plain, compiled = tf.function(_plus_one), tf.function(_plus_one, jit_compile=True)
    s = _fresh(())
    # a call's cost varies more than a large op's (a busy moment is a larger part of it): the best of more samples
    calls = {
        "plain": _seconds_per_call(lambda: plain(x), repeats=15),
        "compiled by XLA": _seconds_per_call(lambda: compiled(x), repeats=15),
    }
    cheaper = min(calls, key=calls.get)
    return {
        "eager_op": (_seconds_per_call(lambda: tf.add(x, y)), ""),
        "function_call": (calls[cheaper], f"the cheaper of a plain call and one compiled by XLA: {cheaper}"),
        "scalar_read": (_seconds_per_call(lambda: (s + 1.0).numpy()), ""),
    }


def _plus_one(v):
    return v + 1.0


def measure(size: str | None = None, progress: Callable[[str], None] | None = None) -> Card:
    """Measure every ceiling of this device (``size``: ``"full"`` or ``"ci"``, default the course's)."""
    tf = _tf()
    say = progress or (lambda message: None)
    size = size or sizes.course_size()
    on_gpu = device.device_class() == "gpu"
    info = logs.quietly(device.detect)
    card = Card(device=info.summary(), device_class=device.device_class(), tensorflow=tf.__version__)
    start = timing.now()
    if on_gpu:
        shapes = [1024, 2048, 4096, 8192] if size == "full" else [512, 1024, 4096]
        dtypes = MATMUL_DTYPES
        elements = [2**k for k in range(16, 27, 2)] if size == "full" else [2**k for k in range(18, 25, 3)]
    else:
        shapes = [256, 512, 1024] if size == "full" else [128, 256, 512]
        dtypes = ("float32", "bfloat16", "float16")
        elements = [2**k for k in range(14, 25, 2)] if size == "full" else [2**k for k in range(16, 23, 2)]
    for dtype in dtypes:
        say(f"matmul {dtype}")
        rows = matmul_sweep(dtype, shapes)
        if dtype in ("float32", "tf32"):  # the roof of the steps of the course, compiled by XLA too
            rows += matmul_sweep(dtype, shapes, xla=True)
        card.sweeps[f"matmul_{dtype}"] = rows
        best = max(rows, key=lambda r: r["flops"])
        where = f"n={best['n']}" + (", compiled by XLA" if best["xla"] else "")
        card.ceilings.append(Ceiling(f"matmul_{dtype}", best["flops"], "FLOP/s", where))
    say("memory bandwidth")
    card.sweeps["memory"] = memory_sweep(elements)
    largest = card.sweeps["memory"][-1]
    detail = f"tensors of {readable_size(largest['tensor_bytes'])}; by tensor size: " + ", ".join(
        f"{readable_size(r['tensor_bytes'])} {_readable(r['bytes_per_second'], 'B/s')}" for r in card.sweeps["memory"]
    )
    card.ceilings.append(Ceiling("memory_bandwidth", largest["bytes_per_second"], "B/s", detail))
    if on_gpu:
        for direction in ("h2d", "d2h"):
            say(f"copy {direction}")
            rows = copy_sweep(direction, [2**k for k in range(12, 29 if size == "full" else 23, 4)])
            card.sweeps[f"copy_{direction}"] = rows
            best = max(rows, key=lambda r: r["bytes_per_second"])
            card.ceilings.append(
                Ceiling(f"copy_{direction}", best["bytes_per_second"], "B/s", f"{best['bytes']} bytes")
            )
    say("overheads")
    for name, (seconds, detail) in overheads().items():
        card.ceilings.append(Ceiling(name, seconds, "s", detail))
    card.seconds = timing.now() - start
    return card


def cache_folder() -> Path:
    """Where measured cards are kept: ``$XDG_CACHE_HOME/tfperf-course/ceilings`` (default ``~/.cache``)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "tfperf-course" / "ceilings"


def cache_file(folder: Path, size: str) -> Path:
    """The file of this device's card: one per device, TensorFlow version and size."""
    name = f"{logs.quietly(device.detect).summary()} tf{_tf().__version__} {size} card{CARD_VERSION}"
    return folder / (re.sub(r"[^a-z0-9.]+", "-", name.lower()).strip("-")[:120] + ".json")


def card(
    size: str | None = None,
    *,
    force: bool = False,
    folder: Path | None = None,
    progress: Callable[[str], None] | None = None,
) -> tuple[Card, Path | None]:
    """This device's card: read from the cache, or measured (``force``: always) and kept there.

    Returns the card and the file it was read from (None when it was measured now). A cache that
    cannot be read is measured again; one that cannot be written is reported through ``progress``.
    """
    size = size or sizes.course_size()
    path = cache_file(folder or cache_folder(), size)
    say = progress or (lambda message: None)
    if not force and path.is_file():
        try:
            return Card.from_dict(json.loads(path.read_text())), path
        except (ValueError, KeyError, TypeError) as err:
            say(f"the cached card {path} cannot be read ({err}): measuring again")
    measured = measure(size, progress=progress)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(measured.to_dict(), indent=1))
    except OSError as err:
        say(f"the card could not be kept in {path} ({err}); it will be measured again next time")
    return measured, None


def cached(size: str | None = None, *, folder: Path | None = None) -> Card | None:
    """This device's card if it was measured already (``python -m tfperf ceilings``), else None: never measures."""
    path = cache_file(folder or cache_folder(), size or sizes.course_size())
    try:
        return Card.from_dict(json.loads(path.read_text()))
    except (OSError, ValueError, KeyError, TypeError):
        return None


#: How a notebook names a ceiling next to a measurement.
LABELS = {
    "matmul_float32": "the best float32 matmul rate on your device card",
    "matmul_tf32": "the best float32 matmul rate (with TensorFloat-32, on here) on your device card",
    "matmul_bfloat16": "the best bfloat16 matmul rate on your device card",
    "matmul_float16": "the best float16 matmul rate on your device card",
    "memory_bandwidth": "the memory bandwidth on your device card",
}


def share(value: float, name: str, card: Card | None, *, tensor_bytes: float | None = None) -> str:
    """``value`` as a share of the ceiling ``name`` of ``card`` ("3% of the best float32 matmul rate on your
    device card"); "" without a card or that ceiling. ``matmul_float32`` is the rate float32 matmuls run at here
    (:func:`float32_roof`); ``memory_bandwidth`` the card's at ``tensor_bytes`` (:func:`memory_roof`). Above the
    ceiling by more than the card's noise (:data:`NOISE`), it says that the card does not bound this value, never a
    share above 100% as if it were one."""
    if card is None:
        return ""
    if name == "matmul_float32":
        name = float32_roof(card)
    if name == "memory_bandwidth":
        if card.get(name) is None:
            return ""
        ceiling, where = memory_roof(card, tensor_bytes)
        label = f"{LABELS[name]} {where}" if tensor_bytes is not None else LABELS[name]
    else:
        found = card.get(name)
        if found is None:
            return ""
        ceiling, where, label = found.value, found.detail, LABELS.get(name, name)
    if ceiling <= 0:
        return ""
    ratio = value / ceiling
    if ratio > NOISE:
        return (
            f"above {label} ({ratio:.1f} times it): the card measured less than this reached, so it does not bound "
            f"this here (the card: {_readable(ceiling, 'FLOP/s' if name.startswith('matmul') else 'B/s')}, {where})"
        )
    if ratio > 1:
        return f"{label} reached (within the few percent the card's own figures vary)"
    percent = 100 * ratio
    shown = f"{percent:.0f}%" if percent >= 10 else f"{percent:.2g}%"  # a sliver keeps two significant digits
    return f"{shown} of {label}"


def fastest_share(records: Sequence[dict], card: Card | None, label: Callable[[dict], str]) -> str:
    """A line for the record with the highest ``flops_per_s``: ``label(record)``, its matmul rate and its share of
    the card's best float32 matmul rate (without a card: how to measure one)."""
    if not records:
        return ""
    best = max(records, key=lambda r: r["flops_per_s"])
    line = f"fastest: {label(best)}, {_readable(best['flops_per_s'], 'FLOP/s')} of matmuls"
    found = share(best["flops_per_s"], "matmul_float32", card)
    if found:
        return f"{line}: {found}"
    return f"{line} (measure a device card, `python -m tfperf ceilings`, to see its share of this device's best)"
