"""Grades decided outside the kernel (tfperf.autograding.outside): what a worker runs, and what its
process can and cannot make the grading process believe. Small cells, no TensorFlow: seconds."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import nbformat
import pytest

from tests.conftest import REPO
from tfperf.autograding import outside
from tfperf.grading.messages import OUTSIDE

#: As nbgrader runs it: in the grading sandbox (the other tests run the worker plain, for speed).
SANDBOXED = pytest.mark.parametrize(
    "sandboxed",
    [pytest.param(True, marks=pytest.mark.skipif(not shutil.which("bwrap"), reason="needs bubblewrap"))],
    ids=["sandboxed"],
)

GIVEN = "def slow_square(x):\n    return x * x"
TESTS = (
    "assert square(3) == slow_square(3), square(3)\nprint('checked 3')",
    "assert square(2) == 4\nprint('checked 2')",
)


def toy_exercise(restricted: bool = True) -> outside.Exercise:
    """``restricted=False``: the answer stands for one that got past the restriction (tfperf.autograding.restricted),
    so that what is tested is the layer behind it."""
    return outside.Exercise(
        answer="answer",
        tests=("t1", "t2"),
        cells=(GIVEN, "PLACEHOLDER"),
        answer_position=1,
        test_sources=TESTS,
        restricted=restricted,
    )


def grade(
    answer: str, *, sandboxed: bool = False, timeout: float = 10, restricted: bool = True
) -> dict[str, outside.Outcome]:
    return outside.grade_exercise(toy_exercise(restricted), answer, timeout=timeout, sandboxed=sandboxed)


@SANDBOXED
def test_a_right_answer_passes_with_what_its_checks_printed(sandboxed):
    outcomes = grade("def square(x):\n    return x ** 2", sandboxed=sandboxed)
    assert [o.passed for o in outcomes.values()] == [True, True]
    assert outcomes["t1"].printed == "checked 3\n"
    assert [o.output_type for o in outcomes["t1"].outputs()] == ["stream"]


def test_a_wrong_answer_fails_with_the_checks_error():
    outcomes = grade("def square(x):\n    return x + x")
    assert outcomes["t1"].error["ename"] == "AssertionError" and outcomes["t1"].error["evalue"] == "6"
    assert outcomes["t2"].passed  # 2 + 2 == 4: this check alone cannot tell
    assert outcomes["t1"].outputs()[-1].output_type == "error"


def test_an_answer_that_raises_is_named_under_the_failed_check():
    outcomes = grade("raise ValueError('half done')\ndef square(x):\n    return x * x")
    assert outcomes["t1"].error["ename"] == "NameError"
    assert "The answer cell raised ValueError: half done" in outcomes["t1"].printed


@SANDBOXED
def test_a_forged_report_is_not_believed(sandboxed):
    """The answer writes "passed" reports into every file descriptor it can: without the key the grading
    process drew, the worker's word is not taken, and both checks fail."""
    forge = (
        "import os, json, struct\n"
        "def square(x):\n    return 0\n"
        "for fd in range(3, 64):\n"
        "    for test in ('t1', 't2'):\n"
        "        body = json.dumps({'key': '0' * 32, 'test': test, 'printed': '', 'error': None}).encode()\n"
        "        try:\n"
        "            os.write(fd, struct.pack('>II', len(body), 0) + body)\n"
        "        except OSError:\n"
        "            pass\n"
    )
    outcomes = grade(forge, sandboxed=sandboxed, restricted=False)
    assert not any(o.passed for o in outcomes.values())
    assert "did not write" in outcomes["t1"].error["evalue"] + outcomes["t2"].error["evalue"]
    # restricted, as answers run, it cannot write at all
    refused = grade(forge, sandboxed=sandboxed)["t1"]
    assert "importing json is not allowed" in refused.printed, refused.printed


def forged_with_the_key(monkeypatch, square: str, reports: str) -> dict[str, outside.Outcome]:
    """The outcomes of an answer (unrestricted) that defines ``square`` and writes ``reports`` (a Python expression:
    a list of report dicts), each with the key, into every descriptor it can: the key is made known to it, as if
    read from its process's memory."""
    drawn = iter(["k" * 32])
    real = outside.secrets.token_hex
    monkeypatch.setattr(outside.secrets, "token_hex", lambda n: next(drawn, None) or real(n))
    forge = (
        f"import os, json, struct\ndef square(x):\n    return {square}\nframes = b''\n"
        f"for report in {reports}:\n"
        "    body = json.dumps({'key': 'k' * 32, **report}).encode()\n"
        "    frames += struct.pack('>II', len(body), 0) + body\n"
        "for fd in range(3, 64):\n"
        "    try:\n"
        "        os.write(fd, frames)\n"
        "    except OSError:\n"
        "        pass\n"
    )
    return grade(forge, restricted=False)


def test_reports_forged_with_the_key_and_in_order_are_found_by_the_token_drawn_after_them(monkeypatch):
    """An answer that got past the restriction and read the key from its process's memory writes a whole passing
    report, in order, ahead of the worker's own (cell 0's was sent before the answer ran): the token the grading
    process draws once ``finished`` came is then answered by the worker's leftover reports, not by its echo, and
    no check counts."""
    reports = (
        "[{'cell': 1, 'error': None}] + [{'test': t, 'printed': '', 'error': None} for t in ('t1', 't2')]"
        " + [{'finished': True}]"
    )
    outcomes = forged_with_the_key(monkeypatch, "0", reports)
    assert not any(o.passed for o in outcomes.values())
    assert "not all its own" in outcomes["t1"].error["evalue"], outcomes["t1"].error


def test_reports_out_of_order_are_not_believed(monkeypatch):
    """A report with the key, for the second check, written while the answer runs: it comes where the answer's
    own report was due."""
    outcomes = forged_with_the_key(monkeypatch, "x * x", "[{'test': 't2', 'printed': '', 'error': None}]")
    assert not any(o.passed for o in outcomes.values())
    assert "came out of order" in outcomes["t1"].error["evalue"], outcomes["t1"].error
    assert outside._report_order(2, ("t1", "t2")) == [
        ("cell", 0), ("cell", 1), ("test", "t1"), ("test", "t2"), ("finished", True)
    ]  # fmt: skip
    assert outside._report_order(2, ("t1",), answer=1) == [
        ("cell", 0), ("held", 1), ("cell", 1), ("test", "t1"), ("finished", True)
    ]  # fmt: skip


def test_the_instructors_test_cells_keep_pythons_builtins_after_a_restricted_answer(tmp_path):
    """The answer runs without ``open``; the test cells after it (the instructor's) still have it, and the answer's
    functions they call still do not."""
    test = (
        f"with open({str(tmp_path / 'seen.txt')!r}, 'w') as f:\n    f.write(str(square(3)))\n"
        "try:\n    leaks()\nexcept NameError as err:\n    print('refused:', err)"
    )
    exercise = outside.Exercise("answer", ("t",), (GIVEN, "PLACEHOLDER"), 1, (test,))
    answer = "def square(x):\n    return x * x\ndef leaks():\n    return open('/etc/hostname')"
    (outcome,) = outside.grade_exercise(exercise, answer, timeout=10, sandboxed=False).values()
    assert outcome.passed, outcome.error
    assert (tmp_path / "seen.txt").read_text() == "9"
    assert "refused: name 'open' is not defined" in outcome.printed


def test_an_answer_that_ends_its_process_fails_its_checks():
    outcomes = grade("import os\nos._exit(0)", restricted=False)
    assert not any(o.passed for o in outcomes.values())
    assert "stopped" in outcomes["t1"].error["evalue"]


def test_an_endless_check_is_stopped_at_the_time_limit():
    outcomes = grade("def square(x):\n    while True:\n        pass", timeout=2)
    assert "ran past the time limit (2 s)" in outcomes["t1"].error["evalue"]


def test_no_ipython_to_hook_and_the_instructors_tests_run():
    """An answer that registers an AST transformer in the kernel finds no kernel here; the test cells
    are the instructor's sources, whatever the submitted notebook says."""
    hook = "def square(x):\n    return 0\nimport IPython\nIPython.get_ipython().ast_transformers.append(None)"
    outcomes = grade(hook, restricted=False)
    assert outcomes["t1"].error["ename"] == "AssertionError"
    assert "AttributeError" in outcomes["t1"].printed  # get_ipython() is None outside a kernel


@SANDBOXED
def test_the_workers_record_reaches_the_report_as_json_rows_only(tmp_path, sandboxed):
    record = tmp_path / "record.jsonl"
    answer = (
        "import os\ndef square(x):\n    return x * x\n"
        "with open(os.environ['TFPERF_RECORD'], 'a') as f:\n"
        '    f.write(\'{"exercise": "e", "ratios": [2.0]}\\nnot json\\n[1]\\n\')'
    )
    outside.grade_exercise(toy_exercise(restricted=False), answer, timeout=10, sandboxed=sandboxed, record=record)
    assert record.read_text() == '{"exercise": "e", "ratios": [2.0]}\n'


def test_a_chapters_exercises_run_the_instructors_cells_with_one_answer():
    source = nbformat.read(REPO / "solutions" / "01_tensors" / "tensors_and_devices.ipynb", as_version=4)
    found = outside.instructor_exercises(source)
    assert [(e.answer, e.tests) for e in found][:2] == [
        ("weighted_mean", ("weighted_mean_tests",)),
        ("row_scores", ("row_scores_tests",)),
    ]
    assert found[2].answer == "concepts" and len(found[2].tests) == 4  # one answer cell, a test cell per question
    first, second = found[:2]
    assert "### BEGIN HIDDEN TESTS" in second.test_sources[0]  # the instructor's test cell, hidden part too
    program = second.program("MY ANSWER")
    assert program[second.answer_position] == "MY ANSWER"
    assert first.program("X")[first.answer_position] == "X"
    # the earlier exercise's answer is the reference's, and no test cell is among the cells
    reference = next(
        c.source for c in source.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "weighted_mean"
    )
    assert reference in program
    assert not any("grading." in cell and "assert" in cell and "### BEGIN HIDDEN" in cell for cell in program)


@pytest.mark.skipif(not shutil.which("bwrap"), reason="needs bubblewrap")
def test_a_worker_cannot_read_what_the_configuration_hides(tmp_path, monkeypatch):
    # outside /tmp, which the sandbox replaces by its own anyway
    secret = Path(tempfile.mkdtemp(dir=REPO / "test-artifacts")) / "solutions"
    secret.mkdir()
    (secret / "answer.txt").write_text("the reference")
    monkeypatch.setenv(outside.sandbox.HIDE_ENV, str(secret))
    assert outside.sandbox.hidden_paths() == (str(secret),)
    argv = outside.worker_argv(str(tmp_path / "work"))
    assert argv[argv.index(str(secret)) - 1] == "--tmpfs"  # an empty stand-in, read-only
    peek = f"try:\n    LEAK = open({str(secret / 'answer.txt')!r}).read()\nexcept OSError as err:\n    LEAK = repr(err)"
    exercise = outside.Exercise("answer", ("t",), ("PLACEHOLDER",), 0, ("print(LEAK)",), restricted=False)
    (outcome,) = outside.grade_exercise(exercise, peek, timeout=10, sandboxed=True).values()
    assert outcome.passed and "the reference" not in outcome.printed and "Error" in outcome.printed
    shutil.rmtree(secret.parent)


def test_an_error_the_grading_process_cannot_read_is_still_an_error():
    assert outside._error(None) is None
    assert outside._error(["not", "a", "dict"])["ename"] == outside.OUTSIDE
    odd = outside._error({"ename": 3, "traceback": "one string"})
    assert odd == {"ename": "3", "evalue": "", "traceback": []}
    assert [o.output_type for o in outside.Outcome(error=odd).outputs()] == ["error"]


# ---------------------------------------------------------------- speed checks timed from the grading process

SPEED_GIVEN = (
    "import time\nimport numpy as np\nfrom tfperf import grading\n"
    "def slow_square(x):\n    time.sleep(0.004)\n    return x * x\n"
    "def inputs():\n    return (np.random.default_rng().standard_normal(8),)\n"
    "grading.given(slow_square, inputs)"
)
SPEED_TEST = (
    "from tfperf import grading\n"
    "grading.assert_speedup(square, slow_square, exercise='01_tensors.keep_data_on_device', make_inputs=inputs)"
)
#: The unfixed code, with the kernel's speed check replaced by one that always passes.
PATCHES_THE_CHECK = (
    "def square(x):\n    return slow_square(x)\n"
    "from tfperf import grading\ngrading.assert_speedup = lambda *args, **kwargs: print('Passed')"
)


def graded_beside_the_unfixed_code(
    given: str, test: str, answer: str, *, speed_checks=None, sandboxed: bool = False, timeout: float = 60
) -> outside.Outcome:
    """The outcome of the one test cell ``test`` of an exercise whose given cell is ``given``, graded with the
    unfixed code's workers (started from ``given``, closed afterwards) for the speed and bytes checks. The answer
    runs unrestricted: it stands for one that got past the restriction, so that the checks from outside are what
    is tested."""
    from tfperf.autograding import recheck

    exercise = outside.Exercise("answer", ("test",), (given, "PLACEHOLDER"), 1, (test,), restricted=False)
    workers = []

    def baseline_for(check):
        workers.append(recheck.Worker(recheck._worker_argv(), [given], check, check.baseline, "b", report_target=True))
        return workers[-1]

    try:
        return outside.grade_exercise(
            exercise, answer, timeout=timeout, sandboxed=sandboxed, speed_checks=speed_checks, baseline_for=baseline_for
        )["test"]
    finally:
        for worker in workers:
            worker.close()


def grade_speed(answer: str, *, timed_here: bool, sandboxed: bool = False, test: str = SPEED_TEST) -> outside.Outcome:
    from tfperf.grading import speed

    check = speed.SpeedCheck("test", "01_tensors.keep_data_on_device", "square", "slow_square", "inputs", "")
    speed_checks = [check] if timed_here else None
    return graded_beside_the_unfixed_code(SPEED_GIVEN, test, answer, speed_checks=speed_checks, sandboxed=sandboxed)


@pytest.mark.slow
def test_the_speed_is_timed_here_against_the_unfixed_codes_own_process():
    right = grade_speed("def square(x):\n    return x * x", timed_here=True)
    assert right.passed, right.error
    assert "Timed by the grading process, out of the notebook's reach: median speedup" in right.printed
    # In its own worker, the answer decides its check: the patched check passes the unfixed code ...
    assert grade_speed(PATCHES_THE_CHECK, timed_here=False).passed
    # ... timed from here, it is measured as what it is.
    patched = grade_speed(PATCHES_THE_CHECK, timed_here=True)
    assert not patched.passed and "not fast enough" in patched.error["evalue"], patched.error


@pytest.mark.slow
def test_a_result_that_differs_while_timed_fails_and_an_error_is_named():
    sometimes_wrong = (
        "calls = [0]\ndef square(x):\n    calls[0] += 1\n    return x * x if calls[0] < 8 else x * x + 1\n"
        "from tfperf import grading\ngrading.assert_speedup = lambda *args, **kwargs: None"
    )
    wrong = grade_speed(sometimes_wrong, timed_here=True)
    assert not wrong.passed and "differs from the unfixed code's" in wrong.error["evalue"], wrong.error
    assert "differs from the unfixed code's" in wrong.wrong_result
    raising = "calls = [0]\ndef square(x):\n    calls[0] += 1\n    if calls[0] > 4:\n        raise ValueError('tired')\n    return x * x"
    failed = grade_speed(raising, timed_here=True)
    assert not failed.passed and "ValueError: tired" in failed.error["evalue"], failed.error
    # a call that raised computed nothing: held against the exercise's other cells where its work is tallied
    assert "ValueError: tired" in (failed.wrong_result or ""), failed.wrong_result


def test_a_call_found_wrong_by_the_cell_that_tallies_the_work_fails_the_exercises_other_cells():
    """Chapter 5's speed cell compares the training's results and its tallied runs on its own calls: where it finds
    them wrong (an answer that trains right only on the calls the correctness cell makes), that cell fails too; a
    slow answer's other cells stand, and a cell that tallies no work carries nothing."""
    tally_broken = "in a timed call, the runs of gpu_sync.train_step: 100, against 200 in the unfixed code's call"

    def graded(wrong: str | None, problem: str = f"Timed by the grading process: {tally_broken}."):
        outcomes = {"train_tests": outside.Outcome(printed="Passed\n"), "train_speed_tests": outside.Outcome()}
        outcomes["train_speed_tests"].fail(problem)
        outcomes["train_speed_tests"].wrong_result = wrong
        return outcomes

    outcomes = graded(tally_broken)
    outside._wrong_on_any_call(outcomes, {"train_speed_tests"})
    said = outcomes["train_tests"].error["evalue"]
    assert said.startswith("Graded with train_speed_tests's calls too: in a timed call, the runs"), said
    assert tally_broken in outcomes["train_speed_tests"].error["evalue"]  # its own reason kept

    slow = graded(None, "same results as the unfixed code, but not fast enough")
    outside._wrong_on_any_call(slow, {"train_speed_tests"})
    untallied = graded(tally_broken)
    outside._wrong_on_any_call(untallied, set())
    assert slow["train_tests"].passed and untallied["train_tests"].passed


def test_only_a_cell_failed_on_a_check_has_its_speed_checks_calls_made_for_their_results():
    """A cell that failed on a check before its speed check was timed (chapter 5's answer that prints on the first
    call on purpose) still has its speed checks' calls made, for their results (``speed.marks``); not a cell whose
    process stopped, an answer not written yet, a cell already found wrong, or one that passed."""

    def failed(ename: str, wrong: str | None = None) -> outside.Outcome:
        outcome = outside.Outcome(error={"ename": ename, "evalue": "..."})
        outcome.wrong_result = wrong
        return outcome

    assert outside._failed_a_check(failed("GradingFailure"))
    assert not outside._failed_a_check(failed("GradingFailure", wrong="a result differs"))
    for ename in ("AnswerNotWritten", "KernelDied", "GradedOutsideKernel", OUTSIDE):
        assert not outside._failed_a_check(failed(ename)), ename
    assert not outside._failed_a_check(outside.Outcome(printed="Passed\n"))
    assert not outside._failed_a_check(None)


@pytest.mark.slow
@SANDBOXED
def test_work_left_running_while_the_unfixed_code_is_timed_fails_the_check(sandboxed):
    """A thread started once the worker's own checks are over would take the grader's core from the unfixed
    code's process: the grading process counts the CPU the answer's processes use while it times that."""
    burns_later = (
        "import threading\ncalls = [0]\n"
        "def burn():\n    while True:\n        pass\n"
        "def square(x):\n    calls[0] += 1\n"
        "    if calls[0] == 6:\n        threading.Thread(target=burn, daemon=True).start()\n"
        "    return x * x"
    )
    outcome = grade_speed(burns_later, timed_here=True, sandboxed=sandboxed)
    assert not outcome.passed and "kept computing while the unfixed code was timed" in outcome.error["evalue"], (
        outcome.error
    )


@pytest.mark.slow
def test_an_answer_that_ends_its_process_while_timed_loses_the_check():
    """The test cell passed in the worker; it counts only once timed from here, so stopping the worker
    then (exiting, or hanging past the limit) cannot keep its points."""
    exits_later = "import os\ncalls = [0]\ndef square(x):\n    calls[0] += 1\n    if calls[0] > 4:\n        os._exit(0)\n    return x * x"
    outcome = grade_speed(exits_later, timed_here=True)
    assert not outcome.passed and "this check did not finish" in outcome.error["evalue"], outcome.error


@pytest.mark.slow
def test_work_done_while_the_inputs_are_made_fails_the_check():
    """The answer's worker makes its inputs just before the clock starts: an answer that wraps NumPy's
    generator to compute each result as its input is drawn, and then only looks it up when timed, is
    caught by the time its inputs took against the unfixed code's for as many."""
    precomputes = (
        "import numpy as np\nmade = {}\nreal_rng = np.random.default_rng\n"
        "class Drawing:\n"
        "    def __init__(self, rng):\n        self.rng = rng\n"
        "    def standard_normal(self, *args, **kwargs):\n"
        "        x = self.rng.standard_normal(*args, **kwargs)\n"
        "        made[x.tobytes()] = slow_square(x)\n"
        "        return x\n"
        "np.random.default_rng = lambda *args, **kwargs: Drawing(real_rng(*args, **kwargs))\n"
        "def square(x):\n"
        "    done = made.pop(x.tobytes(), None)\n"
        "    return slow_square(x) if done is None else done\n"
        "from tfperf import grading\ngrading.assert_speedup = lambda *args, **kwargs: print('Passed')"
    )
    outcome = grade_speed(precomputes, timed_here=True)
    assert not outcome.passed and "worked while its inputs were made" in outcome.error["evalue"], outcome.error


#: The unfixed code takes 20 ms a call; each input takes 3 ms of CPU to make, however long the wait for a core.
SPENDS_CPU_ON_INPUTS = (
    "import time\nimport numpy as np\nfrom tfperf import grading\n"
    "def slow_square(x):\n    time.sleep(0.02)\n    return x * x\n"
    "def inputs():\n    end = time.thread_time() + 0.003\n    while time.thread_time() < end:\n        pass\n"
    "    return (np.random.default_rng().standard_normal(8),)\n"
    "grading.given(slow_square, inputs)"
)


def graded_on_a_shared_core(answer: str, record: Path, monkeypatch) -> outside.Outcome:
    """``answer`` graded against SPENDS_CPU_ON_INPUTS as nbgrader grades (a sandboxed worker forked from the fork
    server); once that worker's own checks are over, its serving thread on a core that a busy process holds half
    of the time, the unfixed code's worker (and the clock) on another core. The speed check's row goes to
    ``record``."""
    from tfperf.autograding import recheck
    from tfperf.grading import speed

    cores = os.sched_getaffinity(0)
    shared, alone = sorted(cores)[:2]
    check = speed.SpeedCheck("test", "01_tensors.keep_data_on_device", "square", "slow_square", "inputs", "")
    exercise = outside.Exercise(
        "answer", ("test",), (SPENDS_CPU_ON_INPUTS, "PLACEHOLDER"), 1, (SPEED_TEST,), restricted=False
    )
    answers, started = [], []

    class Replies(outside._Replies):
        def __init__(self, *args):
            super().__init__(*args)
            answers.append(self)

    def baseline_for(check):  # called as the speed check starts
        assert answers[0].serving is not None, "the forked worker's serving process was not found"
        os.sched_setaffinity(answers[0].serving, {shared})  # its main thread: the one that makes the inputs
        started.append(
            subprocess.Popen(
                [sys.executable, "-c", "while True: pass"], preexec_fn=lambda: os.sched_setaffinity(0, {shared})
            )
        )
        os.sched_setaffinity(0, {alone})
        started.append(
            recheck.Worker(
                recheck._worker_argv(), [SPENDS_CPU_ON_INPUTS], check, check.baseline, "b", report_target=True
            )
        )
        return started[-1]

    monkeypatch.setattr(outside, "_Replies", Replies)
    try:
        return outside.grade_exercise(
            exercise, answer, timeout=60, sandboxed=True, speed_checks=[check], baseline_for=baseline_for, record=record
        )["test"]
    finally:
        os.sched_setaffinity(0, cores)
        for process in started:
            if isinstance(process, subprocess.Popen):
                process.kill()
                process.wait()
            else:
                process.close()


@pytest.mark.slow
@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two cores")
@pytest.mark.skipif(not shutil.which("bwrap"), reason="needs bubblewrap")
def test_inputs_made_slower_by_another_process_on_the_workers_core_do_not_fail_the_check(tmp_path, monkeypatch):
    """On a loaded machine the answer's worker can wait for its core while it makes a sample's inputs, and the
    unfixed code's not: that wait (read from the scheduler) is not counted as the answer's work. Here a busy
    process holds the answer's core half of the time: the inputs' 78 ms of CPU a sample took about twice as long,
    more than the check allows (as a loaded run of the suite once failed chapter 1's reference so)."""
    honest = "import time\ndef square(x):\n    time.sleep(0.002)\n    return x * x"
    outcome = graded_on_a_shared_core(honest, tmp_path / "record.jsonl", monkeypatch)
    assert outcome.passed, outcome.error
    (row,) = [json.loads(line) for line in (tmp_path / "record.jsonl").read_text().splitlines()]
    # The wait, left out, was real. Measured here: 0.06 to 0.08 s (8 runs, idle machine), 0.037 s once in CI while the
    # suite's other half ran beside it; 0.00003 to 0.00013 s when the busy process sleeps instead (3 runs).
    assert row["preparing_share"] < 1 and row["preparing_waited"] > 0.01, row


# ---------------------------------------------------------------- what an answer prints, read from outside

PRINTS_TEST = (
    "from tfperf import grading\n"
    "grading.assert_prints_at_most(total, ([1.0, 2.0, 3.0],), 0, what='total', section='5. Printing')\n"
    "print('nothing printed')"
)
#: Quiet only while a check captures its output: the check in the worker sees nothing.
QUIET_WHEN_CAPTURED = (
    "import sys\n"
    "def total(xs):\n"
    "    if type(sys.stdout).__name__ != 'StringIO':\n"
    "        for x in xs:\n"
    "            print('step', x)\n"
    "    return sum(xs)"
)


def grade_prints(answer: str, *, sandboxed: bool = False, restricted: bool = True) -> outside.Outcome:
    exercise = outside.Exercise(
        "answer", ("prints",), ("import math", "PLACEHOLDER"), 1, (PRINTS_TEST,), restricted=restricted
    )
    return outside.grade_exercise(exercise, answer, timeout=30, sandboxed=sandboxed)["prints"]


@SANDBOXED
def test_what_an_answer_prints_is_read_from_its_process_output(sandboxed):
    quiet = grade_prints("def total(xs):\n    return sum(xs)", sandboxed=sandboxed)
    assert quiet.passed, quiet.error
    assert "nothing printed" in quiet.printed
    loud = grade_prints("def total(xs):\n    print('step')\n    return sum(xs)")
    assert not loud.passed and "printed 1 lines" in loud.error["evalue"], loud.error


@SANDBOXED
def test_an_answer_quiet_only_while_captured_fails_when_watched_from_outside(sandboxed):
    """The worker's check captures the call by replacing sys.stdout, which the answer notices: the check
    there passes; the grading process then calls it with nothing captured and reads its real output."""
    outcome = grade_prints(QUIET_WHEN_CAPTURED, sandboxed=sandboxed, restricted=False)
    assert not outcome.passed, outcome.printed
    message = outcome.error["evalue"]
    assert "Watched by the grading process" in message and "total printed 3 lines" in message, message
    assert "'step 1.0'" in message and 'Reread the section "5. Printing"' in message, message


def test_output_hidden_from_the_grading_process_fails_the_check():
    """An answer that points its process's output elsewhere hides the markers too: the check fails."""
    hides = "import os\nos.dup2(os.open(os.devnull, os.O_WRONLY), 2)\n" + QUIET_WHEN_CAPTURED
    outcome = grade_prints(hides, restricted=False)
    assert not outcome.passed and "could not read what total printed" in outcome.error["evalue"], outcome.error


def test_prints_checks_are_read_from_the_top_level_of_a_test_cell():
    from tfperf.grading.printing import PrintsCheck, prints_checks

    source = (
        "def helper(n):\n    grading.assert_prints_at_most(f, (n,), 0)\n"
        "grading.assert_prints_at_most(train, inputs(3), 2, what='train', section='S')\n"
        "grading.assert_prints_at_most(fn=g, args=(1,), limit=0, what='g')\n"
        "grading.assert_prints_at_most(h, (1,), LIMIT, what='h')\n"
        "grading.assert_prints_at_most(k, (1,), 0)\n"  # no what: the assertion itself would refuse it
    )
    assert prints_checks("t", source) == [
        PrintsCheck("t", "train", "inputs(3)", 2, "train", "S"),
        PrintsCheck("t", "g", "(1,)", 0, "g", None),
    ]


@pytest.mark.slow
def test_what_the_answer_prints_while_it_is_timed_is_read_too():
    """Printing only after the worker's own checks are over (when its calls are timed) is read as well,
    where the speed check's cell limits what that function prints."""
    prints_later = (
        "calls = [0]\ndef square(x):\n    calls[0] += 1\n"
        "    if calls[0] > 6:\n        print('step', calls[0])\n"
        "    return x * x"
    )
    test = (
        "from tfperf import grading\n"
        "grading.assert_prints_at_most(square, inputs(), 0, what='square')\n"
        "grading.assert_speedup(square, slow_square, exercise='01_tensors.keep_data_on_device', make_inputs=inputs)"
    )
    # (A quiet answer passes with its timed calls read: chapter 5's reference does, in the round trip.)
    outcome = grade_speed(prints_later, timed_here=True, test=test)
    assert not outcome.passed and "square printed" in outcome.error["evalue"], outcome.error
    assert "for each of" in outcome.error["evalue"], outcome.error


def test_an_answer_that_ends_its_process_when_watched_loses_the_prints_check():
    """Quiet while captured, and exiting where nothing captures it: the cell that passed in the worker
    counts only once its prints were read from here."""
    exits = "import os, sys\ndef total(xs):\n    if type(sys.stdout).__name__ != 'StringIO':\n        os._exit(0)\n    return sum(xs)"
    outcome = grade_prints(exits, restricted=False)
    assert not outcome.passed and "this check did not finish" in outcome.error["evalue"], outcome.error


# ---------------------------------------------------------------- bytes checks decided by the grading process

BYTES_GIVEN = (
    "import tensorflow as tf\nfrom tfperf import grading\n"
    "def chain_math(x):\n    return tf.tanh(x * 2.0 + 1.0) * x - x\n"
    "chain = tf.function(lambda x: chain_math(x))\n"
    "def chain_inputs(n):\n    return (tf.random.normal([n]),)\n"
)
BYTES_TEST = (
    "from tfperf import grading\n"
    "mine, theirs = grading.assert_moves_fewer_bytes(fused, chain, chain_inputs(4096), at_most=1 / 2, what='fused',"
    " section='3. Fusion')\n"
)
#: The unfused chain, with the worker's check replaced by one that always passes.
UNFUSED_PATCHED_CHECK = (
    "fused = chain\nfrom tfperf import grading\ngrading.assert_moves_fewer_bytes = lambda *args, **kwargs: (0, 1)"
)
#: The unfused chain, with the unfixed step made to move more where the answer runs (a heavier math it calls).
UNFUSED_HEAVIER_REFERENCE = (
    "fused = tf.function(lambda x: tf.tanh(x * 2.0 + 1.0) * x - x)\n"
    "def chain_math(x):\n"
    "    for _ in range(8):\n        x = tf.tanh(x * 2.0 + 1.0) * x - x\n"
    "    return x\n"
)


def grade_bytes(answer: str) -> outside.Outcome:
    return graded_beside_the_unfixed_code(BYTES_GIVEN, BYTES_TEST, answer)


def test_bytes_checks_are_read_from_the_top_level_of_a_test_cell():
    from tfperf.grading.traffic import BytesCheck, bytes_checks

    source = (
        "def helper(n):\n    grading.assert_moves_fewer_bytes(f, g, (n,), at_most=0.5)\n"
        + BYTES_TEST
        + "_ = grading.assert_moves_fewer_bytes(fn=f, reference=g, args=(1,), at_most=0.25)\n"
        "grading.assert_moves_fewer_bytes(h, g, (1,), at_most=LIMIT)\n"
    )
    assert bytes_checks("t", source) == [
        BytesCheck("t", "fused", "chain", "chain_inputs(4096)", 0.5, "fused", "3. Fusion"),
        BytesCheck("t", "f", "g", "(1,)", 0.25, "Your function", None),  # the assertion's own defaults
    ]


def test_a_module_that_says_other_bytes_than_the_worker_is_not_believed():
    from tfperf.grading import traffic as moved
    from tfperf.measure import bytes_moved

    module = (
        "HloModule m\n\nENTRY %main (p: f32[1024]) -> f32[1024] {\n  %p = f32[1024]{0} parameter(0)\n"
        "  ROOT %t = f32[1024]{0} tanh(f32[1024]{0} %p)\n}\n"
    )
    count = bytes_moved.hlo_bytes(module)
    assert count > 0
    assert moved.counted({"bytes": count, "how": bytes_moved.XLA, "module": module}, "w") == (count, bytes_moved.XLA)
    with pytest.raises(moved.Unbelievable, match="the XLA module it sent moves"):
        moved.counted({"bytes": count // 4, "how": bytes_moved.XLA, "module": module}, "w")
    with pytest.raises(moved.Unbelievable, match="sent no module"):
        moved.counted({"bytes": count, "how": bytes_moved.XLA, "module": None}, "w")
    with pytest.raises(moved.Unbelievable, match="cannot use"):
        moved.counted({"bytes": "0", "how": bytes_moved.OP_BY_OP}, "w")


@pytest.mark.slow
def test_the_bytes_are_decided_here_from_the_answers_and_the_unfixed_codes_processes():
    fused = grade_bytes("fused = tf.function(lambda x: tf.tanh(x * 2.0 + 1.0) * x - x, jit_compile=True)")
    assert fused.passed, fused.error
    assert "Decided by the grading process, out of the notebook's reach: fused moves" in fused.printed
    # The check in the worker is the answer's to replace; decided here, the unfused chain fails.
    patched = grade_bytes(UNFUSED_PATCHED_CHECK)
    assert not patched.passed and "at most 0.5 times that" in patched.error["evalue"], patched.error
    assert 'Reread the section "3. Fusion"' in patched.error["evalue"]
    # The unfixed step made heavier where the answer runs: its bytes are read where no answer ran.
    heavier = grade_bytes(UNFUSED_HEAVIER_REFERENCE)
    assert not heavier.passed and "Decided by the grading process" in heavier.error["evalue"], heavier.error


# ---------------------------------------------------------------- trace counts read while timed

TRACES_GIVEN = (
    "import time\nimport numpy as np\nimport tensorflow as tf\nfrom tfperf import grading\n"
    "def slow_square(x):\n    time.sleep(0.05)\n    return x * x\n"
    "def varied():\n    rng = np.random.default_rng()\n    return (rng.standard_normal(int(rng.integers(4, 400))),)\n"
)
TRACES_TEST = (
    "from tfperf import grading\n"
    "grading.assert_traces_at_most(square, 1, [(np.ones(8),), (np.ones(8),)], what='square', section='4. Retracing')\n"
    "grading.assert_speedup(square, slow_square, exercise='01_tensors.keep_data_on_device', make_inputs=varied)"
)


def grade_traced(answer: str) -> outside.Outcome:
    from tfperf.grading import speed

    check = speed.SpeedCheck("test", "01_tensors.keep_data_on_device", "square", "slow_square", "varied", "")
    return graded_beside_the_unfixed_code(TRACES_GIVEN, TRACES_TEST, answer, speed_checks=[check], timeout=120)


def test_trace_checks_are_read_from_the_top_level_of_a_test_cell():
    from tfperf.grading.tracing import TracesCheck, traces_checks

    source = (
        "def helper():\n    grading.assert_traces_at_most(f, 1, [])\n"
        + TRACES_TEST
        + "\n_ = grading.assert_traces_at_most(square, 0, more, what='square (already traced)')\n"
        "grading.assert_traces_at_most(train_step, 1, run=lambda: 0)\n"
    )
    assert traces_checks("t", source) == [
        TracesCheck("t", "square", "square", "4. Retracing"),
        TracesCheck("t", "train_step", "Your function", None),  # the assertion's own defaults
    ]


@pytest.mark.slow
def test_a_function_that_traces_again_while_timed_fails_the_check():
    """Traced once by the worker's check (one shape), the answer retraces on every new shape: fast enough against
    an unfixed code this slow, it still fails, and says why."""
    signature = "input_signature=[tf.TensorSpec([None], tf.float64)]"
    once = grade_traced(f"square = tf.function(lambda x: x * x, {signature})")
    assert once.passed, once.error
    again = grade_traced("square = tf.function(lambda x: x * x)")
    assert not again.passed, again.printed
    assert "square traced" in again.error["evalue"] and "more times during the" in again.error["evalue"], again.error
    assert 'Reread the section "4. Retracing"' in again.error["evalue"]


STEP_TEST = (
    "from tfperf import grading\n"
    "grading.assert_traces_at_most(step, 1, run=lambda: square(np.ones(8)), runs_at_least=1, what='step')\n"
    "grading.assert_speedup(square, slow_square, exercise='01_tensors.keep_data_on_device', make_inputs=varied)"
)
STEP = "@tf.function(input_signature=[tf.TensorSpec([None], tf.float64)])\ndef step(x):\n    return x * x\n"


@pytest.mark.slow
def test_a_function_run_as_a_graph_only_on_the_checks_inputs_fails_while_timed():
    """The checks' inputs are the same on every run (the given functions make them from fixed seeds): an answer that
    calls its graph there and its Python function on the timed calls' fresh inputs traces nothing while timed, and
    still fails, since the timed calls did not run the graph."""
    from tfperf.grading import speed

    check = speed.SpeedCheck("test", "01_tensors.keep_data_on_device", "square", "slow_square", "varied", "")

    def graded(answer: str) -> outside.Outcome:
        return graded_beside_the_unfixed_code(TRACES_GIVEN, STEP_TEST, answer, speed_checks=[check], timeout=120)

    honest = graded(STEP + "def square(x):\n    return step(x)")
    assert honest.passed, honest.error
    switched = graded(
        STEP + "def square(x):\n    if x.shape[0] == 8:\n        return step(x)\n    return step.python_function(x)"
    )
    ran = re.search(r"step ran as a graph (\d+) times during the (\d+) calls", switched.error["evalue"])
    # the timed inputs are drawn at random: a few may have the checks' shape, and run the graph
    assert not switched.passed and ran and int(ran[1]) < int(ran[2]), switched.error
