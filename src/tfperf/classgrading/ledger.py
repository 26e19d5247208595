"""What was graded, per student and assignment: resumable batches, safe on a shared filesystem.

One small JSON file per student and assignment (``autograde/reports/ledger/<assignment>/``),
written atomically (a temporary file in the same folder, flushed, then renamed over the old
one), by the one grader that graded that student. Several workers, on one machine or on many
nodes sharing the folder, never write the same file at once, and a run that stops at any
moment leaves every file either as it was or complete. A student is graded again only when
their submission changed (its checksum) or when asked to (``--force``).
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from urllib.parse import quote, unquote

GRADED = "graded"  # nbgrader graded it; scores are in the gradebook
REJECTED = "rejected"  # the submission could not be graded as it is (see problems)
FAILED = "failed"  # nbgrader itself failed on it (see problems); graded again next run
STARTED = "started"  # being graded, or the run stopped meanwhile: graded again next run


def submission_checksum(folder: Path) -> str:
    """SHA-256 of every file of a submission folder (names and contents), in a stable order."""
    digest = hashlib.sha256()
    if folder.is_dir():
        for path in sorted(p for p in folder.rglob("*") if p.is_file()):
            digest.update(str(path.relative_to(folder)).encode("utf-8", "surrogateescape") + b"\0")
            digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


@dataclass
class Entry:
    """One student's result for one assignment, as the batch recorded it."""

    student: str
    assignment: str
    checksum: str
    status: str
    score: float | None = None
    max_score: float | None = None
    #: grade_id -> [points scored, max points]
    cells: dict[str, list[float]] = field(default_factory=dict)
    #: why it was not graded, or what went wrong
    problems: list[str] = field(default_factory=list)
    #: things an instructor should look at by hand: [kind, detail]
    anomalies: list[list[str]] = field(default_factory=list)
    #: test cells that lost points: [grade_id, first line of the error]
    failures: list[list[str]] = field(default_factory=list)
    #: rows the throughput checks recorded (``TFPERF_RECORD``)
    speedups: list[dict] = field(default_factory=list)
    #: predictions the submitted notebooks shared, beside their measurements (``classgrading.beliefs``)
    beliefs: list[dict] = field(default_factory=list)
    seconds: float = 0.0
    graded_at: float = field(default_factory=time.time)
    host: str = field(default_factory=socket.gethostname)


def _filename(student: str) -> str:
    """A file name for any student id (odd characters percent-encoded, never a path)."""
    return quote(student, safe="") + ".json"


class Ledger:
    """The ledger of one assignment under ``reports``."""

    def __init__(self, reports: Path, assignment: str):
        self.folder = reports / "ledger" / assignment
        self.assignment = assignment

    def path(self, student: str) -> Path:
        return self.folder / _filename(student)

    def read(self, student: str) -> Entry | None:
        try:
            return Entry(**json.loads(self.path(student).read_text(encoding="utf-8")))
        except FileNotFoundError:
            return None

    def write(self, entry: Entry) -> Path:
        """Replace the student's file atomically."""
        self.folder.mkdir(parents=True, exist_ok=True)
        target = self.path(entry.student)
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".json", dir=self.folder)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(asdict(entry), f, indent=1)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return target

    def entries(self) -> list[Entry]:
        """Every student's entry, by student id."""
        found = []
        for path in sorted(self.folder.glob("*.json")):
            if not path.name.startswith(".tmp-"):
                found.append(Entry(**json.loads(path.read_text(encoding="utf-8"))))
        return sorted(found, key=lambda e: e.student)

    def students(self) -> list[str]:
        return [
            unquote(p.name[: -len(".json")])
            for p in sorted(self.folder.glob("*.json"))
            if not p.name.startswith(".tmp-")
        ]

    def is_done(self, student: str, checksum: str) -> bool:
        """Graded already, for exactly this submission (rejected ones are checked again: it is cheap)."""
        entry = self.read(student)
        return entry is not None and entry.checksum == checksum and entry.status == GRADED
