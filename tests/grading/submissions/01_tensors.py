"""Plausible answers to chapter 1's exercises, and the points each must get."""

from tests.grading.submission import Submission

UNFIXED_ROW_SCORES = '''
def row_scores(table, weights, steps):
    return row_scores_unfixed(table, weights, steps)
'''

SUBMISSIONS = [
    # The unfixed code handed in as the answer: same results, no speedup.
    Submission("unfixed", {"row_scores": UNFIXED_ROW_SCORES}, {"row_scores_tests": 0}),
    # "Fixed" by switching to tf.constant, but still converting inside the loop.
    Submission("still_converts_in_loop", {"row_scores": '''
def row_scores(table, weights, steps):
    scores = []
    for step in range(steps):
        rows = tf.constant(table)
        scores.append(tf.reduce_sum(rows[step % table.shape[0]] * weights))
    return tf.stack(scores)
'''}, {"row_scores_tests": 0}),
    # Fast, but skips work: scores only the first row.
    Submission("skips_work", {"row_scores": '''
def row_scores(table, weights, steps):
    first = tf.reduce_sum(tf.convert_to_tensor(table[0]) * weights)
    return tf.fill([steps], first)
'''}, {"row_scores_tests": 0}),
    # The unfixed arithmetic: int32 * float32 raises InvalidArgumentError.
    Submission("no_cast", {"weighted_mean": '''
def weighted_mean(counts, weights):
    return tf.reduce_sum(counts * weights) / tf.reduce_sum(weights)
'''}, {"weighted_mean_tests": 0}),
    # Casts the wrong operand: runs, but the fractions are lost.
    Submission("casts_weights", {"weighted_mean": '''
def weighted_mean(counts, weights):
    weights = tf.cast(weights, tf.int32)
    return tf.cast(tf.reduce_sum(counts * weights) / tf.reduce_sum(weights), tf.float32)
'''}, {"weighted_mean_tests": 0}),
    # Correct answers that also warn and write to stderr on every call: full marks.
    Submission("correct_but_noisy", {
        "weighted_mean": '''
import sys, warnings
warnings.warn("defining weighted_mean")
def weighted_mean(counts, weights):
    warnings.warn("weighted_mean is called", UserWarning)
    print("debug: weighted_mean", file=sys.stderr)
    return tf.reduce_sum(tf.cast(counts, tf.float32) * weights) / tf.reduce_sum(weights)
''',
        "row_scores": '''
import os, warnings
def row_scores(table, weights, steps):
    warnings.warn("row_scores is called", RuntimeWarning)
    os.write(2, b"native debug line\\n")
    rows = tf.convert_to_tensor(table)
    return tf.stack([tf.reduce_sum(rows[s % table.shape[0]] * weights) for s in range(steps)])
''',
    }),
]
