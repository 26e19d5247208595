"""The run registry: every training run recorded in a real database, to compare runs and to find them again.

One row a run: its name, when it started, the framework and the device, a hash of its data, its hyperparameters, how
long it took, how many examples it trained on and the throughput that makes, its final metrics, the profile it
wrote, and whether it finished. SQLite by default (``$XDG_DATA_HOME/tfperf-course/runs.sqlite``, or the URL in
``$TFPERF_RUNS_DB``); any SQLAlchemy URL works, PostgreSQL included, the same way nbgrader's gradebook does.

In a notebook::

    runs = Registry()
    with runs.record("baseline", hyperparameters={"batch": 64}, data_hash=data_hash(x, y)) as run:
        history = model.fit(...)
        run.examples = steps * 64
        run.metrics = {"loss": history.history["loss"][-1]}
    runs.table()

From a shell: ``python -m tfperf runs [--name NAME] [--json]``.
"""

from __future__ import annotations

import contextlib
import datetime
import hashlib
import json
import math
import os
import time
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any, ClassVar

import sqlalchemy as sa

#: The environment variable that names the registry's database (a SQLAlchemy URL).
URL_ENV_VAR = "TFPERF_RUNS_DB"

_metadata = sa.MetaData()
_runs = sa.Table(
    "runs",
    _metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("name", sa.String(200), nullable=False),
    sa.Column("started", sa.String(40), nullable=False),  # UTC, ISO 8601
    sa.Column("status", sa.String(20), nullable=False),  # "finished" or "failed"
    sa.Column("framework", sa.String(200), nullable=False),
    sa.Column("device", sa.String(300), nullable=False),
    sa.Column("data_hash", sa.String(64)),
    sa.Column("hyperparameters", sa.Text),  # JSON
    sa.Column("duration_s", sa.Float),
    sa.Column("examples", sa.Integer),
    sa.Column("throughput", sa.Float),  # examples per second
    sa.Column("metrics", sa.Text),  # JSON
    sa.Column("profile", sa.String(1000)),
    sa.Column("error", sa.Text),
)


@dataclass
class Run:
    """One training run, as recorded. ``throughput`` is examples per second of ``duration_s``."""

    #: A learner's answer fills a run in (its metrics, its examples): graded answers may change one
    #: (:mod:`tfperf.autograding.restricted`), unlike the course's other objects.
    ANSWER_FILLS_IN: ClassVar[bool] = True

    name: str
    started: str = ""
    status: str = "running"
    framework: str = ""
    device: str = ""
    data_hash: str | None = None
    hyperparameters: dict[str, Any] = field(default_factory=dict)
    duration_s: float | None = None
    examples: int | None = None
    throughput: float | None = None
    metrics: dict[str, float] = field(default_factory=dict)
    profile: str | None = None
    error: str | None = None
    id: int | None = None

    #: What a finished run must have for the registry to compare it with others (``profile`` is optional).
    REQUIRED = (
        "framework",
        "device",
        "data_hash",
        "hyperparameters",
        "duration_s",
        "examples",
        "throughput",
        "metrics",
    )

    def missing(self) -> list[str]:
        """The required fields this run left empty (a metric that is not a finite number counts as empty)."""
        empty = [name for name in self.REQUIRED if getattr(self, name) in (None, "", {})]
        if self.metrics and not all(isinstance(v, int | float) and math.isfinite(v) for v in self.metrics.values()):
            empty.append("metrics")
        return sorted(set(empty), key=self.REQUIRED.index)


def default_url() -> str:
    """``$TFPERF_RUNS_DB``, or SQLite in the user's data folder."""
    if os.environ.get(URL_ENV_VAR):
        return os.environ[URL_ENV_VAR]
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return f"sqlite:///{Path(base) / 'tfperf-course' / 'runs.sqlite'}"


def shown(url: str) -> str:
    """The URL with its password hidden, for messages."""
    try:
        return sa.engine.make_url(url).render_as_string(hide_password=True)
    except sa.exc.ArgumentError:
        return url


def framework() -> str:
    """TensorFlow's and Keras's versions, as imported (read only if they are)."""
    import sys

    parts = []
    for name, label in (("tensorflow", "TensorFlow"), ("keras", "Keras")):
        module = sys.modules.get(name)
        if module is not None and getattr(module, "__version__", None):
            parts.append(f"{label} {module.__version__}")
    return ", ".join(parts)


def data_hash(*arrays: Any) -> str:
    """A SHA-256 of the data's values, dtypes and shapes (NumPy arrays, tensors, or anything ``np.asarray`` takes):
    two runs with the same hash trained on the same data."""
    import numpy as np

    digest = hashlib.sha256()
    for array in arrays:
        values = np.ascontiguousarray(np.asarray(array))
        digest.update(f"{values.dtype.str}{values.shape}".encode())
        digest.update(values.tobytes())
    return digest.hexdigest()


def _device() -> str:
    from tfperf.runtime import device, logs

    return logs.quietly(device.detect).summary()


class Registry:
    """The runs in one database (``url``: a SQLAlchemy URL; default :func:`default_url`). The table is made on first use."""

    def __init__(self, url: str | None = None):
        self.url = url or default_url()
        if self.url.startswith("sqlite:///") and self.url != "sqlite:///:memory:":
            Path(self.url.removeprefix("sqlite:///")).parent.mkdir(parents=True, exist_ok=True)
        self.engine = sa.create_engine(self.url)
        _metadata.create_all(self.engine)

    def add(self, run: Run) -> Run:
        """Store a run (its ``id`` is set); the framework and device are filled in when left empty."""
        run.framework = run.framework or framework()
        run.device = run.device or _device()
        run.started = run.started or _now()
        if run.throughput is None and run.examples and run.duration_s:
            run.throughput = run.examples / run.duration_s
        row = {f.name: getattr(run, f.name) for f in fields(Run) if f.name != "id"}
        row["hyperparameters"] = json.dumps(run.hyperparameters, sort_keys=True, default=str)
        row["metrics"] = json.dumps(run.metrics, sort_keys=True)
        with self.engine.begin() as connection:
            run.id = connection.execute(_runs.insert().values(**row)).inserted_primary_key[0]
        return run

    @contextlib.contextmanager
    def record(
        self, name: str, *, hyperparameters: dict[str, Any], data_hash: str | None = None, profile: str | None = None
    ) -> Iterator[Run]:
        """Time the block as one run and store it when the block ends, finished or failed (the error kept): set
        ``examples`` and ``metrics`` on the run it yields. A run that fails is stored and its error raised again."""
        run = Run(name, started=_now(), hyperparameters=dict(hyperparameters), data_hash=data_hash, profile=profile)
        start = time.perf_counter()
        try:
            yield run
        except BaseException as err:
            run.status, run.error = "failed", f"{type(err).__name__}: {err}"
            raise
        else:
            run.status = "finished"
        finally:
            run.duration_s = time.perf_counter() - start
            self.add(run)

    def runs(self, name: str | None = None) -> list[Run]:
        """The stored runs, oldest first (only those called ``name`` if given)."""
        query = sa.select(_runs).order_by(_runs.c.id)
        if name is not None:
            query = query.where(_runs.c.name == name)
        with self.engine.connect() as connection:
            return [_from_row(row._mapping) for row in connection.execute(query)]

    def table(self, runs: Iterable[Run] | None = None) -> str:
        """The runs as a text table: name, status, throughput, duration, metrics, and the device."""
        runs = list(self.runs() if runs is None else runs)
        if not runs:
            return f"No runs recorded in {self.url} yet."
        lines = [f"{'id':>4}  {'name':<24} {'status':<9} {'examples/s':>11} {'seconds':>8}  metrics"]
        for r in runs:
            rate = f"{r.throughput:,.0f}" if r.throughput else "-"
            took = f"{r.duration_s:.2f}" if r.duration_s is not None else "-"
            metrics = ", ".join(f"{k} {v:.4g}" for k, v in sorted(r.metrics.items()))
            lines.append(f"{r.id:>4}  {r.name[:24]:<24} {r.status:<9} {rate:>11} {took:>8}  {metrics}")
        devices = sorted({r.device for r in runs})
        lines += [f"device: {d}" for d in devices]
        return "\n".join(lines)


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")


def _from_row(row) -> Run:
    values = dict(row)
    values["hyperparameters"] = json.loads(values["hyperparameters"] or "{}")
    values["metrics"] = json.loads(values["metrics"] or "{}")
    return Run(**values)


def to_dicts(runs: Iterable[Run]) -> list[dict[str, Any]]:
    return [asdict(r) for r in runs]


def diagnosis_run(found: Any, script: str | Path) -> Run:
    """A diagnosis of ``script`` (:class:`tfperf.diagnosis.run.Diagnosis`) as a run of the registry: its steps'
    time, what a step was, and each finding's share of a step among its metrics."""
    c = found.counts
    metrics = {"ms_per_step": c.seconds_per_step * 1e3}
    metrics |= {f"{f.code} share": f.share for f in found.findings if f.share is not None}
    return Run(
        name=f"diagnose {Path(script).name}",
        status="finished",
        hyperparameters={
            "kind": "tfperf diagnose",
            "script": str(Path(script).resolve()),
            "steps": c.steps,
            "warmup": found.warmup,
            "step": found.step,
            "findings": [f.code for f in found.problems()],
            "checked": [f.code for f in found.findings if not f.worth],
        },
        duration_s=c.seconds,
        metrics=metrics,
        profile=found.profile if found.keep_profile else None,
    )
