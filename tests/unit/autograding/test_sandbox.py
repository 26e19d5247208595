"""The sandboxed grading kernel: its command line, its kernelspec, and what the sandbox stops."""

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from tfperf.autograding import sandbox


def _can_sandbox() -> bool:
    try:
        return sandbox.check("print('ok')").stdout.strip() == "ok"
    except (sandbox.SandboxUnavailable, OSError):
        return False


needs_bwrap = pytest.mark.skipif(not _can_sandbox(), reason="bubblewrap cannot create a sandbox here")


@pytest.fixture
def outside_tmp():
    """A scratch folder outside /tmp (the sandbox replaces /tmp with its own)."""
    base = Path.home() / ".cache"
    base.mkdir(exist_ok=True)
    folder = Path(tempfile.mkdtemp(prefix="tfperf-sandbox-test-", dir=base))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def _pairs(argv, flag):
    return [tuple(argv[i + 1 : i + 3]) for i, a in enumerate(argv) if a == flag]


def test_only_the_work_and_runtime_folders_are_writable():
    argv = sandbox.bwrap_argv(
        "/course/autograded/s/a",
        "/run/k",
        ["python"],
        bwrap="bwrap",
        devices=[],
        readable=("/run/k/conn.json",),
        visible=(),
    )
    command = argv[argv.index("--") + 1 :]
    options = argv[: argv.index("--")]
    assert command == ["python"]
    assert _pairs(options, "--ro-bind") == [("/", "/"), ("/run/k/conn.json", "/run/k/conn.json")]
    assert _pairs(options, "--bind") == [("/run/k", "/run/k"), ("/course/autograded/s/a", "/course/autograded/s/a")]
    # the writable folders are bound after /tmp is replaced, so they survive where they lie inside it
    assert options.index("--tmpfs") < options.index("--bind")
    assert {"--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent"} <= set(options)
    assert "--share-net" not in options and _pairs(options, "--cap-drop")[0][0] == "ALL"


def test_gpu_device_nodes_are_passed_through():
    argv = sandbox.bwrap_argv("/w", "/w", ["python"], devices=["/dev/nvidia0", "/dev/nvidiactl"])
    assert ("/dev/nvidia0", "/dev/nvidia0") in _pairs(argv, "--dev-bind")


def test_the_kernel_must_use_ipc(tmp_path):
    connection = tmp_path / "kernel.json"
    connection.write_text(json.dumps({"transport": "tcp", "ip": "127.0.0.1"}))
    with pytest.raises(sandbox.SandboxUnavailable, match="KernelManager.transport"):
        sandbox.ipc_folder(str(connection))
    connection.write_text(json.dumps({"transport": "ipc", "ip": str(tmp_path / "sockets" / "kernel")}))
    assert sandbox.ipc_folder(str(connection)) == str((tmp_path / "sockets").resolve())


def test_missing_bwrap_is_a_clear_error(tmp_path):
    with pytest.raises(sandbox.SandboxUnavailable, match="apt-get install bubblewrap"):
        sandbox.find_bwrap(str(tmp_path / "no-bwrap"))


def test_install_writes_a_kernelspec_that_launches_this_interpreter_sandboxed(tmp_path):
    if not os.access(sandbox.BWRAP, os.X_OK):
        pytest.skip("bubblewrap is not installed")
    folder = sandbox.install(tmp_path, sandbox.Limits(cpu_seconds=60, memory_bytes=2 * sandbox.GIB))
    spec = json.loads((folder / "kernel.json").read_text())
    assert folder == tmp_path / "share" / "jupyter" / "kernels" / sandbox.KERNEL_NAME
    assert spec["argv"][:4] == [sys.executable, "-m", "tfperf.autograding.sandbox", "launch"]
    assert spec["argv"][-1] == "{connection_file}" and "60" in spec["argv"] and str(2 * sandbox.GIB) in spec["argv"]
    assert spec["language"] == "python"


PROBE = r"""
import os, socket, sys
def attempt(what, action):
    try:
        action()
        print(what, "allowed")
    except OSError as e:
        print(what, "refused")
attempt("read_outside", lambda: open(sys.argv[1]).read())
attempt("write_outside", lambda: open(sys.argv[1], "a"))
attempt("write_work", lambda: open("work.txt", "w").write("x"))
attempt("write_tmp", lambda: open("/tmp/SCRATCH", "w").write("x"))
attempt("connect_loopback", lambda: socket.create_connection(("127.0.0.1", int(sys.argv[2])), timeout=2))
attempt("connect_remote", lambda: socket.create_connection(("192.0.2.1", 80), timeout=2))
print("tmp_holds", sorted(os.listdir("/tmp")))
"""


@needs_bwrap
def test_the_sandbox_stops_writes_outside_its_folder_and_every_connection(outside_tmp):
    outside = outside_tmp / "gradebook.db"
    outside.write_text("scores")
    scratch = f"tfperf-probe-{os.getpid()}"
    with socket_listening() as port:
        result = sandbox.check(
            PROBE.replace("sys.argv[1]", repr(str(outside)))
            .replace("sys.argv[2]", str(port))
            .replace("SCRATCH", scratch)
        )
    lines = dict(line.split(" ", 1) for line in result.stdout.splitlines())
    assert lines == {
        "read_outside": "allowed",
        "write_outside": "refused",
        "write_work": "allowed",
        "write_tmp": "allowed",
        "connect_loopback": "refused",
        "connect_remote": "refused",
        "tmp_holds": lines["tmp_holds"],
    }
    assert f"'{scratch}'" in lines["tmp_holds"] and outside.read_text() == "scores"
    assert not (Path("/tmp") / scratch).exists()  # the sandbox's /tmp is its own


class socket_listening:
    """A TCP server on the host's loopback, which the sandbox must not reach."""

    def __enter__(self):
        import socket

        self.server = socket.socket()
        self.server.bind(("127.0.0.1", 0))
        self.server.listen()
        return self.server.getsockname()[1]

    def __exit__(self, *exc):
        self.server.close()


@needs_bwrap
def test_hidden_paths_cannot_be_read_and_the_work_folder_inside_them_stays_writable(outside_tmp):
    course = outside_tmp / "course"
    work = course / "autograded" / "student" / "01"
    work.mkdir(parents=True)
    (course / "autograded" / "other").mkdir()
    (course / "gradebook.db").write_text("scores")
    (course / "nbgrader_config.py").write_text("config")
    code = """
import os
print(sorted(os.listdir("../..")), open("../../../nbgrader_config.py").read())
try:
    print(open("../../../gradebook.db").read())
except OSError as error:
    print(type(error).__name__)
open("answer.txt", "w").write("mine")
try:
    open("../../x", "w")
except OSError as error:
    print(type(error).__name__)
"""
    result = sandbox.check(code, workdir=str(work), hidden=(str(course / "gradebook.db"), str(course / "autograded")))
    assert result.stdout.split("\n")[:3] == ["['student'] config", "PermissionError", "OSError"], result
    assert (work / "answer.txt").read_text() == "mine" and (course / "gradebook.db").read_text() == "scores"
    assert not (course / "autograded" / "x").exists()


@needs_bwrap
def test_memory_and_cpu_limits():
    limits = sandbox.Limits(cpu_seconds=2, memory_bytes=1 * sandbox.GIB)
    big = sandbox.check("bytearray(2 * 1024**3)", limits)
    assert big.returncode == 1 and "MemoryError" in big.stderr
    start = time.monotonic()
    spin = sandbox.check("while True: pass", limits)
    assert spin.returncode == 128 + signal.SIGXCPU and time.monotonic() - start < 60, spin  # bwrap reports 128 + signal


@needs_bwrap
def test_a_sandboxed_kernel_talks_over_ipc_and_can_be_interrupted(tmp_path, monkeypatch):
    from jupyter_client.manager import KernelManager

    sandbox.install(tmp_path / "prefix")
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "prefix" / "share" / "jupyter"))
    work = tmp_path / "work"
    work.mkdir()
    (tmp_path / "sockets").mkdir()
    km = KernelManager(kernel_name=sandbox.KERNEL_NAME, transport="ipc", ip=str(tmp_path / "sockets" / "kernel"))
    km.start_kernel(cwd=str(work))
    kc = km.client()
    kc.start_channels()
    try:
        kc.wait_for_ready(timeout=60)
        assert _run(kc, "import os; print(os.getcwd())") == f"{work}\n"
        kc.execute("while True: pass")
        time.sleep(1)
        km.interrupt_kernel()
        time.sleep(1)
        assert _run(kc, "print('still here')") == "still here\n" and km.is_alive()
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def _run(kc, code: str) -> str:
    msg_id = kc.execute(code)
    out = []
    while True:
        msg = kc.get_iopub_msg(timeout=60)
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        if msg["msg_type"] == "stream":
            out.append(msg["content"]["text"])
        if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
            return "".join(out)


@needs_bwrap
def test_code_under_tmp_stays_importable_and_the_rest_of_tmp_stays_hidden(tmp_path, monkeypatch):
    """The sandbox replaces /tmp by its own: a course checked out (or an environment made) under /tmp
    keeps its code, read-only, and nothing else of the host's /tmp shows; hidden folders inside it stay hidden."""
    lib = tmp_path / "checkout" / "src"
    (lib / "answers").mkdir(parents=True)
    (lib / "course_lib_in_tmp.py").write_text("VALUE = 42\n")
    (lib / "answers" / "key.txt").write_text("secret")
    (tmp_path / "elsewhere.txt").write_text("not code")
    monkeypatch.setattr(sys, "path", [str(lib), *sys.path])
    assert str(lib) in sandbox.code_folders_in_tmp() and "/tmp" not in sandbox.code_folders_in_tmp()
    code = (
        f"import os, sys; sys.path.insert(0, {str(lib)!r}); import course_lib_in_tmp; "
        f"print(course_lib_in_tmp.VALUE, os.listdir({str(lib / 'answers')!r}), "
        f"os.path.exists({str(tmp_path / 'elsewhere.txt')!r}))\n"
        f"open({str(lib / 'course_lib_in_tmp.py')!r}, 'a').write('VALUE = 0')"
    )
    result = sandbox.check(code, hidden=(str(lib / "answers"),))
    assert result.stdout == "42 [] False\n", result
    assert "Read-only file system" in result.stderr and (lib / "course_lib_in_tmp.py").read_text() == "VALUE = 42\n"


@needs_bwrap
def test_check_prints_one_clear_verdict_and_nothing_of_tensorflows_logs():
    env = {k: v for k, v in os.environ.items() if k != "TF_CPP_MIN_LOG_LEVEL"}  # as from a fresh shell
    result = subprocess.run(
        [sys.executable, "-m", "tfperf.autograding.sandbox", "check"],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stderr == ""
    (line,) = result.stdout.splitlines()
    assert line.startswith("The grading sandbox works: TensorFlow ") and "/device:CPU:0" in line, line

    try:
        sandbox.landlock_abi()
        assert line.endswith("), confined by Landlock as the workers are."), line
    except sandbox.LandlockUnavailable:  # a kernel without it: said, and grading goes on
        assert line.endswith("the workers run without it (their memory readable through /proc)."), line


def test_a_failed_check_says_what_went_wrong_without_tensorflows_noise():
    noise = (
        "WARNING: All log messages before absl::InitializeLog() is called are written to STDERR\n"
        "I0000 00:00:1795494165.438051       2 port.cc:153] oneDNN custom operations are on.\n"
    )
    failed = subprocess.CompletedProcess(
        [], 1, "", noise + "Traceback (most recent call last):\nImportError: libfoo.so\n"
    )
    works, verdict = sandbox.check_verdict(failed)
    assert not works
    assert verdict == "The grading sandbox does not work: TensorFlow failed inside it (exit 1): ImportError: libfoo.so"


def test_the_tensorflow_check_grows_gpu_memory_before_the_gpus_first_use_as_the_kernel_does():
    """Without growth, the check's first GPU use aborted under the kernel's memory limit on an H200 (143771 MiB)."""
    check = sandbox.TF_CHECK
    assert "set_memory_growth(gpu, True)" in check
    assert check.index("set_memory_growth") < check.index("list_logical_devices") < check.index("tf.random")
