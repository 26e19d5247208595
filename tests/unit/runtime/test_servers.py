"""tfperf.runtime.servers: the tf.data service in processes of its own, on loopback; nothing left running."""

import os
import subprocess
import sys
import time

import pytest

tf = pytest.importorskip("tensorflow")

from tests.unit.runtime.processes import all_end  # noqa: E402
from tfperf.runtime import servers  # noqa: E402


@pytest.mark.slow
def test_two_pinned_workers_serve_every_element_once_and_stop_with_the_block():
    with servers.DataService(workers=2, pinned=True) as service:
        assert service.target.startswith("grpc://localhost:") and service.workers == 2
        pids = service.pids()
        assert len(pids) == 3
        expected = [{core} for core in servers.worker_cores(2)]
        assert service.cores() == expected
        worker = pids[1]  # every thread of a pinned worker, TensorFlow's included, runs on its one core
        threads = [os.sched_getaffinity(int(t)) for t in os.listdir(f"/proc/{worker}/task")]
        assert len(threads) > 1 and all(t == expected[0] for t in threads)
        dataset = tf.data.Dataset.range(200).map(lambda x: x * 2)
        shared = dataset.apply(
            tf.data.experimental.service.distribute(processing_mode="distributed_epoch", service=service.target)
        )
        got = sorted(int(v) for v in shared)
        assert got == [2 * i for i in range(200)]  # each element once, whichever worker made it
    assert all_end(pids, seconds=15.0)


@pytest.mark.slow
def test_a_child_ends_when_its_parent_is_killed(tmp_path):
    """A kernel killed with its servers running leaves nothing behind: each child watches its standard input."""
    script = tmp_path / "parent.py"
    script.write_text(
        "import sys, time\nfrom tfperf.runtime import servers\n"
        "s = servers.DataService(workers=1)\nprint(*s.pids(), flush=True)\ntime.sleep(600)\n"
    )
    parent = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    try:
        pids = [int(p) for p in parent.stdout.readline().split()]
        assert len(pids) == 2
    finally:
        parent.kill()
        parent.wait()
    assert all_end(pids, seconds=15.0)


def test_a_server_that_cannot_start_says_why_and_leaves_nothing(monkeypatch, tmp_path):
    never_ready = tmp_path / "never_ready.py"
    never_ready.write_text("print('no such server'); import time; time.sleep(60)\n")
    # the launcher's child runs _target, a fresh process _argv (where no launcher serves): both never say "ready"
    monkeypatch.setattr(servers, "_target", lambda *args, **kwargs: {"script": str(never_ready), "args": []})
    monkeypatch.setattr(servers, "_argv", lambda *args, **kwargs: [sys.executable, str(never_ready)])
    started = time.monotonic()
    with pytest.raises(servers.ServerFailed, match="did not start within 2 s. It said:\nno such server"):
        servers.DataService(workers=1, timeout=2)
    assert time.monotonic() - started < 15


def test_pinned_workers_take_this_process_cores_in_turn():
    cores = sorted(os.sched_getaffinity(0))
    assert servers.worker_cores(len(cores) + 1) == cores + cores[:1]


def test_at_least_one_worker():
    with pytest.raises(ValueError, match="at least one worker"):
        servers.DataService(workers=0)


def test_a_server_sees_no_gpu_and_keeps_the_parents_log_level():
    env = servers.server_environment({"PATH": "/bin", "TF_CPP_MIN_LOG_LEVEL": "1", "CUDA_VISIBLE_DEVICES": "0"})
    assert env == {"PATH": "/bin", "TF_CPP_MIN_LOG_LEVEL": "1", "CUDA_VISIBLE_DEVICES": "-1", "PYTHONUNBUFFERED": "1"}
    assert servers.server_environment({})["TF_CPP_MIN_LOG_LEVEL"] == "3"
