"""Red team, chapter 4: pipelines that earn the points only on paper.

Classes of the grading-integrity issue: (1) remembering, (2) changing what the grader reads,
(4) fooling a counter, (5) the wrong idea. Every case here is a fast_pipeline answer.
"""

from tests.grading.submission import Submission

_HEADER = "def fast_pipeline(store, batch):\n"

# Skips the storage (its records straight from memory: no waits) and writes the store's private
# counters so that the checks would see every record read and every read waited for.
_RESETS_PRIVATE_COUNTERS = (
    _HEADER
    + """    store._reads = len(store)                        # claim the reads instead of making them
    store._seconds_waited = 10.0
    keys = tf.range(len(store), dtype=tf.int64)
    ds = tf.data.Dataset.from_tensor_slices((keys, store._records)).batch(batch)
    ds = ds.map(tf_data.decode, num_parallel_calls=tf.data.AUTOTUNE).cache()
    return ds.map(tf_data.augment, num_parallel_calls=tf.data.AUTOTUNE).prefetch(tf.data.AUTOTUNE)
"""
)

# The same through a class of the cell: its method sets self._..., run on the store through the class,
# under another name (the screen once looked for the class's own name only; tests/unit/autograding/test_grading_screen.py
# has the other ways: the class itself, getattr, a subclass, type(...)).
_COUNTERS_THROUGH_A_CLASS_METHOD = (
    """class _Claims:
    def claim(self, reads, seconds):
        self._reads = reads
        self._seconds_waited = seconds


_Helper = _Claims


"""
    + _HEADER
    + """    _Helper.claim(store, len(store), 10.0)            # runs the method on the store, not on a _Claims
    keys = tf.range(len(store), dtype=tf.int64)
    ds = tf.data.Dataset.from_tensor_slices((keys, store._records)).batch(batch)
    ds = ds.map(tf_data.decode, num_parallel_calls=tf.data.AUTOTUNE).cache()
    return ds.map(tf_data.augment, num_parallel_calls=tf.data.AUTOTUNE).prefetch(tf.data.AUTOTUNE)
"""
)

# Swaps the store's read function for one that does not wait, keeping the counters honest.
_SWAPS_THE_READER = (
    _HEADER
    + """    store._python = lambda key: store._records[int(key)]   # read() now returns at once
    ds = tf.data.Dataset.range(len(store))
    ds = ds.map(lambda key: (key, store.read(key)), num_parallel_calls=tf.data.AUTOTUNE).batch(batch)
    ds = ds.map(tf_data.decode, num_parallel_calls=tf.data.AUTOTUNE).cache()
    return ds.map(tf_data.augment, num_parallel_calls=tf.data.AUTOTUNE).prefetch(tf.data.AUTOTUNE)
"""
)

# Resets the counters through the public method after a first pass that read everything:
# every record is then read twice in the first epoch (the check counts reads after training).
_RESETS_THROUGH_THE_PUBLIC_METHOD = (
    _HEADER
    + """    ds = tf.data.Dataset.range(len(store))
    ds = ds.map(lambda key: (key, store.read(key)), num_parallel_calls=tf.data.AUTOTUNE).batch(batch)
    ds = ds.map(tf_data.decode, num_parallel_calls=tf.data.AUTOTUNE)   # no cache: every epoch reads again
    ds = ds.map(tf_data.augment, num_parallel_calls=tf.data.AUTOTUNE).prefetch(tf.data.AUTOTUNE)

    def forget(keys):
        store.reset_counts()                             # ... and hides it from the read counter
        return keys

    def forget_reads(keys, features):                    # for every batch (tf.py_function, not only while tracing)
        keys = tf.py_function(forget, [keys], tf.int64)
        keys.set_shape([None])
        return keys, features
    return ds.map(forget_reads).prefetch(tf.data.AUTOTUNE)
"""
)

# Reads the records one at a time (a plain map over the store's reads: no parallel reads), caches them and
# prefetches, and returns the pipeline as an object of its own subclass of the prefetch dataset whose
# _as_serialized_graph describes the reference's pipeline. The stages check read the graph through the
# object's own method and believed it (tests/unit/grading/test_grading_pipelines.py shows the check alone).
_DESCRIBES_ANOTHER_PIPELINE = (
    _HEADER
    + """    def build(parallel):
        ds = tf.data.Dataset.range(len(store))
        ds = ds.map(lambda key: (key, store.read(key)), num_parallel_calls=parallel).batch(batch).cache()
        ds = ds.map(tf_data.decode, num_parallel_calls=tf.data.AUTOTUNE)
        return ds.map(tf_data.augment, num_parallel_calls=tf.data.AUTOTUNE)

    shown = build(tf.data.AUTOTUNE).prefetch(tf.data.AUTOTUNE)

    class Described(type(shown)):
        def _as_serialized_graph(self, *args, **kwargs):
            return shown._as_serialized_graph(*args, **kwargs)

    return Described(build(None), tf.data.AUTOTUNE)
"""
)

RED_TEAM = [
    # (4) Writes the store's private counters: flagged by the static screen, the exercise scores 0
    #     (without the screen: the structure check fails, no stage reads through the store).
    Submission(
        "red4_resets_private_counters",
        {"fast_pipeline": _RESETS_PRIVATE_COUNTERS},
        {"pipeline_tests": 0, "pipeline_speed_tests": 0},
    ),
    # (4) The same through a method of a class of the cell, taken through an alias of the class and
    #     called on the store: the screen flags the class passed on as a value; the counters live
    #     outside the store anyway.
    Submission(
        "red4_counters_through_a_class_method",
        {"fast_pipeline": _COUNTERS_THROUGH_A_CLASS_METHOD},
        {"pipeline_tests": 0, "pipeline_speed_tests": 0},
    ),
    # (2) Replaces the store's private read function: flagged by the screen.
    Submission(
        "red2_swaps_the_reader", {"fast_pipeline": _SWAPS_THE_READER}, {"pipeline_tests": 0, "pipeline_speed_tests": 0}
    ),
    # (4) Calls the public reset_counts for every batch, in a pipeline without cache: not flagged (a
    #     public method); the structure check fails (nothing cached), and the speed check's count of
    #     reads after training falls short of the records (each batch reset it).
    Submission(
        "red4_resets_through_the_public_method",
        {"fast_pipeline": _RESETS_THROUGH_THE_PUBLIC_METHOD},
        {"pipeline_tests": 0, "pipeline_speed_tests": 0},
    ),
    # (2) Describes another pipeline than the one it runs, through a private method of its own subclass of a
    #     tf.data class: flagged by the screen (a library class's private methods), the exercise scores 0;
    #     without the screen, the stages check refuses a dataset whose class TensorFlow did not define.
    Submission(
        "red2_describes_another_pipeline",
        {"fast_pipeline": _DESCRIBES_ANOTHER_PIPELINE},
        {"pipeline_tests": 0, "pipeline_speed_tests": 0},
    ),
]
