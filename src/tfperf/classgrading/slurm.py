"""Grading a class on a Slurm cluster: an array job, one task per student (or per chunk of students).

``write_array_job(...)`` writes an sbatch script and, next to it, the list of students (one a line); each
array task picks its chunk of that list with ``SLURM_ARRAY_TASK_ID`` and runs
``python -m tfperf grade ASSIGNMENT --students <its chunk> --course COURSE --db-url URL --jobs 1``.
Every task runs on an exclusive node (``--exclusive``) and/or with its own GPUs (``--gres=gpu:N``), so
that no two timing checks share hardware, and all tasks write to one gradebook (PostgreSQL: several
writers at once). ``submit(script)`` hands it to ``sbatch``. The course folder and the course's Python
environment must be on a file system every node sees.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

#: What each task runs (its arguments follow): the course's grading command, with this interpreter.
GRADE_COMMAND = (sys.executable, "-m", "tfperf", "grade")


def chunks(students: Sequence[str], chunk: int) -> list[list[str]]:
    """The students of each array task, in order: task ``i`` grades ``chunks(...)[i]``."""
    return [list(students[start : start + chunk]) for start in range(0, len(students), chunk)]


def write_array_job(
    assignment: str,
    students: list[str],
    course_dir: Path,
    out: Path,
    *,
    db_url: str | None,
    chunk: int = 1,
    gpus_per_task: int = 0,
    exclusive: bool = True,
    extra_sbatch: Sequence[str] = (),
    max_running: int | None = None,
    grade_args: Sequence[str] = (),
    command: Sequence[str] = GRADE_COMMAND,
) -> Path:
    """Write the sbatch script ``out`` (returned; e.g. ``autograde/slurm/grade-01_tensors.sbatch``) and, next to
    it, the students one a line (the same name ending in ``.students``); task logs go to ``logs/`` beside them.

    One array task per ``chunk`` students, at most ``max_running`` of them at once (``--array=0-K%M``; Slurm's
    ``MaxArraySize``, 1001 by default, caps K: grade larger classes in chunks). ``--exclusive`` when
    ``exclusive`` (the task gets whole nodes, every GPU included: sbatch(1)), ``--gres=gpu:N`` when
    ``gpus_per_task`` is N > 0 (pass ``exclusive=False`` with it to run one task per GPU side by side).
    ``extra_sbatch`` lines are added as they are (``"--partition=gpu"``, ``"--time=02:00:00"``). ``db_url`` is
    passed to every task (``None``: the gradebook that the course's ``nbgrader_config.py`` names; with several
    tasks that must be a server such as PostgreSQL, not SQLite). ``grade_args`` go to every task's grading
    command as they are (``["--force", "--execute-timeout", "300"]``).
    Both files are readable by their owner only, since a database URL may hold a password.
    ``command`` replaces the grading command (tests run a stand-in); it receives the same arguments.
    """
    if chunk < 1:
        raise ValueError(f"chunk must be at least 1, not {chunk}")
    if gpus_per_task < 0:
        raise ValueError(f"gpus_per_task must be 0 or more, not {gpus_per_task}")
    if max_running is not None and max_running < 1:
        raise ValueError(f"max_running must be at least 1, not {max_running}")
    if not students:
        raise ValueError("no students to grade")
    for student in students:
        if not student or student != student.strip() or "\n" in student or "\r" in student:
            raise ValueError(f"student id {student!r} cannot be written one a line (empty, blank-edged or multi-line)")
    if len(set(students)) != len(students):
        raise ValueError("a student is listed twice: two tasks would grade the same submission at once")
    if "\n" in assignment or "/" in assignment or not assignment.strip():
        raise ValueError(f"not an assignment name: {assignment!r}")

    script = Path(out).resolve()
    roster, logs = script.with_suffix(".students"), script.parent / "logs"
    if roster == script:
        raise ValueError(f"the script's name must not end in .students: {script}")
    logs.mkdir(parents=True, exist_ok=True)
    course = Path(course_dir).resolve()
    tasks = len(chunks(students, chunk))

    array = f"0-{tasks - 1}" + (f"%{max_running}" if max_running else "")
    sbatch = [
        f"--job-name=tfperf-grade-{assignment}",
        f"--array={array}",
        "--nodes=1",
        "--ntasks=1",
        f"--output={logs / '%A_%a.out'}",
    ]
    if exclusive:
        sbatch.append("--exclusive")
    if gpus_per_task:
        sbatch.append(f"--gres=gpu:{gpus_per_task}")
    sbatch += list(extra_sbatch)
    for option in sbatch:
        if "\n" in option:
            raise ValueError(f"an sbatch option cannot span lines: {option!r}")

    grade = [*command, assignment]
    for argument in grade_args:
        if "\n" in argument or "\r" in argument:
            raise ValueError(f"a grading argument cannot span lines: {argument!r}")
    db_args = f" --db-url {shlex.quote(db_url)}" if db_url else ""
    lines = [
        "#!/bin/bash",
        f"# Grades {assignment} for {len(students)} students: {tasks} array tasks of {chunk}"
        " (tfperf.classgrading.slurm).",
        "# Submit with `sbatch` on the cluster; one task also runs by hand: SLURM_ARRAY_TASK_ID=0 bash THIS_FILE",
        *(f"#SBATCH {option}" for option in sbatch),
        "set -euo pipefail",
        ': "${SLURM_ARRAY_TASK_ID:?this script is one task of a Slurm array job (set it to run one by hand)}"',
        f"chunk={chunk}",
        f"mapfile -t students < {shlex.quote(str(roster))}",
        'mine=("${students[@]:$((SLURM_ARRAY_TASK_ID * chunk)):$chunk}")',
        'if [ ${#mine[@]} -eq 0 ]; then echo "array task $SLURM_ARRAY_TASK_ID has no students" >&2; exit 1; fi',
        'echo "task $SLURM_ARRAY_TASK_ID on $(hostname): ${mine[*]}"',
        f"cd {shlex.quote(str(course))}",
        f'exec {shlex.join(grade)} --students "${{mine[@]}}" --course {shlex.quote(str(course))}{db_args} --jobs 1'
        + "".join(f" {shlex.quote(argument)}" for argument in grade_args),
    ]
    for path, text in ((roster, "\n".join(students) + "\n"), (script, "\n".join(lines) + "\n")):
        path.unlink(missing_ok=True)
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "w", encoding="utf-8") as file:
            file.write(text)
    script.chmod(0o700)
    return script


def submit(script: Path) -> str:
    """Submit with ``sbatch --parsable``; returns the job id. Raises ``RuntimeError`` saying what failed."""
    sbatch = shutil.which("sbatch")
    if sbatch is None:
        raise RuntimeError(
            "sbatch is not on PATH: submit from a machine of the Slurm cluster (a login node), or "
            f"copy {script} there and run `sbatch {Path(script).name}`"
        )
    done = subprocess.run([sbatch, "--parsable", str(script)], capture_output=True, text=True)
    if done.returncode != 0:
        why = done.stderr.strip() or done.stdout.strip()
        raise RuntimeError(f"sbatch refused {script} (exit {done.returncode}): {why}")
    return done.stdout.strip().split(";")[0]  # "jobid" or "jobid;cluster"
