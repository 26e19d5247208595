"""``grade --slurm`` hands the students still to grade to tfperf.classgrading.slurm (written on the cluster branch)."""

import pytest

from tests.classgrading import toy
from tfperf import cli

slurm = pytest.importorskip("tfperf.classgrading.slurm")


def test_slurm_gets_the_students_left_to_grade(toy_course, monkeypatch):
    for student in ("ann", "bob"):
        toy.submit(toy_course, student, toy.variant("reference", toy.released(toy_course)))
    calls = []

    def write_array_job(assignment, students, course_dir, out, *, db_url, **kwargs):
        calls.append((assignment, students, course_dir, db_url))
        out.write_text("#!/bin/bash\n")
        return out

    monkeypatch.setattr(slurm, "write_array_job", write_array_job)
    code = cli.main(["grade", toy.ASSIGNMENT, "--course", str(toy_course), "--slurm", "--db-url", "postgresql://x/y"])
    assert code == 0
    assert calls == [(toy.ASSIGNMENT, ["ann", "bob"], toy_course.resolve(), "postgresql://x/y")]


def test_the_tasks_grade_as_the_command_was_asked_to(toy_course):
    """--force, --execute-timeout, --cores-per-job and --reference reach every task's `tfperf grade` (a task without --force
    would skip a student queued again); --chunk, --gpus-per-task, --max-running and --sbatch shape the job."""
    import shlex

    for student in ("ann", "bob", "cy"):
        toy.submit(toy_course, student, toy.variant("reference", toy.released(toy_course)))
    code = cli.main(
        [
            "grade",
            toy.ASSIGNMENT,
            "--course",
            str(toy_course),
            "--slurm",
            "--db-url",
            "postgresql://x/y",
            "--force",
            "--execute-timeout",
            "300",
            "--cores-per-job",
            "2",
            "--chunk",
            "2",
            "--gpus-per-task",
            "1",
            "--max-running",
            "4",
            "--sbatch=--partition=gpu",
            "--reference",
            "solution-run",
        ]
    )
    assert code == 0
    script = (toy_course / "slurm" / f"grade-{toy.ASSIGNMENT}.sbatch").read_text().splitlines()
    options = [line.removeprefix("#SBATCH ") for line in script if line.startswith("#SBATCH ")]
    assert {"--array=0-1%4", "--gres=gpu:1", "--partition=gpu"} <= set(options) and "--exclusive" not in options
    command = shlex.split(next(line for line in script if line.startswith("exec ")))
    assert command[-9:] == [
        *("--jobs", "1", "--force", "--execute-timeout", "300", "--cores-per-job", "2"),
        *("--reference", "solution-run"),
    ]
    assert command[command.index("--db-url") + 1] == "postgresql://x/y"


@pytest.mark.parametrize(
    "flag", [["--chunk", "2"], ["--gpus-per-task", "1"], ["--max-running", "3"], ["--sbatch=--partition=gpu"]]
)
def test_slurm_options_need_slurm(toy_course, flag):
    with pytest.raises(SystemExit) as raised:
        cli.main(["grade", toy.ASSIGNMENT, "--course", str(toy_course), *flag])
    assert raised.value.code == 2
