"""Disjoint CPU sets (and GPUs) for parallel graders, so that timing checks do not share cores.

Throughput checks compare two timings in one process; two graders on the same core would
slow both sides unevenly and their ratios would drift. So ``--jobs N`` runs at most as many
graders as there are disjoint sets of whole physical cores of the size a check needs
(SMT siblings always stay in one set), each grader pinned to its set (``taskset``, or
``os.sched_setaffinity`` where taskset is missing), and on a GPU machine at most one grader
per GPU, each seeing only its own (``CUDA_VISIBLE_DEVICES``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

SYS_CPU = Path("/sys/devices/system/cpu")


def parse_cpu_list(text: str) -> list[int]:
    """``"0-2,5"`` -> ``[0, 1, 2, 5]`` (the kernel's cpu-list format)."""
    cpus: list[int] = []
    for part in filter(None, text.strip().split(",")):
        low, _, high = part.partition("-")
        cpus += range(int(low), int(high or low) + 1)
    return cpus


def physical_cores(cpus: list[int], sys_cpu: Path = SYS_CPU) -> list[tuple[int, ...]]:
    """The usable ``cpus`` grouped by physical core (SMT siblings together), in order of their first CPU."""
    usable = set(cpus)
    cores: dict[tuple[int, ...], None] = {}
    for cpu in sorted(usable):
        siblings_file = sys_cpu / f"cpu{cpu}" / "topology" / "thread_siblings_list"
        try:
            siblings = tuple(c for c in parse_cpu_list(siblings_file.read_text()) if c in usable)
        except (OSError, ValueError):
            siblings = (cpu,)
        cores.setdefault(siblings or (cpu,), None)
    return list(cores)


def core_sets(cores: list[tuple[int, ...]], cores_per_set: int) -> list[tuple[int, ...]]:
    """Disjoint sets of ``cores_per_set`` whole physical cores each (leftover cores stay unused)."""
    if cores_per_set < 1:
        raise ValueError("a grader needs at least one core")
    sets = []
    for start in range(0, len(cores) - cores_per_set + 1, cores_per_set):
        sets.append(tuple(cpu for core in cores[start : start + cores_per_set] for cpu in core))
    return sets


def visible_gpus() -> list[str]:
    """GPU indices a grader may be given: ``CUDA_VISIBLE_DEVICES`` if set, else ``nvidia-smi -L``'s."""
    listed = os.environ.get("CUDA_VISIBLE_DEVICES")
    if listed is not None:
        return [g for g in (part.strip() for part in listed.split(",")) if g and g != "-1"]
    if not shutil.which("nvidia-smi"):
        return []
    try:
        out = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    return [str(i) for i, line in enumerate(line for line in out.splitlines() if line.startswith("GPU "))]


def has_taskset() -> bool:
    return shutil.which("taskset") is not None


@dataclass(frozen=True)
class Slot:
    """Where one grader runs: its CPUs and, on a GPU machine, its one GPU."""

    cpus: tuple[int, ...]
    gpu: str | None = None

    def env(self) -> dict[str, str]:
        """Environment entries for the grader (its GPU only; nothing on a CPU machine)."""
        return {} if self.gpu is None else {"CUDA_VISIBLE_DEVICES": self.gpu}

    def argv(self, command: list[str]) -> list[str]:
        """``command`` pinned to this slot's CPUs (with ``taskset`` where it is installed)."""
        return ["taskset", "--cpu-list", ",".join(map(str, self.cpus)), *command] if has_taskset() else command

    def pin(self) -> None:
        """Pin the calling process (a ``preexec_fn``, where ``taskset`` is missing); its children inherit it."""
        os.sched_setaffinity(0, self.cpus)

    def describe(self) -> str:
        cpus = ",".join(map(str, self.cpus))
        return f"CPUs {cpus}" + (f", GPU {self.gpu}" if self.gpu is not None else "")


@dataclass(frozen=True)
class Plan:
    """The slots for a batch, and why fewer than asked for, if so."""

    slots: list[Slot]
    notes: list[str]


def plan(
    jobs: int,
    cores_per_job: int = 1,
    *,
    cpus: list[int] | None = None,
    gpus: list[str] | None = None,
    sys_cpu: Path = SYS_CPU,
) -> Plan:
    """At most ``jobs`` disjoint slots of ``cores_per_job`` physical cores (and one GPU each, where there are GPUs).

    With one job, the grader keeps every CPU this process may use (nothing to share).
    """
    if jobs < 1:
        raise ValueError("--jobs must be at least 1")
    cpus = sorted(os.sched_getaffinity(0)) if cpus is None else sorted(cpus)
    gpus = visible_gpus() if gpus is None else gpus
    notes: list[str] = []
    if jobs == 1:
        return Plan([Slot(tuple(cpus), gpus[0] if gpus else None)], notes)
    sets = core_sets(physical_cores(cpus, sys_cpu), cores_per_job)
    limit = len(sets)
    if limit < jobs:
        notes.append(
            f"--jobs {jobs}: this machine has {len(physical_cores(cpus, sys_cpu))} physical core(s) "
            f"for grading, so only {limit} disjoint set(s) of {cores_per_job} core(s); running {max(limit, 1)}."
        )
    if gpus and len(gpus) < min(jobs, limit):
        notes.append(f"--jobs {jobs}: {len(gpus)} GPU(s), one grader per GPU; running {len(gpus)}.")
        limit = len(gpus)
    count = max(1, min(jobs, limit))
    if not sets:  # fewer cores than one set needs: one grader on everything
        return Plan([Slot(tuple(cpus), gpus[0] if gpus else None)], notes)
    if count > 1 and count * cores_per_job >= len(physical_cores(cpus, sys_cpu)) and not gpus:
        notes.append(
            f"{count} graders of {cores_per_job} core(s) take every core: nbgrader, the kernels' own "
            "threads and anything else on the machine share them. Speedups may read lower than graded "
            "alone (docs/measurements-grading.md): compare the summary's speedups with the reference's."
        )
    return Plan([Slot(sets[i], gpus[i] if gpus else None) for i in range(count)], notes)
