"""The judge (tfperf.autograding.judge): which test cells it runs, the values that cross between it and the subject,
and what an answer in the subject can and cannot make it decide. Small cells: seconds each."""

from __future__ import annotations

import numpy as np
import pytest

from tfperf.autograding import judge, outside
from tfperf.grading import remote

GIVEN = "from tfperf import grading\ndef slow_square(x):\n    return x * x"
RESULT_TEST = "grading.check_function(square, (3,), 9, what='square(3)')\nprint('checked')"


def graded(answer: str, test: str = RESULT_TEST, *, names=("square",), restricted: bool = False) -> outside.Outcome:
    """The outcome of the one test cell ``test``. ``restricted=False``: the answer stands for one that got past the
    restriction (tfperf.autograding.restricted), so that what is tested is the boundary behind it."""
    exercise = outside.Exercise(
        "answer", ("t",), (GIVEN, "PLACEHOLDER"), 1, (test,), restricted=restricted, answer_names=names
    )
    return outside.grade_exercise(exercise, answer, timeout=30, sandboxed=False)["t"]


# ---------------------------------------------------------------- which cells


def test_the_names_an_answer_cell_defines_are_its_functions_classes_and_assignments_not_its_imports():
    source = "import numpy as np\ndef f(x):\n    y = 1\n    return x\nclass K: pass\na, (b, c) = 1, (2, 3)\nd: int = 4"
    assert judge.answer_names(source) == ("f", "K", "a", "b", "c", "d")
    assert judge.answer_names("def broken(:") == ()


@pytest.mark.parametrize(
    ("test", "names", "expected"),
    [
        (RESULT_TEST, ("square",), True),
        ("grading.check_same_as(square, slow_square, (2,), what='s')", ("square",), True),
        ("assert square(2) == 4", ("square",), True),  # a call, its result compared here
        ("grading.assert_speedup(square, slow_square, exercise='e', make_inputs=f)", ("square",), True),
        ("grading.assert_traces_at_most(square, 1, [(2,)])", ("square",), True),
        ("grading.assert_steady_epochs(square, (2,), what='s')", ("square",), False),  # no judge-side form yet
        ("r = timing.compare(lambda: square(2), lambda: 4)", ("square",), False),  # would time the pipes
        ("t = time.perf_counter(); square(2); assert time.perf_counter() - t < 1", ("square",), False),
        ("print(square.__name__)", ("square",), False),  # an attribute of the answer's object
        ("helper(square)", ("square",), False),  # handed to a function of the cell
        ("grading.check_function(lambda x: square(x), (2,), 4, what='s')", ("square",), True),
        (RESULT_TEST, (), False),  # no names known: the subject runs it
        ("def broken(:", ("square",), False),
    ],
)
def test_a_test_cell_is_judged_where_every_check_and_every_use_of_the_answer_has_a_judge_side_form(
    test, names, expected
):
    assert judge.judged(test, names) is expected


def test_a_speed_check_is_judged_only_where_the_grading_process_times_it():
    test = "grading.assert_speedup(square, slow_square, exercise='e', make_inputs=f)"
    assert judge.judged(test, ("square",), timed_outside=True)
    assert not judge.judged(test, ("square",), timed_outside=False)


# ---------------------------------------------------------------- values as data


def test_values_cross_as_data_with_their_types_and_dtypes():
    value = {
        "a": np.arange(6, dtype=np.int16).reshape(2, 3),
        "b": (np.float32(1.5), 2, 2.5, True, None, "text", [np.zeros(0)]),
        "c": 1 + 2j,
    }
    description, arrays = remote.pack(value)
    back = remote.unpack(description, arrays)
    assert back["a"].dtype == np.int16 and back["a"].tolist() == [[0, 1, 2], [3, 4, 5]]
    assert type(back["b"][0]) is np.float32 and back["b"][1:6] == (2, 2.5, True, None, "text")
    assert type(back["b"]) is tuple and type(back["b"][6]) is list and back["c"] == 1 + 2j


def test_a_tensor_crosses_as_a_tensor_of_its_dtype():
    tf = pytest.importorskip("tensorflow")
    description, arrays = remote.pack((tf.constant([1, 2], tf.int32), tf.Variable(1.5)))
    back = remote.unpack(description, arrays)
    assert all(tf.is_tensor(t) for t in back) and back[0].dtype == tf.int32 and float(back[1]) == 1.5


class Claims:
    """What an answer could return: an object that says it holds numbers."""

    def numpy(self):
        return 1.0

    def __array__(self, dtype=None, copy=None):
        return np.ones(1)


class Sub(np.ndarray):
    pass


@pytest.mark.parametrize(
    "value", [Claims(), np.ones(2).view(Sub), np.array([object()]), {1: 2}, print, lambda: 1], ids=repr
)
def test_what_is_not_data_does_not_cross(value):
    with pytest.raises(remote.NotData):
        remote.pack(value)


@pytest.mark.parametrize("description", [{"py": [1]}, {"array": 3}, {"exec": "x"}, {"callback": 0}, [1], {}])
def test_a_description_that_pack_does_not_write_is_refused(description):
    with pytest.raises(remote.NotData):
        remote.unpack(description, [np.zeros(1)])


# ---------------------------------------------------------------- the judge decides


def test_a_right_answer_passes_in_the_judge_with_what_the_check_printed():
    outcome = graded("def square(x):\n    return x ** 2", restricted=True)
    assert outcome.passed, outcome.error
    assert outcome.printed == f"{outside.JUDGED}\nchecked\n"


def test_a_wrong_answer_fails_with_the_checks_message():
    outcome = graded("def square(x):\n    return x + x", restricted=True)
    assert "square(3) differs from the expected values" in outcome.error["evalue"]


def test_an_answer_that_replaces_the_checks_in_its_own_process_changes_nothing_the_judge_runs():
    """Unrestricted, the answer replaces every check it can reach in its process: run there (no names known, as
    before the judge), the test cell passes a wrong answer; run in the judge, it fails."""
    patches = (
        "from tfperf import grading\nfrom tfperf.grading import results\n"
        "grading.check_function = results.check_function = lambda *a, **k: None\n"
        "def square(x):\n    return 0"
    )
    assert graded(patches, names=()).passed  # the subject decided
    outcome = graded(patches)
    assert not outcome.passed and "differs from the expected values" in outcome.error["evalue"]


def test_an_object_that_claims_numbers_is_named_as_what_it_is():
    outcome = graded("class Claims:\n    def numpy(self):\n        return 9\ndef square(x):\n    return Claims()")
    assert "square(3) returned a Claims: expected a tensor, an array or a number" in outcome.error["evalue"]


def test_what_a_call_prints_is_read_from_the_subjects_own_stream_however_it_writes_it():
    """Written straight to the file descriptor, past any capture the check could set up in the subject."""
    test = "grading.assert_prints_at_most(square, (3,), 0, what='square')"
    quiet = graded("def square(x):\n    return x * x", test)
    assert quiet.passed, quiet.error
    loud = graded("import os\ndef square(x):\n    os.write(1, b'noise\\n')\n    return x * x", test)
    assert "square printed 1 lines (the first: 'noise')" in loud.error["evalue"]


def test_a_function_the_check_passes_is_called_back_in_the_judge_on_data():
    test = (
        "seen = []\n"
        "grading.check_function(apply_twice, (lambda v: seen.append(v) or v + 1, 3), 5, what='apply_twice')\n"
        "assert seen == [3, 4], seen"
    )
    outcome = graded("def apply_twice(f, x):\n    return f(f(x))", test, names=("apply_twice",), restricted=True)
    assert outcome.passed, outcome.error


def test_an_answer_that_raises_is_reported_by_its_exceptions_name():
    outcome = graded("def square(x):\n    raise ValueError('half done')", restricted=True)
    assert "square(3) raised ValueError: half done" in outcome.error["evalue"]


def test_an_answer_that_kills_its_process_fails_the_judged_check():
    outcome = graded("import os\ndef square(x):\n    os._exit(0)")
    assert not outcome.passed and outcome.error["ename"] == outside.OUTSIDE, outcome.error


@pytest.mark.parametrize(
    "stops, why",
    [
        ("while x == 4:\n        pass", "time limit"),
        ("if x == 4:\n        return '0' * 70_000_000", "could not be read"),
    ],
    ids=["never-returns", "too-large-to-read"],
)
def test_a_judged_cell_that_finished_stands_where_a_later_ones_call_never_came_back(stops, why):
    exercise = outside.Exercise(
        "answer",
        ("t", "u"),
        (GIVEN, "PLACEHOLDER"),
        1,
        (RESULT_TEST, "grading.check_function(square, (4,), 16, what='square(4)')"),
        answer_names=("square",),
    )
    assert exercise.in_judge() == ("t", "u")
    outcomes = outside.grade_exercise(
        exercise, f"def square(x):\n    {stops}\n    return x * x", timeout=5, sandboxed=False
    )
    assert outcomes["t"].passed, outcomes["t"].error
    stopped = outcomes["u"]
    assert not stopped.passed and "did not finish" in stopped.error["evalue"] and why in stopped.error["evalue"]
    # marked: held against the exercise's other cells where its work is tallied (chapter 5)
    assert stopped.wrong_result and "did not come back" in stopped.wrong_result


# ---------------------------------------------------------------- counted in the subject, decided in the judge

TF_GIVEN = "import tensorflow as tf\nfrom tfperf import grading"


def graded_with_tensorflow(answer: str, test: str, names: tuple[str, ...]) -> outside.Outcome:
    exercise = outside.Exercise("answer", ("t",), (TF_GIVEN, "PLACEHOLDER"), 1, (test,), answer_names=names)
    assert exercise.in_judge() == ("t",)
    return outside.grade_exercise(exercise, answer, timeout=60, sandboxed=False)["t"]


@pytest.mark.slow
def test_traces_are_counted_in_the_subject_over_the_calls_the_judge_makes():
    test = "grading.assert_traces_at_most(double, 1, [(tf.constant([1.0]),), (tf.constant([2.0]),)], what='double')"
    once = graded_with_tensorflow("@tf.function\ndef double(x):\n    return x * 2", test, ("double",))
    assert once.passed, once.error
    test = "grading.assert_traces_at_most(double, 1, [(1.0,), (2.0,)], what='double')"  # Python numbers: a trace each
    twice = graded_with_tensorflow("@tf.function\ndef double(x):\n    return x * 2", test, ("double",))
    assert "double was traced 2 times during 2 calls; expected at most 1" in twice.error["evalue"]
    plain = graded_with_tensorflow("def double(x):\n    return x * 2", test, ("double",))
    assert "double is not a tf.function" in plain.error["evalue"]
    test = "grading.assert_traces_at_most(double, 1, [(tf.constant([1.0]),), (tf.constant([2.0]),)], what='double')"
    python = "@tf.function\ndef double(x):\n    return tf.py_function(lambda v: v * 2, [x], tf.float32)"
    eager = graded_with_tensorflow(python, test, ("double",))
    assert "double's graph calls back into Python (1 tf.py_function" in eager.error["evalue"], eager.error


@pytest.mark.slow
def test_a_tf_print_whose_output_is_lost_is_seen_in_the_graphs_the_judges_call_ran():
    test = "grading.assert_prints_at_most(double, (tf.constant([1.0]),), 0, what='double')"
    logged = "@tf.function\ndef double(x):\n    tf.print(x, output_stream='file:///dev/null')\n    return x * 2"
    lost = graded_with_tensorflow(logged, test, ("double",))
    assert "double ran graphs that hold 1 tf.print node(s)" in lost.error["evalue"], lost.error
    quiet = graded_with_tensorflow("@tf.function\ndef double(x):\n    return x * 2", test, ("double",))
    assert quiet.passed, quiet.error


@pytest.mark.slow
def test_host_reads_are_counted_in_the_subject_over_the_judges_call():
    test = "grading.assert_host_syncs_at_most(total, (tf.constant([1.0, 2.0]),), 0, what='total')"
    quiet = graded_with_tensorflow("def total(x):\n    return tf.reduce_sum(x)", test, ("total",))
    assert quiet.passed, quiet.error
    reads = graded_with_tensorflow("def total(x):\n    return float(tf.reduce_sum(x))", test, ("total",))
    assert "total made 1 host read (1 by float())" in reads.error["evalue"], reads.error


def test_one_judge_serves_one_exercise_after_another_each_in_a_new_namespace():
    first = graded("def square(x):\n    return x * x", RESULT_TEST + "\nleft_over = 1", restricted=True)
    (kept,) = outside.judges.idle.values()
    second = graded("def square(x):\n    return x * x", "assert 'left_over' not in globals()\n" + RESULT_TEST)
    assert first.passed and second.passed, (first.error, second.error)
    assert list(outside.judges.idle.values()) == [kept] and kept.alive()


def test_a_judge_whose_exercise_did_not_finish_is_not_kept():
    graded("def square(x):\n    return x * x")
    (kept,) = outside.judges.idle.values()
    stopped = graded("import os\ndef square(x):\n    os._exit(0)")
    assert not stopped.passed and not kept.alive() and not outside.judges.idle


def test_a_witnessed_call_of_plain_python_imports_no_tensorflow():
    """The subject waits for the device after a witnessed call only where TensorFlow was imported: importing it there
    (seconds of a core) once made a toy course's first judged call go past its 5 s limit under load."""
    import subprocess
    import sys

    script = (
        "import sys\nfrom tfperf.grading.printing import witnessed_call\n"
        "assert witnessed_call('token', lambda: 3) == 3\nprint('tensorflow' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"


# ---------------------------------------------------------------- memory, read by the grading process

MEMORY_TEST = "grading.assert_memory_flat(train, (6,), what='train', budget_mb=100)\nprint('flat')"
#: An answer that keeps 20 MB an epoch, and first makes what reports memory in its own process say nothing grew.
LEAKS_AND_PATCHES = """import numpy as np
from tfperf.runtime import processes
processes.held_bytes = lambda pid: 1                # what its own process would report
kept = []

def train(epochs, on_epoch_end):
    for epoch in range(epochs):
        kept.append(np.ones(2_500_000))             # 20 MB, kept
        on_epoch_end(epoch)
    return len(kept)
"""
FLAT = """import numpy as np

def train(epochs, on_epoch_end):
    for epoch in range(epochs):
        scratch = np.ones(2_500_000)                # 20 MB an epoch, freed the next
        on_epoch_end(epoch)
    return epochs
"""
#: 120 MB set aside by the answer cell, freed as the epochs leak: flat epochs, over the budget.
BALLAST = """import numpy as np
ballast = [np.ones(2_500_000) for _ in range(6)]
kept = []

def train(epochs, on_epoch_end):
    for epoch in range(epochs):
        kept.append(np.ones(2_500_000))
        if ballast:
            ballast.pop()
        on_epoch_end(epoch)
    return len(kept)
"""


def test_memory_is_read_from_outside_the_answers_process_at_every_epoch():
    """The judge's readings come from the grading process (``/proc`` of the subject): an answer that patches what
    would report memory in its own process still fails; one that frees what it allocates passes."""
    assert graded(FLAT, MEMORY_TEST, names=("train",)).passed
    leak = graded(LEAKS_AND_PATCHES, MEMORY_TEST, names=("train",))
    assert "MB an epoch; at most 8 MB an epoch expected" in leak.error["evalue"], leak.error
    assert outside.JUDGED in leak.printed


def test_memory_set_aside_by_the_answer_cell_counts_against_it():
    """Read before the answer cell ran (the worker waits there): what the answer cell sets aside to free as it leaks
    is over the budget, though every epoch looks flat."""
    ballast = graded(BALLAST, MEMORY_TEST, names=("train",), restricted=True)
    assert "more than before the answer cell ran; at most 100 MB expected" in ballast.error["evalue"], ballast.error
    assert graded(FLAT, MEMORY_TEST, names=("train",), restricted=True).passed


def test_a_tensor_the_answer_passes_to_a_checks_function_is_counted_as_its_read():
    """The stub reads a tensor it is passed to send it as data: a read the answer made (a report of every step's
    tensor, even one the check's function then refuses, is a sync every step); numbers cost none."""
    import tensorflow as tf

    from tfperf.autograding import worker
    from tfperf.grading.remote import pack
    from tfperf.measure import host_syncs

    sent = []

    def ask(message, arrays):
        sent.append(message)
        return {"called_back": pack(None)[0]}, []

    stub = worker.callback_stub(0, ask)
    with host_syncs.counting() as syncs:
        stub(3, tf.constant(0.5))
        stub(step=4, loss=tf.constant(0.25))
        stub(5, loss=0.125)
    assert syncs.count == 2
    assert [m["callback"] for m in sent] == [0, 0, 0] and all("keywords" in m for m in sent)


@pytest.mark.slow
def test_reports_are_timed_by_the_steps_the_subject_ran_when_it_called_back():
    """The steps the answer had run when it called the check's report are counted in the subject, at the call, and
    compared in the judge: a loop that holds its reports back to the end fails there."""
    given = "from tfperf.experiments import gpu_sync\n"
    test = given + (
        "w0, xs, ys = gpu_sync.make_problem(20, seed=1)\n"
        "grading.assert_host_syncs_at_most(train, (w0, xs, ys, lambda step, loss: None, 5), 4, what='train',"
        " reports_every=5, steps=20)"
    )
    loop = (
        "def train(w0, xs, ys, report, every):\n    w = tf.Variable(w0)\n    held = []\n"
        "    for start in range(0, 20, every):\n"
        "        loss = gpu_sync.train_steps(w, xs[start:start + every], ys[start:start + every])\n"
        "        {at_once}\n"
        "    for step, loss in held:\n        report(step, float(loss))\n    return w.read_value()"
    )
    on_time = loop.replace("{at_once}", "report(start + every - 1, float(loss))")
    assert graded_with_tensorflow(given + on_time, test, ("train",)).passed
    late = graded_with_tensorflow(
        given + loop.replace("{at_once}", "held.append((start + every - 1, loss))"), test, ("train",)
    )
    assert "the report for step 4 was made after 20 training steps had run" in late.error["evalue"], late.error
