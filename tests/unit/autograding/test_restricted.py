"""Answers run restricted: what honest answers write runs as before, what reaches the grading is refused."""

import textwrap

import pytest

from tfperf.autograding import restricted
from tfperf.autograding.restricted import RestrictedAnswer

GIVEN = """
import os
import numpy as np
from tfperf import grading
from tfperf.measure import timing

class Given:
    pass

given = Given()
"""


@pytest.fixture
def namespace() -> dict:
    ns: dict = {"__name__": "__main__"}
    exec(GIVEN, ns)
    return ns


def run(source: str, namespace: dict) -> dict:
    restricted.run_answer(textwrap.dedent(source), "<cell 5>", namespace)
    return namespace


HONEST = {
    "a class with super().__init__ and attributes": (
        """
        class Counter:
            def __init__(self):
                super().__init__()
                self.n = 0
            def __call__(self, k):
                self.n += k
                return self.n
        c = Counter()
        c(2)
        result = c(3)
        """,
        5,
    ),
    "augmented assignment of an item": ("a = np.zeros(3)\na[1] += 2\nresult = float(a.sum())", 2.0),
    "a private helper name and _": ("_cache = {}\nfor _ in range(3):\n    _cache[_] = _ * 2\nresult = _cache[2]", 4),
    "unpacking, comprehensions, lambdas": ("pairs = [(1, 2), (3, 4)]\nresult = sum(a * b for a, b in pairs)", 14),
    "a variable named printed": ("printed = [1]\nresult = printed[0]", 1),
    "os.cpu_count and getattr of a public name": ("result = getattr(os, 'cpu_count')() > 0", True),
    "os.path": ("result = os.path.join('a', 'b')", "a/b"),
    "writes to its own objects": ("given.seen = 3\nresult = given.seen", 3),
    "str.format and format_map": (
        "result = '{} {x}'.format(1, x=2) + str.format('{0[1]}', [3, 4]) + '{a}'.format_map({'a': 5})",
        "1 245",
    ),
    "a dataclass with __post_init__ and a private attribute": (
        """
        import dataclasses

        @dataclasses.dataclass
        class Power:
            exponent: int = 2
            def __post_init__(self):
                self._cache = {}
            def __call__(self, x):
                if x not in self._cache:
                    self._cache[x] = x ** self.exponent
                return self._cache[x]
        result = Power()(3) + len(type(Power()).__name__)
        """,
        14,
    ),
    "slices, nonlocal, match": (
        """
        def counter():
            n = 0
            def bump(xs):
                nonlocal n
                n += len(xs[1:3])
                return n
            return bump
        bump = counter()
        bump([1, 2, 3, 4])
        match bump([5, 6, 7])[::-1] if False else bump([5, 6, 7]):
            case 4:
                result = "four"
            case _:
                result = "other"
        """,
        "four",
    ),
    "imports an answer uses": ("import math, functools\nresult = functools.reduce(lambda a, b: a * b, [2, 3])", 6),
}


@pytest.mark.parametrize("source, expected", HONEST.values(), ids=HONEST.keys())
def test_honest_answers_run(namespace, source, expected):
    assert run(source, namespace)["result"] == expected


def test_print_is_pythons_own_and_a_debug_line_may_go_to_stderr(namespace, capfd):
    run("print('loss', 3)\nos.write(2, b'native debug line\\n')", namespace)
    assert capfd.readouterr() == ("loss 3\n", "native debug line\n")


REFUSED = {
    "a dunder through getattr": "getattr(grading.check_same_as, '__glob' + 'als__')",
    "a private attribute": "x = grading.guard._state",
    "a check replaced through map(getattr)": "list(map(setattr, [grading], ['check_same_as'], [print]))",
    "a check replaced by assignment": "grading.check_same_as = print",
    "a module's attribute deleted": "del timing.settle",
    "the course's object changed": "timing.Unsettled.x = 1",
    "a library class changed": "np.ndarray.sum = lambda self: 0",
    "a given class changed": "Given.x = 1",
    "a function's attribute set": "f = lambda: 0\nf.x = 1",
    "os.write to another descriptor": "os.write(5, b'x')",
    "os.write imported by name": "from os import write",
    "os.environ imported by name": "from os import environ",
    "os.write by a computed name": "getattr(os, 'wri' + 'te')(5, b'x')",
    "sys.modules": "import sys\nsys.modules",
    "a generator's frame by a computed name": "g = (x for x in [1])\nf = getattr(g, 'gi_' + 'frame')",
    "a frame's caller": "g = (x for x in [1])\nf = getattr(getattr(g, 'gi_frame'), 'f_back')",
    "C types through NumPy": "c = getattr(np, 'ctypes' + 'lib')",
    "an array's raw memory": "a = np.zeros(2)\np = getattr(a, 'ctypes')",
    "strides outside the buffer": "s = getattr(getattr(np, 'lib'), 'stride_tricks').as_strided",
    "gc": "import gc",
    "ctypes": "import ctypes",
    "str.format reading attributes": "'{0.__globals__}'.format(grading.check_same_as)",
    "str.format through the type": "str.format('{0.__globals__}', grading.check_same_as)",
    "str.format_map reading a private attribute": "'{g._state}'.format_map({'g': grading.guard})",
    "a class statement with a metaclass": "class M(type): pass\nclass C(metaclass=M): pass",
    "eval": "eval('1')",
    "exec by name": "e = exec",
    "open": "open('/proc/self/mem')",
    "the guards themselves": "_getattr_ = getattr",
    "the builtins": "b = __builtins__",
}


@pytest.mark.parametrize("source", REFUSED.values(), ids=REFUSED.keys())
def test_what_reaches_the_grading_is_refused(namespace, source):
    with pytest.raises((RestrictedAnswer, NameError)):
        run(source, namespace)
    assert namespace["grading"].check_same_as.__module__ == "tfperf.grading.results"


def test_functions_the_answer_made_stay_restricted_after_it_ran(namespace):
    run("def later():\n    return getattr(grading, '__dict__')", namespace)
    exec("import re", namespace)  # a test cell after the answer: what it imports is allowed
    with pytest.raises(RestrictedAnswer):
        namespace["later"]()


def test_a_tf_function_body_stays_restricted_when_autograph_converts_it(namespace):
    tf = pytest.importorskip("tensorflow")
    run(
        """
        import tensorflow as tf

        @tf.function
        def total(x):
            s = tf.constant(0.0)
            for i in tf.range(3):          # AutoGraph's loop over a tensor still converts
                s += x * tf.cast(i, tf.float32)
            return s

        @tf.function
        def replaces():
            setattr(grading, "check_same_as", print)
            return tf.constant(1)
        """,
        namespace,
    )
    assert float(namespace["total"](tf.constant(2.0))) == 6.0
    with pytest.raises(RestrictedAnswer):
        namespace["replaces"]()
    assert namespace["grading"].check_same_as.__module__ == "tfperf.grading.results"


def test_what_the_exercise_withholds_or_does_not_import_is_refused_however_it_is_reached(namespace):
    from tfperf.measure import timing

    namespace["timing"] = timing
    guarded = {"imports": ("numpy", "tfperf"), "withheld": ("timing.compare",)}
    for source in (
        "f = timing.compare",
        "f = getattr(timing, 'comp' + 'are')",
        "from tfperf.measure.timing import compare",
        "import tfperf.measure.timing as t\nf = t.compare",
        "import math",
    ):
        with pytest.raises(RestrictedAnswer):
            restricted.run_answer(source, "<cell 5>", namespace, **guarded)
    restricted.run_answer("f = timing.settle\nimport numpy", "<cell 5>", namespace, **guarded)


def test_what_a_traced_function_captured_is_refused_and_a_keras_models_variables_are_not(namespace):
    """Chapter 5's count of training steps is a variable that every graph calling ``gpu_sync.train_step`` captures:
    an answer reaching it through its own function, graph or operations could wind it back."""
    tf = pytest.importorskip("tensorflow")
    run(
        """
        import tensorflow as tf
        import keras

        w = tf.Variable([1.0])

        @tf.function
        def step(x):
            w.assign_add(x)
            return x * 2

        def concrete():
            return step.get_concrete_function(tf.constant([1.0]))

        @tf.function
        def inside(x, route):
            y = step(x)
            graph = tf.compat.v1.get_default_graph()
            if route == "captures":
                return graph.captures
            if route == "variable_captures":
                return graph.variable_captures
            if route == "as_graph_def":
                return graph.as_graph_def()
            return y.op.inputs

        model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
        kept = len(model.variables) + len(model.trainable_variables) + len(model.inputs)
        handle = w.handle
        """,
        namespace,
    )
    assert namespace["kept"] == 5
    with pytest.raises(RestrictedAnswer, match="what it captured is not the answer's"):
        namespace["concrete"]()
    for route in ("captures", "variable_captures", "as_graph_def", "op"):
        with pytest.raises(RestrictedAnswer, match="what it captured is not the answer's"):
            namespace["inside"](tf.constant([1.0]), route)
