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
