"""tfperf.runtime.preloaded: processes forked from a launcher that imported TensorFlow once, as fresh ones would run."""

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from tests.unit.runtime.processes import all_end, running
from tfperf.runtime import preloaded

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the launcher forks on Linux only")

SCRIPT = textwrap.dedent(
    """
    import os, sys
    print("tensorflow already imported:", "tensorflow" in sys.modules)
    print("argv:", sys.argv[1:], "cwd:", os.getcwd(), "WHO:", os.environ.get("WHO"), "parent:", os.getppid())
    print("stdin:", repr(sys.stdin.read()))
    sys.exit(int(sys.argv[1]))
    """
)


def run(target, fallback, **options):
    process = preloaded.popen(target, fallback, env=dict(os.environ, WHO="child"), **options)
    output = process.stdout.read()
    return process, output, process.wait(timeout=30)


def test_a_script_runs_forked_with_its_arguments_environment_and_exit_status(tmp_path):
    script = tmp_path / "script.py"
    script.write_text(SCRIPT)
    process, output, code = run({"script": str(script), "args": ["3"]}, [sys.executable, str(script), "3"])
    assert code == 3 and process.returncode == 3 and process.poll() == 3
    launcher = preloaded.launcher()
    assert launcher is not None and isinstance(process, preloaded.Child)
    assert "tensorflow already imported: True" in output  # what the launcher imported once
    assert f"argv: ['3'] cwd: {os.getcwd()} WHO: child parent: {launcher.process.pid}" in output
    assert "stdin: ''" in output  # /dev/null
    assert preloaded.launcher_pid() == launcher.process.pid


def test_an_exception_prints_its_traceback_and_ends_with_status_1(tmp_path):
    script = tmp_path / "fails.py"
    script.write_text("raise ValueError('no luck')\n")
    _, output, code = run({"script": str(script), "args": []}, [sys.executable, str(script)])
    assert code == 1 and "ValueError: no luck" in output and "Traceback" in output


def test_a_killed_child_reports_its_signal_and_stdin_is_a_pipe_where_asked(tmp_path):
    script = tmp_path / "reads.py"
    script.write_text(
        "import sys\nprint('ready', flush=True)\nprint('got', sys.stdin.readline().strip(), flush=True)\n"
    )
    process = preloaded.popen(
        {"script": str(script), "args": []}, [sys.executable, str(script)], env=dict(os.environ), stdin=subprocess.PIPE
    )
    assert process.stdout.readline() == "ready\n"
    process.stdin.write("hello\n")
    process.stdin.flush()
    assert process.stdout.readline() == "got hello\n"
    assert process.wait(timeout=30) == 0
    sleeper = tmp_path / "sleeps.py"
    sleeper.write_text("import time\ntime.sleep(600)\n")
    process = preloaded.popen(
        {"script": str(sleeper), "args": []}, [sys.executable, str(sleeper)], env=dict(os.environ)
    )
    with pytest.raises(subprocess.TimeoutExpired):
        process.wait(timeout=0.2)
    process.kill()
    assert process.wait(timeout=30) == -signal.SIGKILL


def test_where_no_launcher_serves_a_fresh_process_runs_it(tmp_path, monkeypatch):
    monkeypatch.setattr(preloaded, "_refused", True)
    script = tmp_path / "script.py"
    script.write_text(SCRIPT)
    process, output, code = run({"script": str(script), "args": ["0"]}, [sys.executable, str(script), "0"])
    assert isinstance(process, subprocess.Popen) and code == 0
    assert "tensorflow already imported: False" in output and f"parent: {os.getpid()}" in output


def test_the_launcher_and_the_children_that_die_with_their_parent_end_with_it(tmp_path):
    sleeper = tmp_path / "sleeps.py"
    sleeper.write_text("import os, time\nprint(os.getpid(), flush=True)\ntime.sleep(600)\n")
    parent = tmp_path / "parent.py"
    parent.write_text(
        textwrap.dedent(
            f"""
            import os, sys, time
            from tfperf.runtime import preloaded
            child = preloaded.popen({{"script": {str(sleeper)!r}, "args": []}}, [], env=dict(os.environ),
                                    die_with_parent=True)
            print(preloaded.launcher_pid(), child.stdout.readline().strip(), flush=True)
            time.sleep(600)
            """
        )
    )
    process = subprocess.Popen([sys.executable, str(parent)], stdout=subprocess.PIPE, text=True)
    try:
        pids = [int(p) for p in process.stdout.readline().split()]
        assert len(pids) == 2 and all(running(pid) for pid in pids)
    finally:
        process.kill()
        process.wait()
    assert all_end(pids)


def test_starting_a_child_takes_a_fraction_of_a_fresh_interpreters_import(tmp_path):
    """What the launcher is for: a child starts with TensorFlow imported. Timed as a ratio in one run: the launcher's
    child against a fresh process that imports TensorFlow, each started and ended three times, interleaved."""
    script = tmp_path / "imports.py"
    script.write_text("import tensorflow\n")
    assert preloaded.launcher() is not None  # started (and its imports paid) before the clock

    def started_and_ended(forked: bool) -> float:
        began = time.perf_counter()
        if forked:
            run({"script": str(script), "args": []}, [])
        else:
            subprocess.run([sys.executable, str(script)], check=True, env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"))
        return time.perf_counter() - began

    pairs = [(started_and_ended(False), started_and_ended(True)) for _ in range(3)]
    ratios = sorted(fresh / forked for fresh, forked in pairs)
    assert ratios[1] > 3, pairs
