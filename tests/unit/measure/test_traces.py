"""The trace counter sees every trace of every tf.function, and restores TensorFlow after."""

import pytest

tf = pytest.importorskip("tensorflow")

from tfperf.measure import traces  # noqa: E402


def test_counts_traces_of_any_function_exactly():
    @tf.function
    def f(x, n):
        return x * n

    x = tf.constant(1.0)
    with traces.counting() as t:
        for n in range(5):  # a new Python int: a new trace each time
            f(x, n)
        for n in range(5):  # the same values again: cached, no trace
            f(x, n)
        f(x, tf.constant(1.0))  # a tensor: one more trace
        f(x, tf.constant(2.0))  # same signature: cached
    assert t.count == 6


def test_counts_functions_created_inside_the_block_and_nests():
    with traces.counting() as outer:
        for _ in range(3):
            g = tf.function(lambda x: x + 1)  # a new function every time: a trace each time
            with traces.counting() as inner:
                g(tf.constant(1.0))
    assert (outer.count, inner.count) == (3, 1)


def test_restores_on_exceptions():
    from tensorflow.python.eager.polymorphic_function import tracing_compilation as tc

    original = tc._create_concrete_function
    with pytest.raises(ValueError):
        with traces.counting():
            raise ValueError
    assert tc._create_concrete_function is original
