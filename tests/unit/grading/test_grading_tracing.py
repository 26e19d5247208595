"""Unit tests of the tracing and output assertions of tfperf.grading (chapter 2)."""

import sys

import pytest

from tfperf import grading
from tfperf.runtime import logs

tf = pytest.importorskip("tensorflow")


def _double(x, k):
    return x * tf.cast(k, x.dtype)


def test_tracing_count_rejects_plain_python_function():
    with pytest.raises(grading.GradingFailure, match=r"(?s)not a tf\.function.*Reread the section \"4\. Retracing\""):
        grading.tracing_count(_double, what="predict", section="4. Retracing")


def test_traces_at_most_passes_with_tensor_arguments():
    fn = tf.function(_double)
    x = tf.ones([3])
    assert grading.assert_traces_at_most(fn, 1, [(x, tf.constant(i)) for i in range(5)]) == 1


def test_traces_at_most_counts_only_new_traces():
    fn = tf.function(_double)
    fn(tf.ones([3]), 1)
    fn(tf.ones([3]), 2)
    assert grading.assert_traces_at_most(fn, 0, [(tf.ones([3]), 1)]) == 0


def test_traces_at_most_fails_on_python_ints_with_a_clear_message():
    fn = tf.function(_double)
    with pytest.raises(grading.GradingFailure, match=r"(?s)traced 4 times during 4 calls; expected at most 1.*Reread"):
        grading.assert_traces_at_most(fn, 1, [(tf.ones([3]), i) for i in range(4)], what="f", section="4. Retracing")


def test_traces_at_most_with_run_and_never_called():
    fn = tf.function(_double)
    assert grading.assert_traces_at_most(fn, 1, run=lambda: [fn(tf.ones([2]), tf.constant(i)) for i in range(3)]) == 1
    unused = tf.function(_double)
    with pytest.raises(grading.GradingFailure, match="graphs ran 0 times"):
        grading.assert_traces_at_most(unused, 1, run=lambda: None)


def test_traces_at_most_fails_a_graph_whose_work_runs_in_python_inside_it():
    """Traced once, but the graph only calls a tf.py_function (or tf.numpy_function) that does the work eagerly."""

    def eager_body(x, k):
        return x * tf.cast(k, x.dtype)

    spec = [tf.TensorSpec([None], tf.float32), tf.TensorSpec([], tf.int32)]
    wrapped = tf.function(lambda x, k: tf.py_function(eager_body, [x, k], tf.float32), input_signature=spec)
    numpy_wrapped = tf.function(lambda x, k: tf.numpy_function(lambda a, b: a * a.dtype.type(b), [x, k], tf.float32))
    calls = [(tf.ones([3]), tf.constant(i)) for i in range(3)]
    with pytest.raises(grading.GradingFailure, match=r"graph calls back into Python \(1 tf.py_function"):
        grading.assert_traces_at_most(wrapped, 1, calls, what="predict")
    with pytest.raises(grading.GradingFailure, match="calls back into Python"):
        grading.assert_traces_at_most(numpy_wrapped, 1, calls, what="predict")
    nested = tf.function(lambda x, k: wrapped(x, k) + 1.0, input_signature=spec)  # inside a function it calls
    with pytest.raises(grading.GradingFailure, match="calls back into Python"):
        grading.assert_traces_at_most(nested, 1, calls, what="predict")


def test_traces_at_most_reports_learner_errors_and_stays_quiet(capfd):
    fn = tf.function(lambda x: tf.reshape(x, [7]))
    with pytest.raises(grading.GradingFailure, match="raised"):
        grading.assert_traces_at_most(fn, 1, [(tf.ones([3]),)])
    assert capfd.readouterr().err == ""


def test_prints_at_most_none_fails_a_tf_print_whose_lines_go_where_they_are_not_read(tmp_path):
    """A tf.print to a file (or to TensorFlow's log below the level shown) still runs on every call of its graph."""

    @tf.function
    def to_a_file(x):
        tf.print("total:", tf.reduce_sum(x), output_stream=f"file://{tmp_path / 'log.txt'}")
        return x * 2

    @tf.function
    def quiet(x):
        return x * 2

    with pytest.raises(grading.GradingFailure, match=r"ran graphs that hold 1 tf.print node\(s\)"):
        grading.assert_prints_at_most(to_a_file, (tf.ones([3]),), 0, what="step")
    assert (tmp_path / "log.txt").read_text().startswith("total: 3")
    grading.assert_prints_at_most(quiet, (tf.ones([3]),), 0, what="step")
    grading.assert_prints_at_most(to_a_file, (tf.ones([3]),), 1, what="step")  # a limit above 0: lines are counted


def test_prints_each_call_accepts_tf_print_on_both_streams():
    @tf.function
    def to_stderr(x):
        tf.print("total:", tf.reduce_sum(x))
        return x

    @tf.function
    def to_stdout(x):
        tf.print("total:", tf.reduce_sum(x), output_stream=sys.stdout)
        return x

    calls = [(tf.constant([40.0, 2.0]),), (tf.constant([7.0, 10.0]),)]
    for fn in (to_stderr, to_stdout):
        printed = grading.assert_prints_each_call(fn, calls, [r"\b42\b", r"\b17\b"])
        assert "42" in printed[0] and "17" in printed[1]


def test_prints_each_call_fails_when_python_print_runs_only_while_tracing():
    @tf.function
    def traced_print(x):
        print("total:", tf.reduce_sum(x))
        return x

    calls = [(tf.constant([40.0, 2.0]),), (tf.constant([7.0, 10.0]),)]
    with pytest.raises(grading.GradingFailure, match=r"Call 1 of 2 .*expected output matching"):
        grading.assert_prints_each_call(traced_print, calls, [r"\b42\b", r"\b17\b"], section="5. Side effects")


def test_captured_output_catches_python_stdout():
    with logs.captured_output() as out:
        print("hello from python")
    assert "hello from python" in out.stdout and "hello from python" in out.text


def test_speedup_with_varied_inputs_times_fresh_inputs():
    made = []

    def make_inputs():
        made.append(1)
        return (tf.constant(float(len(made))),)

    grading.assert_speedup(
        lambda v: v * 2, lambda v: v + v, exercise="none", make_inputs=make_inputs, target=0.0, pairs=2
    )
    assert len(made) > 6  # two for the result checks, the rest for timed calls


def test_check_same_as_compares_quietly(capfd):
    def reference(v):
        print("noise", file=sys.stderr)
        return v * 2

    grading.check_same_as(lambda v: v + v, reference, (tf.constant([1.0, 2.0]),), what="double")
    with pytest.raises(grading.GradingFailure, match="double differs"):
        grading.check_same_as(lambda v: v * 3, reference, (tf.constant([1.0, 2.0]),), what="double")
    assert capfd.readouterr().err == ""


def test_traces_at_most_fails_when_the_work_is_done_by_other_code():
    step = tf.function(_double)
    step(tf.ones([2]), tf.constant(1))  # traced once, beforehand

    def eager_loop():  # avoids tracing by not using the tf.function
        return [_double(tf.ones([2]), tf.constant(i)) for i in range(3)]

    with pytest.raises(grading.GradingFailure, match="graphs ran 0 times"):
        grading.assert_traces_at_most(step, 1, run=eager_loop, what="step")


def test_an_object_that_only_pretends_to_be_a_tf_function_fails():
    class Pretender:
        def __call__(self, x, k):
            return _double(x, k)

        def experimental_get_tracing_count(self):
            return 1

    with pytest.raises(grading.GradingFailure, match="not a tf.function"):
        grading.assert_traces_at_most(Pretender(), 1, [(tf.ones([2]), 1)])


def test_a_subclass_of_tf_functions_own_class_is_not_believed():
    """Its methods could report another function's traces and graphs than the one it calls."""
    honest = tf.function(_double)

    class Reports(type(honest)):
        def experimental_get_tracing_count(self):
            return 0

    pretender = Reports(_double, "pretender")
    with pytest.raises(grading.GradingFailure, match="subclass of tf.function's own"):
        grading.assert_traces_at_most(pretender, 1, [(tf.ones([2]), 1)], what="pretender")


def test_a_function_traced_ahead_for_every_value_fails_the_count_in_all():
    """Traced beforehand for each Python number it may get, it traces 0 times during the calls: TensorFlow's own
    count since it was made says otherwise."""
    step = tf.function(_double)
    for k in range(5):
        step(tf.ones([2]), k)
    assert grading.assert_traces_at_most(step, 0, [(tf.ones([2]), k) for k in range(5)], what="step") == 0
    with pytest.raises(grading.GradingFailure, match="has traced 5 times since it was made"):
        grading.assert_traces_at_most(step, 0, [(tf.ones([2]), 1)], what="step", in_all_at_most=2)
    once = tf.function(_double)
    assert (
        grading.assert_traces_at_most(once, 1, [(tf.ones([2]), tf.constant(k)) for k in range(5)], in_all_at_most=1)
        == 1
    )
