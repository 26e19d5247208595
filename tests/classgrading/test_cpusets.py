"""Disjoint CPU sets for parallel graders (tfperf.classgrading.cpusets)."""

import os
import subprocess
import sys

import pytest

from tfperf.classgrading import cpusets


def fake_topology(tmp_path, siblings: dict[int, str]):
    for cpu, text in siblings.items():
        folder = tmp_path / f"cpu{cpu}" / "topology"
        folder.mkdir(parents=True)
        (folder / "thread_siblings_list").write_text(text + "\n")
    return tmp_path


def test_cpu_list_format():
    assert cpusets.parse_cpu_list("0-2,5,7-8") == [0, 1, 2, 5, 7, 8]
    assert cpusets.parse_cpu_list("3") == [3]


def test_smt_siblings_stay_in_one_set(tmp_path):
    sys_cpu = fake_topology(tmp_path, {0: "0,4", 1: "1,5", 2: "2,6", 3: "3,7", 4: "0,4", 5: "1,5", 6: "2,6", 7: "3,7"})
    cores = cpusets.physical_cores(list(range(8)), sys_cpu)
    assert cores == [(0, 4), (1, 5), (2, 6), (3, 7)]
    assert cpusets.core_sets(cores, 2) == [(0, 4, 1, 5), (2, 6, 3, 7)]
    plan = cpusets.plan(4, 1, cpus=list(range(8)), gpus=[], sys_cpu=sys_cpu)
    assert [s.cpus for s in plan.slots] == [(0, 4), (1, 5), (2, 6), (3, 7)]
    assert any("take every core" in n for n in plan.notes)  # no core left over: a warning
    assert not cpusets.plan(3, 1, cpus=list(range(8)), gpus=[], sys_cpu=sys_cpu).notes
    sets = [set(s.cpus) for s in plan.slots]
    assert all(a.isdisjoint(b) for i, a in enumerate(sets) for b in sets[i + 1 :])


def test_never_more_jobs_than_disjoint_sets(tmp_path):
    sys_cpu = fake_topology(tmp_path, {0: "0", 1: "1"})
    plan = cpusets.plan(4, 1, cpus=[0, 1], gpus=[], sys_cpu=sys_cpu)
    assert [s.cpus for s in plan.slots] == [(0,), (1,)]
    assert "only 2 disjoint set(s)" in plan.notes[0] and "take every core" in plan.notes[1]
    plan = cpusets.plan(2, 2, cpus=[0, 1], gpus=[], sys_cpu=sys_cpu)
    assert [s.cpus for s in plan.slots] == [(0, 1)] and plan.notes


def test_one_job_keeps_every_cpu(tmp_path):
    plan = cpusets.plan(1, 1, cpus=[0, 1, 2], gpus=[], sys_cpu=fake_topology(tmp_path, {}))
    assert [s.cpus for s in plan.slots] == [(0, 1, 2)] and not plan.notes


def test_one_grader_per_gpu(tmp_path):
    sys_cpu = fake_topology(tmp_path, {i: str(i) for i in range(8)})
    plan = cpusets.plan(8, 2, cpus=list(range(8)), gpus=["0", "1"], sys_cpu=sys_cpu)
    assert [(s.cpus, s.gpu) for s in plan.slots] == [((0, 1), "0"), ((2, 3), "1")]
    assert plan.slots[1].env() == {"CUDA_VISIBLE_DEVICES": "1"}
    assert any("one grader per GPU" in n for n in plan.notes)


def test_visible_gpus_follow_cuda_visible_devices(monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "2,3")
    assert cpusets.visible_gpus() == ["2", "3"]
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "-1")
    assert cpusets.visible_gpus() == []


PRINT_AFFINITY = [sys.executable, "-c", "import os; print(sorted(os.sched_getaffinity(0)))"]


@pytest.mark.parametrize("with_taskset", [True, False])
def test_a_grader_runs_pinned_to_its_slot(monkeypatch, with_taskset):
    cpu = max(os.sched_getaffinity(0))
    slot = cpusets.Slot((cpu,))
    if not with_taskset:
        monkeypatch.setattr(cpusets, "has_taskset", lambda: False)
    elif not cpusets.has_taskset():
        pytest.skip("taskset is not installed")
    argv = slot.argv(PRINT_AFFINITY)
    out = subprocess.run(
        argv, capture_output=True, text=True, check=True, preexec_fn=None if with_taskset else slot.pin
    ).stdout
    assert out.strip() == str([cpu])
    assert (argv[0] == "taskset") == with_taskset
