"""A throw-away single-node Slurm cluster on this machine, for tests of the Slurm path.

Debian's ``slurm-wlm`` (``slurmctld`` and ``slurmd`` 22.05; ``.ci/run`` installs it) started in the
foreground from a minimal ``slurm.conf`` in a temporary folder: the controller and the one node on
127.0.0.1 at free ports, no accounting, no cgroups (``proctrack/pgid``, ``task/none``), and
``auth/none`` + ``cred/none`` so that no munge daemon or key is needed (fine on one machine, never on
a real cluster). ``slurmd`` starts jobs as the user who submits them, so it runs as root: the fixture
skips as any other user. Clients (``sbatch``, ``squeue``, ``scontrol``) find it through ``SLURM_CONF``.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

DAEMONS = ("slurmctld", "slurmd", "sbatch", "squeue", "scontrol", "sinfo")
NODE = "localnode"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class SlurmCluster:
    def __init__(self):
        self.folder = Path(tempfile.mkdtemp(prefix="tfperf-slurm-"))
        self.conf = self.folder / "slurm.conf"
        self.daemons: list[subprocess.Popen] = []

    def write_conf(self) -> None:
        (self.folder / "state").mkdir()
        (self.folder / "spool").mkdir()
        host = socket.gethostname().split(".")[0]
        self.conf.write_text(
            "\n".join(
                [
                    "ClusterName=tfperf-test",
                    f"SlurmctldHost={host}(127.0.0.1)",  # slurmctld must find its own host name here
                    "SlurmUser=root",
                    f"SlurmctldPort={free_port()}",
                    f"SlurmdPort={free_port()}",
                    f"StateSaveLocation={self.folder / 'state'}",
                    f"SlurmdSpoolDir={self.folder / 'spool'}",
                    f"SlurmctldPidFile={self.folder / 'slurmctld.pid'}",
                    f"SlurmdPidFile={self.folder / 'slurmd.pid'}",
                    f"SlurmctldLogFile={self.folder / 'slurmctld.log'}",
                    f"SlurmdLogFile={self.folder / 'slurmd.log'}",
                    "AuthType=auth/none",
                    "CredType=cred/none",
                    "MailProg=/bin/true",
                    "ProctrackType=proctrack/pgid",
                    "TaskPlugin=task/none",
                    "SelectType=select/cons_tres",
                    "SelectTypeParameters=CR_CPU",
                    "ReturnToService=2",
                    "MpiDefault=none",
                    "SwitchType=switch/none",
                    "JobAcctGatherType=jobacct_gather/none",
                    "AccountingStorageType=accounting_storage/none",
                    "SchedulerType=sched/builtin",
                    "MinJobAge=600",  # finished jobs stay visible to scontrol for the test
                    f"NodeName={NODE} NodeHostname={host} NodeAddr=127.0.0.1 CPUs={os.cpu_count()} RealMemory=500"
                    " State=UNKNOWN",
                    f"PartitionName=debug Nodes={NODE} Default=YES MaxTime=INFINITE State=UP",
                ]
            )
            + "\n"
        )

    def client(self, *command: str) -> str:
        done = subprocess.run(
            command, capture_output=True, text=True, env={**os.environ, "SLURM_CONF": str(self.conf)}, timeout=60
        )
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(command)}: {done.stderr.strip()}\n{self.logs()}")
        return done.stdout

    def start(self, timeout: float = 60) -> None:
        self.write_conf()
        for command in (
            ["slurmctld", "-D", "-i", "-f", str(self.conf)],
            ["slurmd", "-D", "-f", str(self.conf), "-N", NODE],
        ):
            self.daemons.append(
                subprocess.Popen(
                    command,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    env={**os.environ, "SLURM_CONF": str(self.conf)},
                )
            )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if any(daemon.poll() is not None for daemon in self.daemons):
                raise RuntimeError(f"a Slurm daemon exited at start:\n{self.logs()}")
            try:
                if self.client("sinfo", "-h", "-n", NODE, "-o", "%T").strip() == "idle":
                    return
            except RuntimeError:
                pass  # the controller is not listening yet
            time.sleep(0.5)
        raise RuntimeError(f"the Slurm node did not become idle in {timeout} s:\n{self.logs()}")

    def wait(self, job_id: str, timeout: float) -> dict[str, tuple[str, str]]:
        """Wait until the job's tasks have all left the queue; ``{array task id: (state, exit code)}``."""
        deadline = time.monotonic() + timeout
        while self.client("squeue", "-h", "-j", job_id, "-o", "%i").strip():
            if time.monotonic() > deadline:
                raise TimeoutError(f"job {job_id} still queued or running after {timeout} s:\n{self.logs()}")
            time.sleep(1)
        states = {}
        for line in self.client("scontrol", "-o", "show", "job", job_id).splitlines():
            fields = dict(field.split("=", 1) for field in line.split() if "=" in field)
            states[fields["ArrayTaskId"]] = (fields["JobState"], fields["ExitCode"])
        return states

    def logs(self) -> str:
        return "\n".join(
            f"--- {path.name}\n{path.read_text(errors='replace')[-3000:]}" for path in sorted(self.folder.glob("*.log"))
        )

    def stop(self) -> None:
        if self.daemons and all(daemon.poll() is None for daemon in self.daemons):
            jobs = self.client("squeue", "-h", "-o", "%A").split()  # this private cluster's jobs only
            if jobs:
                self.client("scancel", *set(jobs))
                time.sleep(2)
        for daemon in reversed(self.daemons):
            daemon.terminate()
            try:
                daemon.wait(timeout=20)
            except subprocess.TimeoutExpired:
                daemon.kill()
                daemon.wait()
        shutil.rmtree(self.folder, ignore_errors=True)


@pytest.fixture(scope="module")
def slurm_cluster():
    """A running single-node cluster; ``SLURM_CONF`` points this process's clients (``submit``) at it."""
    missing = [name for name in DAEMONS if shutil.which(name) is None]
    if missing:
        pytest.skip(f"Slurm is not installed ({', '.join(missing)} missing): apt-get install slurm-wlm (.ci/run does)")
    if os.geteuid() != 0:
        pytest.skip("slurmd starts jobs as their submitter and must run as root; this test runs as another user")
    cluster = SlurmCluster()
    with pytest.MonkeyPatch.context() as patch:
        try:
            cluster.start()
            patch.setenv("SLURM_CONF", str(cluster.conf))
            yield cluster
        finally:
            cluster.stop()
