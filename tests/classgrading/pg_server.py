"""A real, throw-away PostgreSQL server on loopback, for tests of the PostgreSQL gradebook.

It uses the server binaries of Debian's ``postgresql`` package (``/usr/lib/postgresql/<version>/bin``;
``.ci/run`` installs it). PostgreSQL refuses to run as root: as root, the server runs as the ``postgres``
user the package creates (``runuser``); as anyone else, as that user. Data, socket and log live in a
temporary folder that :meth:`PostgresServer.stop` removes.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

SERVER_USER = "postgres"  # the system account Debian's package creates
SUPERUSER = "grader"  # the database role the tests connect as (password authentication)


def find_binaries() -> Path | None:
    """The newest ``/usr/lib/postgresql/<version>/bin`` that has ``initdb`` and ``pg_ctl``, or None."""
    found = [
        bindir
        for bindir in Path("/usr/lib/postgresql").glob("*/bin")
        if (bindir / "initdb").is_file() and (bindir / "pg_ctl").is_file()
    ]
    return max(found, key=lambda bindir: int(bindir.parent.name), default=None) if found else None


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class PostgresServer:
    """``start()`` a server on 127.0.0.1 at a free port; ``url(db)`` for SQLAlchemy; ``stop()`` removes it all."""

    def __init__(self, bindir: Path):
        self.bindir = bindir
        self.password = secrets.token_hex(12)
        self.port: int | None = None
        self.folder: Path | None = None

    def _run_as_server_user(self, *command: str, **kwargs) -> subprocess.CompletedProcess:
        prefix = ["runuser", "-u", SERVER_USER, "--"] if os.geteuid() == 0 else []
        return subprocess.run([*prefix, *command], check=True, capture_output=True, text=True, **kwargs)

    def start(self, attempts: int = 3) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="tfperf-pg-"))
        data, password_file = self.folder / "data", self.folder / "password"
        password_file.write_text(self.password)
        if os.geteuid() == 0:
            shutil.chown(self.folder, SERVER_USER)
            shutil.chown(password_file, SERVER_USER)
        self._run_as_server_user(
            str(self.bindir / "initdb"),
            "-D",
            str(data),
            "-U",
            SUPERUSER,
            "--pwfile",
            str(password_file),
            "--auth",
            "scram-sha-256",
            "-E",
            "UTF8",
            "--no-instructions",
        )
        for attempt in range(attempts):  # the free port may be taken between probing and binding it
            self.port = free_port()
            options = (
                f"-c listen_addresses=127.0.0.1 -p {self.port} -c unix_socket_directories={self.folder}"
                " -c max_connections=100 -c fsync=off"
            )
            try:
                self._run_as_server_user(
                    str(self.bindir / "pg_ctl"),
                    "-D",
                    str(data),
                    "-l",
                    str(self.folder / "server.log"),
                    "-o",
                    options,
                    "-w",
                    "-t",
                    "60",
                    "start",
                )
                return
            except subprocess.CalledProcessError:
                if attempt == attempts - 1:
                    raise RuntimeError(f"PostgreSQL did not start:\n{self.log()}") from None

    def log(self) -> str:
        path = self.folder / "server.log" if self.folder else None
        return path.read_text(errors="replace") if path and path.exists() else ""

    def url(self, database: str = "postgres") -> str:
        """SQLAlchemy URL with the psycopg (version 3) driver."""
        return f"postgresql+psycopg://{SUPERUSER}:{self.password}@127.0.0.1:{self.port}/{database}"

    def create_database(self, name: str) -> str:
        import psycopg

        with psycopg.connect(
            host="127.0.0.1", port=self.port, user=SUPERUSER, password=self.password, dbname="postgres", autocommit=True
        ) as connection:
            connection.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def stop(self) -> None:
        if self.folder is None:
            return
        data = self.folder / "data"
        if (data / "postmaster.pid").exists():
            try:
                self._run_as_server_user(str(self.bindir / "pg_ctl"), "-D", str(data), "-m", "fast", "-w", "stop")
            except subprocess.CalledProcessError:  # then stop the postmaster by its process id
                pid = int((data / "postmaster.pid").read_text().split()[0])
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGQUIT)
                time.sleep(1)
        shutil.rmtree(self.folder, ignore_errors=True)
        self.folder = None


@pytest.fixture(scope="module")
def postgres():
    """A running server for the tests of one module (import this fixture into it)."""
    bindir = find_binaries()
    if bindir is None:
        pytest.skip(
            "PostgreSQL's server binaries (/usr/lib/postgresql/*/bin) are not installed: "
            "apt-get install postgresql (.ci/run does)"
        )
    server = PostgresServer(bindir)
    try:
        server.start()
        yield server
    finally:
        server.stop()
