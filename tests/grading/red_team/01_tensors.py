"""Red team, chapter 1: answers that try to earn the speed points without keeping the data on the device.

Each case names the class of the grading-integrity issue it belongs to: (1) remembering instead of
computing, (2) changing what the grader reads, (3) deferring work past the clock, (4) fooling a counter,
(5) the wrong idea.
"""

from tests.grading.submission import Submission

_FIXED = """
def _fixed(table, weights, steps):
    with tf.device(device.compute_device()):
        rows = tf.identity(tf.convert_to_tensor(table))
        scores = [tf.reduce_sum(rows[step % table.shape[0]] * weights) for step in range(steps)]
        return tf.stack(scores)
"""

RED_TEAM = [
    # (2) Concept checks: wrong letters, and every later cell's hidden check rewritten in the kernel to
    # the visible one (an IPython input transformer): the kernel passes them; graded from the answer
    # cell as written, outside the kernel, they score 0.
    Submission(
        "red2_concepts_rewrites_the_hidden_checks",
        {
            "concepts": """
import IPython
IPython.get_ipython().input_transformers_post.append(
    lambda lines: [line.replace("check_answer(", "check_form(").replace(', "c", question', ", question")
                   .replace(', "b", question', ", question") for line in lines])
dtype_mix = "a"
weights_are_variables = "a"
soft_placement = "a"
numpy_of_gpu_tensor = "a"
"""
        },
        {
            "concepts_dtype_mix": 0,
            "concepts_weights_are_variables": 0,
            "concepts_soft_placement": 0,
            "concepts_numpy_of_gpu_tensor": 0,
        },
        kernel=True,
    ),
    # (1) Remembers the unfixed result per table object: timed calls get new tables, so nothing is reused.
    Submission(
        "red1_memo_by_object",
        {
            "row_scores": """
_memo = {}
def row_scores(table, weights, steps):
    key = (id(table), id(weights), steps)
    if key not in _memo:
        _memo[key] = row_scores_unfixed(table, weights, steps)
    return _memo[key]
"""
        },
        {"row_scores_tests": 0},
    ),
    # (1) Remembers by content fingerprint: new content on every timed call, so nothing is reused.
    Submission(
        "red1_memo_by_content",
        {
            "row_scores": """
import hashlib
_memo = {}
def row_scores(table, weights, steps):
    key = (hashlib.sha1(table.tobytes()).hexdigest(), steps)
    if key not in _memo:
        _memo[key] = row_scores_unfixed(table, weights, steps)
    return _memo[key]
"""
        },
        {"row_scores_tests": 0},
    ),
    # (1) Keeps the device copy of the last table, keyed on its shape: wrong scores for a new table.
    Submission(
        "red1_cache_copy_by_shape",
        {
            "row_scores": """
_copies = {}
def row_scores(table, weights, steps):
    if table.shape not in _copies:
        _copies[table.shape] = tf.identity(tf.convert_to_tensor(table))
    rows = _copies[table.shape]
    return tf.stack([tf.reduce_sum(rows[step % table.shape[0]] * weights) for step in range(steps)])
"""
        },
        {"row_scores_tests": 0},
    ),
    # (2) Lowers the target by patching the library.
    Submission(
        "red2_patches_target_for",
        {
            "row_scores": """
import tfperf.grading.targets
tfperf.grading.targets.target_for = lambda *args, **kwargs: 0.01
def row_scores(table, weights, steps):
    return row_scores_unfixed(table, weights, steps)
"""
        },
        {"row_scores_tests": 0},
    ),
    # (2) Lowers the target with a targets file of its own, named in the environment.
    Submission(
        "red2_own_targets_file",
        {
            "row_scores": """
import os
with open("my_targets.toml", "w") as f:
    f.write('["01_tensors.keep_data_on_device"]\\ncpu = 0.01\\ngpu = 0.01\\n')
os.environ["TFPERF_TARGETS"] = os.path.abspath("my_targets.toml")
def row_scores(table, weights, steps):
    return row_scores_unfixed(table, weights, steps)
"""
        },
        {"row_scores_tests": 0},
    ),
    # (2) Replaces the speed check with one that always passes: course modules refuse the assignment
    #     (the cell fails there), so the real check runs and fails the unfixed answer.
    Submission(
        "red2_replaces_the_speed_check",
        {
            "row_scores": """
def row_scores(table, weights, steps):
    return row_scores_unfixed(table, weights, steps)
from tfperf import grading
grading.assert_speedup = lambda *args, **kwargs: print("Passed")
"""
        },
        {"row_scores_tests": 0},
    ),
    # (2) Slows the baseline: TensorFlow's conversion made slower for everyone (the answer avoids it).
    Submission(
        "red2_slows_convert_to_tensor",
        {
            "row_scores": _FIXED
            + """
import time
_convert = tf.convert_to_tensor
def _slow_convert(*args, **kwargs):
    time.sleep(0.01)
    return _convert(*args, **kwargs)
tf.convert_to_tensor = _slow_convert
def row_scores(table, weights, steps):
    return _fixed(table, weights, steps)
"""
        },
        {"row_scores_tests": 0},
    ),
    # (3) Defers the work past the clock: returns at once an object that runs the unfixed code only when the
    # check converts it to compare (after the timed region). Refused before any timing: the result must be a
    # tensor, like the unfixed code's (measured: the same message with and without the timed region making
    # results concrete, tfperf.measure.timing.settle, which covers results that are not tensors).
    Submission(
        "red3_lazy_result_converted_after_the_clock",
        {
            "row_scores": """
class _Later:
    def __init__(self, args):
        self.args = args
    def __array__(self, dtype=None, copy=None):
        return np.asarray(row_scores_unfixed(*self.args), dtype=dtype)
def row_scores(table, weights, steps):
    return _Later((table, weights, steps))
"""
        },
        {"row_scores_tests": 0},
    ),
    # (3b) The same, disguised as NumPy's (issue 47: the timed calls took any class whose __module__ said "numpy" as
    # computed, and the work ran when the grading process asked for the drawn result, after its clock): converted
    # inside the clock now, like any object that is not NumPy's or TensorFlow's own.
    Submission(
        "red3b_lazy_result_that_says_it_is_numpys",
        {
            "row_scores": """
class ndarray:
    __module__ = "numpy"
    def __init__(self, args):
        self.args = args
    def numpy(self):
        return np.asarray(row_scores_unfixed(*self.args))
    def __array__(self, dtype=None, copy=None):
        return np.asarray(self.numpy(), dtype=dtype)
def row_scores(table, weights, steps):
    return ndarray((table, weights, steps))
"""
        },
        {"row_scores_tests": 0},
    ),
    # (3c) NumPy's conversion refused, the work done by the result's own numpy(), which the grading process's read of
    # the drawn result called after the clock (an outsider's review of 3b's fix): settled by its numpy() inside it.
    Submission(
        "red3c_lazy_result_that_refuses_numpy",
        {
            "row_scores": """
class Later:
    def __init__(self, args):
        self.args = args
    def __array__(self, dtype=None, copy=None):
        raise ValueError("not yet")
    def numpy(self):
        return np.asarray(row_scores_unfixed(*self.args))
def row_scores(table, weights, steps):
    return Later((table, weights, steps))
"""
        },
        {"row_scores_tests": 0},
    ),
    # (3d) The same work in numpy() of a subclass of TensorFlow's own TensorShape with a forged module: only
    # TensorFlow's classes themselves are taken as computed, so NumPy converts it (its dims) inside the clock, and
    # its numpy() is never read.
    Submission(
        "red3d_lazy_result_as_a_tensorflow_subclass",
        {
            "row_scores": """
class Later(tf.TensorShape):
    __module__ = "tensorflow.python.framework.tensor_shape"
    def __init__(self, args):
        super().__init__(None)
        self.args = args
    def numpy(self):
        return np.asarray(row_scores_unfixed(*self.args))
def row_scores(table, weights, steps):
    return Later((table, weights, steps))
"""
        },
        {"row_scores_tests": 0},
    ),
    # (2e) A wrong weighted_mean, and the test cell's only check replaced without naming setattr or getattr as a
    # call, which the static screen looks for: setattr applied by map (an outsider's attack on the worker). The test
    # cell then runs no check and no guard. Answers run restricted: setattr is the guarded one, which refuses a module.
    Submission(
        "red2e_check_replaced_through_map_setattr",
        {
            "weighted_mean": """
from tfperf import grading
list(map(setattr, [grading], ["check_function"], [lambda *args, **kwargs: None]))
def weighted_mean(counts, weights):
    return tf.reduce_mean(tf.cast(counts, tf.float32))
"""
        },
        {"weighted_mean_tests": 0},
    ),
    # (2f) The check's own module globals reached by getattr applied by functools.reduce to literal names, and the
    # comparison inside replaced: reading __globals__ is refused however the name is reached.
    Submission(
        "red2f_comparison_replaced_through_reduce_getattr",
        {
            "weighted_mean": """
import functools
from tfperf import grading
functools.reduce(getattr, ["check_function", "__globals__"], grading)["check_same_result"] = lambda *a, **k: None
def weighted_mean(counts, weights):
    return tf.reduce_mean(tf.cast(counts, tf.float32))
"""
        },
        {"weighted_mean_tests": 0},
    ),
]
