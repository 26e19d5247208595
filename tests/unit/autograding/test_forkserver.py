"""The fork server (tfperf.autograding.forkserver): its workers grade as fresh ones do, and what one exercise's
answer does to its process, the sandbox or the server never reaches the next exercise."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time

import pytest

from tfperf.autograding import forkserver, outside

pytestmark = pytest.mark.skipif(not shutil.which("bwrap"), reason="needs bubblewrap")


#: A given cell that makes the server preload TensorFlow and the course (forkserver.needs_the_course), as every
#: chapter's notebook does.
COURSE = "import tfperf.grading"


def graded(answer: str, test: str, *, given: str = "", forked: bool = True, timeout: float = 20) -> outside.Outcome:
    cells = (given, "PLACEHOLDER") if given else ("PLACEHOLDER",)
    # unrestricted: these answers stand for one that got past the restriction, so that the server's own isolation
    # is what is tested
    exercise = outside.Exercise("answer", ("t",), cells, len(cells) - 1, (test,), restricted=False)
    return outside.grade_exercise(exercise, answer, timeout=timeout, sandboxed=True, forked=forked)["t"]


def server_pid() -> int:
    assert outside.forks.server is not None and outside.forks.server.alive()
    return outside.forks.server.process.pid


def test_a_forked_worker_grades_as_a_fresh_one_and_starts_in_a_fraction_of_its_time():
    answer, test = "import tensorflow as tf\nVALUE = float(tf.reduce_sum(tf.ones(3)))", "print(VALUE)"
    started = time.monotonic()
    fresh = graded(answer, test, given=COURSE, forked=False)
    fresh_seconds = time.monotonic() - started
    graded(answer, test, given=COURSE)  # the server starts, if no earlier test started it
    started = time.monotonic()
    forked = graded(answer, test, given=COURSE)
    forked_seconds = time.monotonic() - started
    assert fresh.passed and forked.passed and fresh.printed == forked.printed == "3.0\n"
    assert forked_seconds < fresh_seconds / 3, (forked_seconds, fresh_seconds)


def test_what_an_answer_changes_in_memory_or_in_tmp_is_gone_in_the_next_exercise():
    change = (
        "import tfperf.grading, numpy\n"
        "tfperf.grading.assert_speedup = lambda *a, **k: None\n"
        "open('/tmp/left.txt', 'w').write('from the last answer')\n"
        "open('left.txt', 'w').write('in its folder')\n"
        "DRAWN = numpy.random.rand()"
    )
    first = graded(change, "print(DRAWN)", given=COURSE)  # tfperf.grading preloaded in the server
    look = (
        "import os, tfperf.grading, numpy\n"
        "PATCHED = tfperf.grading.assert_speedup.__name__\n"
        "LEFT = ','.join(sorted(os.listdir('/tmp')) + sorted(os.listdir('.')))\n"
        "DRAWN = numpy.random.rand()"
    )
    second = graded(look, "print(PATCHED, LEFT, DRAWN)", given=COURSE)
    assert first.passed and second.passed
    patched, left, _ = second.printed.split(maxsplit=2)
    assert patched == "assert_speedup" and "left.txt" not in left, second.printed
    assert second.printed.split()[-1] != first.printed.strip()  # NumPy's generator drawn afresh in each child


def test_a_process_an_answer_left_running_is_killed_before_the_next_exercise():
    leave = (
        "import subprocess\n"
        "subprocess.Popen(['sleep', '300'], start_new_session=True)\n"
        "import os\nif os.fork() == 0:\n    os.setsid()\n    import time\n    time.sleep(300)\n    os._exit(0)"
    )
    assert graded(leave, "print('left two')").passed
    look = (
        "import os\n"
        "OTHERS = [p for p in os.listdir('/proc') if p.isdigit() and int(p) not in (1, os.getpid(), os.getppid())]"
    )
    outcome = graded(look, "print(OTHERS)")
    assert outcome.passed and outcome.printed == "[]\n", outcome.printed


def test_an_answer_cannot_reach_the_servers_memory_or_its_control_socket():
    peek = (
        "import os\n"
        "FDS = sorted(int(f) for f in os.listdir('/proc/self/fd'))\n"
        "TRIED = []\n"
        "for path in (f'/proc/{os.getppid()}/mem', f'/proc/{os.getppid()}/fd/3', f'/proc/{os.getppid()}/environ'):\n"
        "    try:\n"
        "        open(path, 'rb').read(1)\n"
        "        TRIED.append('read ' + path)\n"
        "    except OSError as err:\n"
        "        TRIED.append(type(err).__name__)"
    )
    outcome = graded(peek, "print(FDS, TRIED)", given=COURSE)
    assert outcome.passed, outcome.error
    fds, tried = outcome.printed.split("] [")
    assert "read" not in tried, outcome.printed
    # its standard streams, the replies' copy of stdout, and what the listing itself opened: no socket kept
    assert len(eval(fds + "]")) <= 5, outcome.printed


@pytest.mark.parametrize("signal_name", ["SIGKILL", "SIGSTOP"])
def test_an_answer_that_stops_the_server_fails_its_own_exercise_only(signal_name, monkeypatch):
    monkeypatch.setattr(forkserver, "ANSWER_SECONDS", 2)  # a stopped server is given up on after this
    graded("X = 1", "print(X)")
    stop = f"import os, signal\nos.kill(os.getppid(), signal.{signal_name})\nX = 2"
    first = server_pid()
    graded(stop, "print(X)", timeout=5)
    after = graded("X = 3", "print(X)")
    assert after.passed and after.printed == "3\n"
    assert server_pid() != first  # the stopped server was replaced


def test_a_server_whose_imports_started_tensorflow_refuses_to_fork():
    code = (
        "import tensorflow as tf\nfrom tfperf.autograding import forkserver\n"
        "print(forkserver.runtime_started())\ntf.constant(1.0) + 1\nprint(forkserver.runtime_started())"
    )
    lines = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120
    ).stdout.splitlines()
    assert lines == ["None", "TensorFlow's runtime was started while importing"]


def test_another_environment_gets_a_server_of_its_own(monkeypatch):
    graded("X = 1", "print(X)")
    first = server_pid()
    graded("X = 1", "print(X)")
    assert server_pid() == first
    monkeypatch.setenv("TFPERF_AS_ON_GPU", "1")
    outcome = graded("import os\nX = os.environ['TFPERF_AS_ON_GPU']", "print(X)")
    assert outcome.passed and outcome.printed == "1\n"
    assert server_pid() != first
    assert forkserver.PER_EXERCISE == ("TFPERF_RECORD", "TFPERF_TIMED_OUTSIDE")


def test_a_notebook_that_never_imports_the_course_gets_a_server_that_did_not_import_it():
    """TensorFlow's import is about 5 s of a core: a server preloads it only for a notebook whose cells import
    TensorFlow, Keras or the course's library (the instructor's cells decide, not the answer); a server that
    preloaded them serves the other notebooks too."""
    assert not forkserver.needs_the_course(["import json, os\nfrom statistics import median", "from . import x"])
    assert forkserver.needs_the_course(["import numpy", "import tensorflow as tf"])
    assert forkserver.needs_the_course(["from tfperf import grading"]) and forkserver.needs_the_course(["def ("])
    outside.forks.close()
    look = "import sys\nLOADED = 'tensorflow' in sys.modules"
    assert graded(look, "print(LOADED)").printed == "False\n"
    bare = server_pid()
    assert graded("import tensorflow\n" + look, "print(LOADED)").printed == "True\n"  # the child imports it itself
    assert server_pid() == bare  # the answer does not choose the server
    assert graded(look, "print(LOADED)", given=COURSE).printed == "True\n"
    course = server_pid()
    assert course != bare
    assert graded(look, "print(LOADED)").printed == "True\n" and server_pid() == course
