"""The guard: checks refuse to grade in a kernel whose grading, timing, counting or TensorFlow
state, or whose given code, was changed after the setup cell; and nothing may compete with timing."""

import os
import threading
import time

import numpy as np
import pytest

from tfperf import grading
from tfperf.grading import GradingFailure, guard, speed_trial, targets
from tfperf.measure import timing

tf = pytest.importorskip("tensorflow")


@pytest.fixture(autouse=True)
def armed():
    guard.arm()
    yield
    guard._reset_for_tests()


def _check():
    grading.check_function(lambda x: x * 2, (tf.constant(1.0),), tf.constant(2.0), what="double")


def test_an_untouched_kernel_grades_even_after_keras_tf_data_and_tf_functions():
    import keras

    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])
    model.compile("sgd", "mse")
    model.fit(np.ones((8, 3)), np.ones((8, 2)), epochs=1, verbose=0)
    model.predict(np.ones((2, 3)), verbose=0)
    list(tf.data.Dataset.range(4).map(lambda x: x * 2).batch(2))
    tf.function(lambda x: x + 1)(tf.constant(1))
    _check()
    assert guard.competitors() == []


@pytest.mark.parametrize(
    "tamper, undo",
    [
        (lambda: vars(timing).__setitem__("settled_at", lambda *a, **k: None), None),
        (lambda: vars(speed_trial).__setitem__("_compare", lambda *a, **k: None), None),
        (lambda: vars(targets).__setitem__("target_for", lambda *a, **k: 0.0), None),
        (lambda: setattr(np, "allclose", lambda *a, **k: True), None),
        (lambda: tf.config.run_functions_eagerly(True), lambda: tf.config.run_functions_eagerly(False)),
        (lambda: os.environ.__setitem__("TFPERF_SIZE", "tiny"), lambda: os.environ.pop("TFPERF_SIZE")),
    ],
)
def test_a_changed_library_tensorflow_numpy_or_setting_stops_the_check(tamper, undo, monkeypatch):
    originals = {
        name: getattr(module, name)
        for module, name in [
            (timing, "settled_at"),
            (speed_trial, "_compare"),
            (targets, "target_for"),
            (np, "allclose"),
        ]
    }
    monkeypatch.delenv("TFPERF_SIZE", raising=False)
    guard.arm()
    try:
        tamper()
        with pytest.raises(GradingFailure, match="grading environment was modified"):
            _check()
    finally:
        for (module, name), value in zip(
            [(timing, "settled_at"), (speed_trial, "_compare"), (targets, "target_for"), (np, "allclose")],
            originals.values(),
        ):
            vars(module)[name] = value
        if undo:
            undo()


def test_course_modules_refuse_assignment_once_armed():
    with pytest.raises(AttributeError, match="part of the course's grading"):
        grading.assert_speedup = lambda *a, **k: None
    with pytest.raises(AttributeError, match="part of the course's grading"):
        del timing.settled_at


def test_a_target_file_changed_after_the_setup_cell_stops_the_check(monkeypatch, tmp_path):
    override = tmp_path / "targets.toml"
    override.write_text('["01_tensors.keep_data_on_device"]\ncpu = 3.0\n')
    monkeypatch.setenv("TFPERF_TARGETS", str(override))
    guard.arm()
    override.write_text('["01_tensors.keep_data_on_device"]\ncpu = 0.5\n')
    with pytest.raises(GradingFailure, match="targets"):
        _check()


def _given_namespace():
    namespace = {"tf": tf}
    exec("def slow(x):\n    return helper(x) * 2\n\ndef helper(x):\n    return x\n", namespace)
    return namespace


def test_given_code_redefined_or_its_helpers_replaced_stops_the_check():
    ns = _given_namespace()
    guard.given(ns["slow"])
    _check()
    ns["helper"] = lambda x: x + 1  # slow the baseline through what it calls
    with pytest.raises(GradingFailure, match="helper .used by the given slow"):
        _check()


def test_given_code_replaced_or_registered_again_stops_the_check():
    ns = _given_namespace()
    guard.given(ns["slow"])
    exec("def slow(x):\n    return x * 3\n", ns)
    guard.given(ns["slow"])  # registering the new one does not help
    with pytest.raises(GradingFailure, match="slow"):
        _check()


GIVEN_CELL = (
    "SCALE = 2\n"
    "def slow(x):\n    return helper(x) * SCALE + OFFSET\n\n"
    "def helper(x):\n    return x\n\n"
    "guard.given(slow)\n"
)


def _run_cell(source: str, namespace: dict) -> None:
    """Run ``source`` as a notebook cell runs: compiled on its own and executed as a module's code."""
    exec(compile(source, "<cell>", "exec"), namespace)


def test_the_given_cell_run_again_as_it_is_is_harmless():
    ns = {"guard": guard, "OFFSET": 0}
    _run_cell(GIVEN_CELL, ns)
    first = ns["slow"]
    _check()
    _run_cell(GIVEN_CELL, ns)  # the learner runs the locked cell again (or Run All after a partial run)
    _run_cell(GIVEN_CELL, ns)
    assert ns["slow"] is not first and guard.is_given(ns["slow"]) and not guard.is_given(first)
    _check()
    ns["helper"] = lambda x: x + 1  # what the given code uses, changed after the cell ran again, is still noticed
    with pytest.raises(GradingFailure, match="helper .used by the given slow"):
        _check()


def test_the_given_cell_run_again_does_not_take_a_name_it_does_not_define_as_it_is_now():
    ns = {"guard": guard, "OFFSET": 0}
    _run_cell(GIVEN_CELL, ns)
    ns["OFFSET"] = 100  # defined before the given cell, by another cell: changed, then the given cell run again
    _run_cell(GIVEN_CELL, ns)
    with pytest.raises(GradingFailure, match="OFFSET .used by the given slow"):
        _check()


def test_the_given_code_registered_again_from_another_cell_stops_the_check():
    ns = {"guard": guard, "OFFSET": 0}
    _run_cell(GIVEN_CELL, ns)
    _run_cell(GIVEN_CELL.replace("SCALE = 2", "SCALE = 0"), ns)  # the same functions from a changed cell
    with pytest.raises(GradingFailure, match="slow .registered as given code twice"):
        _check()


def test_a_builtin_shadowed_before_the_given_cell_is_noticed():
    ns = _given_namespace()
    exec("def range(n):\n    return [0]\n\ndef uses(n):\n    return list(range(n))\n", ns)
    guard.given(ns["uses"])
    with pytest.raises(GradingFailure, match="range .a builtin"):
        _check()


def _unregistered(x):
    return x


def test_speed_checks_take_baselines_only_from_given_code():
    with pytest.raises(ValueError, match="no locked cell registered"):
        grading.assert_speedup(
            lambda x: x,
            _unregistered,
            exercise="01_tensors.keep_data_on_device",
            make_inputs=lambda: (np.random.default_rng().random(3),),
            target=1.0,
        )


def test_a_thread_left_running_by_the_answer_stops_the_speed_check():
    ns = _given_namespace()
    guard.given(ns["slow"])
    stop = threading.Event()
    worker = threading.Thread(target=lambda: stop.wait(10), name="busy", daemon=True)
    worker.start()
    try:
        with pytest.raises(GradingFailure, match="other work runs in the kernel .thread 'busy'"):
            grading.assert_speedup(
                lambda x: tf.constant(x) * 2,
                ns["slow"],
                exercise="01_tensors.keep_data_on_device",
                make_inputs=lambda: (np.random.default_rng().random(3),),
                target=1.0,
                pairs=1,
            )
    finally:
        stop.set()
        worker.join()


def test_patching_during_the_timing_is_noticed_between_pairs():
    ns = _given_namespace()
    guard.given(ns["slow"])
    real_sleep = time.sleep
    calls = []

    def patches_later(x):
        calls.append(1)
        if len(calls) == 5:
            time.sleep = lambda s: None  # changed while being timed
        return ns["slow"](x)

    try:
        with pytest.raises(GradingFailure, match="time.sleep"):
            grading.assert_speedup(
                patches_later,
                ns["slow"],
                exercise="01_tensors.keep_data_on_device",
                make_inputs=lambda: (tf.constant(np.random.default_rng().random(3)),),
                target=0.0,
                pairs=3,
            )
    finally:
        time.sleep = real_sleep


def test_course_modules_are_loaded_and_guarded_before_a_notebook_imports_them():
    import sys

    assert "tfperf.experiments.gpu_sync" in sys.modules  # loaded by arm(), before any learner code
    from tfperf.experiments import gpu_sync

    original = gpu_sync.train_step
    vars(gpu_sync)["train_step"] = lambda *args: original(*args)
    try:
        with pytest.raises(GradingFailure, match="gpu_sync.train_step"):
            _check()
    finally:
        vars(gpu_sync)["train_step"] = original


def test_a_module_imported_after_arming_and_a_class_that_appears_later_are_guarded_from_then_on(monkeypatch):
    """A library module first imported after the setup cell is taken as it is at the next check; so is a class that
    appears in a guarded module under a new name; a deleted function is a change too."""
    import sys
    import types

    lazy = types.ModuleType("numpy._tfperf_lazy_for_tests")
    exec("def scale(x):\n    return 2 * x\n", vars(lazy))
    monkeypatch.setitem(sys.modules, lazy.__name__, lazy)
    _check()  # learned here, as it is
    original = lazy.scale
    lazy.scale = lambda x: x
    with pytest.raises(GradingFailure, match="_tfperf_lazy_for_tests.scale"):
        _check()
    lazy.scale = original
    _check()

    exec("class Late:\n    def step(self):\n        return 1\n", vars(lazy))
    lazy.Late.__module__ = lazy.__name__
    _check()  # the new class is learned
    step = lazy.Late.step
    lazy.Late.step = lambda self: 2
    with pytest.raises(GradingFailure, match="Late.step"):
        _check()
    lazy.Late.step = step

    del lazy.scale
    with pytest.raises(GradingFailure, match="_tfperf_lazy_for_tests.scale"):
        _check()
    lazy.scale = original
    _check()


def test_a_given_class_is_guarded_like_a_function():
    namespace = {"tf": tf}
    exec("class Given:\n    def step(self):\n        return helper()\n\ndef helper():\n    return 1\n", namespace)
    guard.given(namespace["Given"])
    _check()
    namespace["Given"].step = lambda self: 2  # a method replaced
    with pytest.raises(GradingFailure, match="Given .its code was replaced"):
        _check()


def test_processes_started_before_the_setup_cell_do_not_compete():
    import subprocess

    before = subprocess.Popen(["sleep", "30"])
    try:
        guard.arm()
        assert guard.competitors() == []
        after = subprocess.Popen(["sleep", "30"])
        try:
            assert guard.competitors() == [f"child process {after.pid}"]
        finally:
            after.kill()
            after.wait()
    finally:
        before.kill()
        before.wait()


@pytest.mark.slow
def test_the_librarys_tf_data_service_does_not_compete_but_a_process_beside_it_does():
    import subprocess

    from tfperf.runtime import servers

    guard.arm()
    with servers.DataService(workers=1) as service:
        assert len(service.pids()) == 2 and guard.competitors() == []
        other = subprocess.Popen(["sleep", "30"])
        try:
            assert guard.competitors() == [f"child process {other.pid}"]
        finally:
            other.kill()
            other.wait()
    assert servers.library_pids() == set()


def test_the_kernels_own_messaging_thread_does_not_compete():
    """pyzmq starts its garbage-collector thread the first time the kernel sends a large output
    (an inline plot) without copying it: a speed check after a plot must still run."""
    garbage = pytest.importorskip("zmq.utils.garbage")
    garbage.gc.start()  # what sending the first large output does in a kernel
    assert garbage.gc.thread.is_alive()
    assert guard.competitors() == []

    class LookAlike(garbage.GarbageCollectorThread):  # an answer's own thread of a similar kind still counts
        pass

    stop = threading.Event()
    worker = LookAlike(garbage.gc)
    worker.run = lambda: stop.wait(10)
    worker.name = "look-alike"
    worker.start()
    try:
        assert guard.competitors() == ["thread 'look-alike'"]
    finally:
        stop.set()
        worker.join()


def test_arming_loads_no_module_of_the_layers_above_grading():
    """Preloading nbgrader's side (autograding imports nbgrader and nbconvert) cost every kernel seconds."""
    import subprocess
    import sys

    code = (
        "import sys\nfrom tfperf.grading import guard\nguard.arm()\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('nbgrader', 'nbconvert') "
        "or m.startswith(('tfperf.autograding.', 'tfperf.classgrading.', 'tfperf.authoring.'))))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"
    assert "tfperf.experiments.gpu_sync" in sys.modules  # what checks use is still preloaded


def test_items_of_a_result_that_run_code_when_read_are_each_checked_with_the_guard_around_them():
    """A result's items are compared without a verify around each only where reading them runs no code but NumPy's
    and TensorFlow's. An item whose conversion would make NumPy's comparison accept anything, and a later item's that
    puts it back, still stop the check (now before either runs); a plain list is checked as before."""
    real = np.allclose

    class Sly:
        def __init__(self, value, act):
            self.value, self.act = value, act

        def numpy(self):
            self.act()
            return self.value

    expected = [np.ones(3, np.float32), np.ones(3, np.float32)]
    grading.check_same_result([np.ones(3, np.float32), tf.ones(3)], expected, what="plain")
    with pytest.raises(GradingFailure, match="differs"):
        grading.check_same_result([np.ones(3, np.float32), np.zeros(3, np.float32)], expected, what="plain")
    wrong_then_undone = [
        Sly(np.zeros(3, np.float32), lambda: setattr(np, "allclose", lambda *a, **k: True)),
        Sly(np.ones(3, np.float32), lambda: setattr(np, "allclose", real)),
    ]
    try:  # refused before its numpy() runs: a class of the answer's own is not converted (results.as_array)
        with pytest.raises(GradingFailure, match="sly.0. is a Sly: expected a tensor"):
            grading.check_same_result(wrong_then_undone, expected, what="sly")
        assert np.allclose is real
    finally:
        np.allclose = real


def test_attributes_the_library_keeps_replaced_are_accepted_and_only_those(monkeypatch):
    original_asarray, original_allclose = np.asarray, np.allclose
    monkeypatch.setattr(np, "asarray", lambda *a, **k: original_asarray(*a, **k))
    with pytest.raises(GradingFailure, match="numpy.asarray"):
        _check()
    guard.accept([(np, "asarray")])  # as a grading worker does for the counters it keeps installed
    _check()
    monkeypatch.setattr(np, "allclose", lambda *a, **k: True)
    with pytest.raises(GradingFailure, match="numpy.allclose"):
        _check()
    monkeypatch.setattr(np, "allclose", original_allclose)
    _check()
