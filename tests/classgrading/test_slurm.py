"""The Slurm path (tfperf.classgrading.slurm): the array job's script, one task run by hand, and (slow) a
real single-node Slurm that runs the array job, its tasks grading a toy assignment into PostgreSQL."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import textwrap

import pytest

from tests.classgrading.gradebook_toy import ASSIGNMENT
from tests.classgrading.pg_server import postgres  # noqa: F401 (the fixture)
from tests.classgrading.slurm_cluster import slurm_cluster  # noqa: F401 (the fixture)
from tfperf.classgrading import slurm

# Odd but legal student ids (nbgrader's are folder names): quoting must keep each one whole.
STUDENTS = ["ada", "o'brien jr", "$HOME", "x;rm -rf y", "zoë"]
JOB_NAME = f"grade-{ASSIGNMENT}.sbatch"
DB_URL = "postgresql+psycopg://grader:p%40ss$word&x@db.example:5432/gradebook"


def sbatch_options(script):
    return [line.removeprefix("#SBATCH ") for line in script.read_text().splitlines() if line.startswith("#SBATCH ")]


def recorder(tmp_path):
    """A stand-in for the grading command that records its arguments and folder, one JSON line per call."""
    path = tmp_path / "record.py"
    path.write_text(
        textwrap.dedent(f"""\
        import json, os, sys
        with open({str(tmp_path / "calls.jsonl")!r}, "a") as calls:
            calls.write(json.dumps({{"args": sys.argv[1:], "cwd": os.getcwd()}}) + "\\n")
        """)
    )
    return [sys.executable, str(path)]


def run_task(script, task_id, **env):
    environment = {k: v for k, v in os.environ.items() if not k.startswith("SLURM_")}
    if task_id is not None:
        environment["SLURM_ARRAY_TASK_ID"] = str(task_id)
    return subprocess.run(["bash", str(script)], capture_output=True, text=True, env={**environment, **env}, timeout=60)


def test_one_task_per_chunk_on_an_exclusive_node(tmp_path):
    script = slurm.write_array_job(
        ASSIGNMENT,
        STUDENTS,
        tmp_path / "course",
        tmp_path / "slurm" / JOB_NAME,
        db_url=DB_URL,
        chunk=2,
        extra_sbatch=["--partition=grading", "--time=01:00:00"],
    )
    assert script == tmp_path / "slurm" / JOB_NAME
    options = sbatch_options(script)
    assert "--array=0-2" in options  # 5 students in chunks of 2
    assert "--exclusive" in options and not any(o.startswith("--gres") for o in options)
    assert options[-2:] == ["--partition=grading", "--time=01:00:00"]
    assert f"--output={tmp_path / 'slurm' / 'logs' / '%A_%a.out'}" in options
    roster = tmp_path / "slurm" / f"grade-{ASSIGNMENT}.students"
    assert roster.read_text().splitlines() == STUDENTS
    # A database URL may hold a password: only the owner reads either file.
    assert stat.S_IMODE(script.stat().st_mode) == 0o700 and stat.S_IMODE(roster.stat().st_mode) == 0o600
    assert subprocess.run(["bash", "-n", str(script)]).returncode == 0
    # By default each task runs the course's grading command with this interpreter.
    assert f"{sys.executable} -m tfperf grade {ASSIGNMENT} --students" in script.read_text()


def test_one_gpu_per_task(tmp_path):
    script = slurm.write_array_job(
        ASSIGNMENT,
        STUDENTS,
        tmp_path,
        tmp_path / "slurm" / JOB_NAME,
        db_url=None,
        gpus_per_task=1,
        exclusive=False,
        max_running=4,
    )
    options = sbatch_options(script)
    assert "--gres=gpu:1" in options and "--exclusive" not in options
    assert "--array=0-4%4" in options  # at most 4 at once: one per GPU of a 4-GPU node
    assert "--db-url" not in script.read_text()  # the gradebook of the course's nbgrader_config.py


def test_each_task_grades_its_own_chunk(tmp_path):
    course = tmp_path / "course"
    course.mkdir()
    script = slurm.write_array_job(
        ASSIGNMENT, STUDENTS, course, tmp_path / "slurm" / JOB_NAME, db_url=DB_URL, chunk=2, command=recorder(tmp_path)
    )
    for task in range(3):
        done = run_task(script, task)
        assert done.returncode == 0, done.stderr
    calls = [json.loads(line) for line in (tmp_path / "calls.jsonl").read_text().splitlines()]
    assert [call["args"] for call in calls] == [
        [
            ASSIGNMENT,
            "--students",
            *STUDENTS[start : start + 2],
            "--course",
            str(course),
            "--db-url",
            DB_URL,
            "--jobs",
            "1",
        ]
        for start in (0, 2, 4)
    ]
    assert {call["cwd"] for call in calls} == {str(course)}


def test_a_task_outside_slurm_or_past_the_list_refuses(tmp_path):
    script = slurm.write_array_job(
        ASSIGNMENT, STUDENTS, tmp_path, tmp_path / "slurm" / JOB_NAME, db_url=None, chunk=2, command=recorder(tmp_path)
    )
    done = run_task(script, None)
    assert done.returncode != 0 and "SLURM_ARRAY_TASK_ID" in done.stderr
    done = run_task(script, 3)
    assert done.returncode != 0 and "array task 3 has no students" in done.stderr
    assert not (tmp_path / "calls.jsonl").exists()


@pytest.mark.parametrize(
    "students, chunk, problem",
    [
        ([], 1, "no students"),
        (["a", "a"], 1, "listed twice"),
        (["a\nb"], 1, "one a line"),
        ([" a"], 1, "one a line"),
        (["a"], 0, "chunk must be"),
    ],
)
def test_bad_lists_are_refused(tmp_path, students, chunk, problem):
    with pytest.raises(ValueError, match=problem):
        slurm.write_array_job(ASSIGNMENT, students, tmp_path, tmp_path / "slurm" / JOB_NAME, db_url=None, chunk=chunk)


def test_bad_settings_are_refused(tmp_path):
    for settings, problem in (
        ({"max_running": 0}, "max_running"),
        ({"gpus_per_task": -1}, "gpus_per_task"),
        ({"extra_sbatch": ["--time=1\n#SBATCH --x"]}, "cannot span lines"),
        ({"grade_args": ["--force\nrm -rf ~"]}, "cannot span lines"),
    ):
        with pytest.raises(ValueError, match=problem):
            slurm.write_array_job(ASSIGNMENT, ["a"], tmp_path, tmp_path / "slurm" / JOB_NAME, db_url=None, **settings)
    with pytest.raises(ValueError, match="not an assignment"):
        slurm.write_array_job("../x", ["a"], tmp_path, tmp_path / "slurm" / JOB_NAME, db_url=None)


def test_submit_says_when_sbatch_is_missing(tmp_path, monkeypatch):
    script = slurm.write_array_job(ASSIGNMENT, STUDENTS, tmp_path, tmp_path / "slurm" / JOB_NAME, db_url=None)
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(RuntimeError, match="sbatch is not on PATH"):
        slurm.submit(script)


@pytest.mark.slow
def test_the_grade_command_in_real_slurm_tasks(slurm_cluster, postgres, request, tmp_path, monkeypatch):  # noqa: F811
    """Two array tasks at once (no --exclusive), each running the real ``tfperf grade`` on its chunk of a toy
    class (the grade command's own toy course: sandboxed kernel, real course configuration) into PostgreSQL."""
    from nbgrader.api import Gradebook

    from tests.classgrading import toy

    course = request.getfixturevalue("toy_course")
    kinds = {"ann": "reference", "bob": "wrong", "cyd": "crashing"}
    for student, kind in kinds.items():
        toy.submit(course, student, toy.variant(kind, toy.released(course)))
    url = postgres.create_database("gradebook_grade_command")
    environment = toy.course_env(course.parent)  # the course's sandboxed kernel and this checkout's library
    for name in ("JUPYTER_PATH", "PYTHONPATH"):
        monkeypatch.setenv(name, environment[name])  # sbatch hands the submitter's environment to the tasks
    # The gradebook's tables are made once, before graders run side by side (docs/instructors.md).
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "nbgrader",
            "generate_assignment",
            toy.ASSIGNMENT,
            "--force",
            f"--CourseDirectory.db_url={url}",
        ],
        cwd=course,
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr

    script = slurm.write_array_job(
        toy.ASSIGNMENT,
        list(kinds),
        course,
        tmp_path / "slurm" / "grade-toy.sbatch",
        db_url=url,
        chunk=2,
        exclusive=False,
    )
    job = slurm.submit(script)
    states = slurm_cluster.wait(job, timeout=400)
    logs = {path.name: path.read_text() for path in (tmp_path / "slurm" / "logs").iterdir()}
    assert states == {"0": ("COMPLETED", "0:0"), "1": ("COMPLETED", "0:0")}, (states, logs)

    course_id = "tf-gpu-performance"  # autograde/nbgrader_config.py's
    with Gradebook(url, course_id) as gradebook:
        got = {
            s.student.id: {g.name: g.score for nb in s.notebooks for g in nb.grades}
            for s in gradebook.assignment_submissions(toy.ASSIGNMENT)
        }
    assert got == {
        student: dict(zip(("check_square", "check_total"), map(float, toy.EXPECTED[kind])))
        for student, kind in kinds.items()
    }, logs
