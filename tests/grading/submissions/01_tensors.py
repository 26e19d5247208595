"""Plausible answers to chapter 1's exercises, and the points each must get."""

from tests.grading import attacks
from tests.grading.submission import Submission

UNFIXED_ROW_SCORES = """
def row_scores(table, weights, steps):
    return row_scores_unfixed(table, weights, steps)
"""

SUBMISSIONS = [
    # Concept checks: two right (one in capitals, with a space), two wrong: the right ones score.
    Submission(
        "concepts_two_wrong",
        {"concepts": 'dtype_mix = "C "\nweights_are_variables = "a"\nsoft_placement = "b"\nnumpy_of_gpu_tensor = "b"'},
        {"concepts_weights_are_variables": 0, "concepts_numpy_of_gpu_tensor": 0},
    ),
    # Honest, written with what a restricted answer compiles differently (RestrictedPython, tfperf.autograding.
    # restricted): a class with super().__init__ and __call__, an attribute and an item updated in place, a private
    # helper name, unpacking, a comprehension. Full points.
    Submission(
        "honest_class_and_private_helper",
        {
            "row_scores": """
class _Scorer:
    def __init__(self, table, weights):
        super().__init__()
        self.rows = tf.identity(tf.convert_to_tensor(table))
        self.weights = weights
        self.calls = 0
    def __call__(self, row):
        self.calls += 1
        return tf.reduce_sum(self.rows[row] * self.weights)

def row_scores(table, weights, steps):
    with tf.device(device.compute_device()):
        scorer = _Scorer(table, weights)
        count, _ = table.shape
        seen = [0]
        seen[0] += steps
        return tf.stack([scorer(step % count) for step in range(seen[0])])
"""
        },
    ),
    # The unfixed code handed in as the answer: same results, no speedup.
    Submission("unfixed", {"row_scores": UNFIXED_ROW_SCORES}, {"row_scores_tests": 0}),
    # "Fixed" by switching to tf.constant, but still converting inside the loop.
    Submission(
        "still_converts_in_loop",
        {
            "row_scores": """
def row_scores(table, weights, steps):
    scores = []
    for step in range(steps):
        rows = tf.constant(table)
        scores.append(tf.reduce_sum(rows[step % table.shape[0]] * weights))
    return tf.stack(scores)
"""
        },
        {"row_scores_tests": 0},
    ),
    # Fast, but skips work: scores only the first row.
    Submission(
        "skips_work",
        {
            "row_scores": """
def row_scores(table, weights, steps):
    first = tf.reduce_sum(tf.convert_to_tensor(table[0]) * weights)
    return tf.fill([steps], first)
"""
        },
        {"row_scores_tests": 0},
    ),
    # The unfixed arithmetic: int32 * float32 raises InvalidArgumentError.
    Submission(
        "no_cast",
        {
            "weighted_mean": """
def weighted_mean(counts, weights):
    return tf.reduce_sum(counts * weights) / tf.reduce_sum(weights)
"""
        },
        {"weighted_mean_tests": 0},
    ),
    # Casts the wrong operand: runs, but the fractions are lost.
    Submission(
        "casts_weights",
        {
            "weighted_mean": """
def weighted_mean(counts, weights):
    weights = tf.cast(weights, tf.int32)
    return tf.cast(tf.reduce_sum(counts * weights) / tf.reduce_sum(weights), tf.float32)
"""
        },
        {"weighted_mean_tests": 0},
    ),
    # A crash in one exercise and an endless loop in the other: both cost their points only,
    # the loop is interrupted at the cell timeout, and grading goes on.
    Submission(
        "crashes_and_hangs",
        {
            "weighted_mean": """
def weighted_mean(counts, weights):
    raise ValueError("not today")
""",
            "row_scores": """
def row_scores(table, weights, steps):
    while True:
        pass
""",
        },
        {"weighted_mean_tests": 0, "row_scores_tests": 0},
        hangs=True,
    ),
    # Correct answers that also warn and write to stderr on every call: full marks.
    Submission(
        "correct_but_noisy",
        {
            "weighted_mean": """
import sys, warnings
warnings.warn("defining weighted_mean")
def weighted_mean(counts, weights):
    warnings.warn("weighted_mean is called", UserWarning)
    print("debug: weighted_mean", file=sys.stderr)
    return tf.reduce_sum(tf.cast(counts, tf.float32) * weights) / tf.reduce_sum(weights)
""",
            "row_scores": """
import os, warnings
def row_scores(table, weights, steps):
    warnings.warn("row_scores is called", RuntimeWarning)
    os.write(2, b"native debug line\\n")
    rows = tf.convert_to_tensor(table)
    return tf.stack([tf.reduce_sum(rows[s % table.shape[0]] * weights) for s in range(steps)])
""",
        },
    ),
]


# Reaching outside the notebook (issue 7, class 3): see tests/grading/attacks.py.
_WRONG_WEIGHTED_MEAN = """
def weighted_mean(counts, weights):
    return tf.reduce_sum(counts * weights) / tf.reduce_sum(weights)
"""
_CORRECT_ROW_SCORES = """
def row_scores(table, weights, steps):
    rows = tf.convert_to_tensor(table)
    return tf.stack([tf.reduce_sum(rows[s % table.shape[0]] * weights) for s in range(steps)])
"""
_SLOWED_GIVEN = """
import time
def row_scores_unfixed(table, weights, steps):
    time.sleep(2)
    return tf.stack([tf.reduce_sum(tf.convert_to_tensor(table)[s % table.shape[0]] * weights) for s in range(steps)])

def table_inputs(rows=3000, columns=1000, steps=50, seed=None):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((rows, columns), dtype=np.float32),
            tf.constant(rng.standard_normal(columns, dtype=np.float32)), steps)
"""

SUBMISSIONS += [
    Submission(
        "writes_the_gradebook",
        {"weighted_mean": attacks.writes_the_gradebook(_WRONG_WEIGHTED_MEAN)},
        {"weighted_mean_tests": 0},
        kernel=True,
    ),
    # Honest work is not lost (class 7). A correct row_scores after a line that ends the kernel:
    # the kernel is gone before the test runs, which scores 0; weighted_mean, graded before,
    # keeps its points, and the other students are graded.
    Submission(
        "row_scores_then_os_exit",
        {"row_scores": _CORRECT_ROW_SCORES + "import os\nos._exit(1)\n"},
        {"row_scores_tests": 0},
        kernel=True,
    ),
    Submission(
        "row_scores_then_segfault",
        {"row_scores": _CORRECT_ROW_SCORES + "import ctypes\nctypes.string_at(0)\n"},
        {"row_scores_tests": 0},
        kernel=True,
    ),
    Submission(
        "row_scores_then_sigkill",
        {"row_scores": _CORRECT_ROW_SCORES + "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n"},
        {"row_scores_tests": 0},
        kernel=True,
    ),
    # An endless loop that ignores the interrupt sent at the time limit: that kernel is given up and its
    # exercise scores 0 (plain nbgrader dropped the whole submission).
    Submission(
        "row_scores_ignores_the_interrupt",
        {"row_scores": "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True:\n    pass\n"},
        {"row_scores_tests": 0},
        hangs=True,
    ),
    # A kernel that dies in the first exercise costs that exercise only (issue 24): a new kernel, brought to
    # the state of the earlier cells, grades the correct row_scores (claimed here at its full 3 points, so
    # the packing keeps its answer). Before, the rest of the notebook scored 0.
    Submission(
        "weighted_mean_os_exit",
        {"weighted_mean": "import os\nos._exit(3)\n"},
        {"weighted_mean_tests": 0, "row_scores_tests": 3},
        kernel=True,
    ),
    # Tampering with the instructor's cells: they are restored from the gradebook, and the
    # answer is scored on its merits.
    Submission(
        "test_cell_edited_to_pass",
        {"weighted_mean": _WRONG_WEIGHTED_MEAN},
        {"weighted_mean_tests": 0},
        locked_edits={"weighted_mean_tests": "print('Passed')"},
    ),
    Submission(
        "given_baseline_slowed",
        {"row_scores": UNFIXED_ROW_SCORES},
        {"row_scores_tests": 0},
        locked_edits={"row_scores_given": _SLOWED_GIVEN},
    ),
    # Honest answers whose test cell's metadata was changed (by accident or not): full points,
    # out of the instructor's points.
    Submission("test_cell_worth_100_points", metadata_edits={"weighted_mean_tests": {"points": 100}}),
    Submission("test_cell_deleted", metadata_edits={"weighted_mean_tests": None}),
    Submission("test_cell_marked_ungraded", metadata_edits={"row_scores_tests": {"grade": False, "locked": False}}),
    Submission("test_cell_renamed", metadata_edits={"weighted_mean_tests": {"grade_id": "my_tests"}}),
    # No notebook handed in: reported, every test scores 0, the other students are graded.
    Submission("no_notebook", without_notebook=True, expected={"weighted_mean_tests": 0, "row_scores_tests": 0}),
]
