"""Round-trip cases of chapter 4 (04_tf_data): plausible wrong pipelines and diagnoses, and attempts to fool the checks."""

from tests.grading.submission import Submission

_HEADER = "def fast_pipeline(store, batch):\n"

_UNFIXED = (
    _HEADER
    + """    return naive_pipeline(store, batch)
"""
)

_PREFETCH_ALONE = (
    _HEADER
    + """    return naive_pipeline(store, batch).prefetch(tf.data.AUTOTUNE)
"""
)

_CACHE_AFTER_AUGMENT = (
    _HEADER
    + """    ds = tf.data.Dataset.range(len(store))
    ds = ds.map(lambda key: (key, store.read(key)), num_parallel_calls=tf.data.AUTOTUNE)
    ds = ds.batch(batch).map(tf_data.decode, num_parallel_calls=tf.data.AUTOTUNE)
    ds = ds.map(tf_data.augment, num_parallel_calls=tf.data.AUTOTUNE)
    ds = ds.cache()                                  # stores augmented batches: later epochs replay them
    return ds.prefetch(tf.data.AUTOTUNE)
"""
)

_GENERATOR_KEPT = (
    _HEADER
    + """    def records():
        for key in range(len(store)):
            yield key, store.reader(key)
    ds = tf.data.Dataset.from_generator(records, output_signature=(
        tf.TensorSpec([], tf.int64), tf.TensorSpec([tf_data.RECORD_BYTES], tf.uint8)))
    ds = ds.batch(batch).map(tf_data.decode, num_parallel_calls=tf.data.AUTOTUNE).cache()
    ds = ds.map(tf_data.augment, num_parallel_calls=tf.data.AUTOTUNE)
    return ds.prefetch(tf.data.AUTOTUNE)
"""
)

_NO_CACHE = (
    _HEADER
    + """    ds = tf.data.Dataset.range(len(store))
    ds = ds.map(lambda key: (key, store.read(key)), num_parallel_calls=tf.data.AUTOTUNE)
    ds = ds.batch(batch).map(tf_data.decode, num_parallel_calls=tf.data.AUTOTUNE)
    ds = ds.map(tf_data.augment, num_parallel_calls=tf.data.AUTOTUNE)
    return ds.prefetch(tf.data.AUTOTUNE)
"""
)

_PREFETCH_TO_DEVICE = (
    _HEADER
    + """    ds = tf.data.Dataset.range(len(store))
    ds = ds.map(lambda key: (key, store.read(key)), num_parallel_calls=tf.data.AUTOTUNE)
    ds = ds.cache().batch(batch)
    ds = ds.map(tf_data.decode, num_parallel_calls=tf.data.AUTOTUNE)
    ds = ds.map(tf_data.augment, num_parallel_calls=tf.data.AUTOTUNE)
    return ds.apply(tf.data.experimental.prefetch_to_device(device.compute_device()))   # section 8
"""
)

_SEQUENTIAL_READS = (
    _HEADER
    + """    ds = tf.data.Dataset.range(len(store))
    ds = ds.map(lambda key: (key, store.read(key)))  # a py_function: tf.data never parallelizes it by itself
    ds = ds.batch(batch).map(tf_data.decode).cache().map(tf_data.augment)
    return ds.prefetch(tf.data.AUTOTUNE)
"""
)

_NO_PREFETCH = (
    _HEADER
    + """    ds = tf.data.Dataset.range(len(store))
    ds = ds.map(lambda key: (key, store.read(key)), num_parallel_calls=tf.data.AUTOTUNE)
    ds = ds.batch(batch).map(tf_data.decode, num_parallel_calls=tf.data.AUTOTUNE).cache()
    return ds.map(tf_data.augment, num_parallel_calls=tf.data.AUTOTUNE)
"""
)

_REFERENCE_BODY = """    ds = tf.data.Dataset.range(len(store))
    ds = ds.map(lambda key: (key, store.read(key)), num_parallel_calls=tf.data.AUTOTUNE).cache()
    ds = ds.batch(batch).map(tf_data.decode, num_parallel_calls=tf.data.AUTOTUNE)
    ds = ds.map(tf_data.augment, num_parallel_calls=tf.data.AUTOTUNE)
"""

# The exercise says the decoded data set does not fit in memory: this caches every decoded record
# in memory (the right place for data that fits: after decode, before augment).
_CACHES_DECODED_IN_MEMORY = (
    _HEADER
    + """    ds = tf.data.Dataset.range(len(store))
    ds = ds.map(lambda key: (key, store.read(key)), num_parallel_calls=tf.data.AUTOTUNE)
    ds = ds.batch(batch).map(tf_data.decode, num_parallel_calls=tf.data.AUTOTUNE).cache()   # all decoded, in memory
    ds = ds.map(tf_data.augment, num_parallel_calls=tf.data.AUTOTUNE)
    return ds.prefetch(tf.data.AUTOTUNE)
"""
)

# The guide's other answer: the decoded records cached in a file (a new one for every pipeline).
_CACHES_DECODED_IN_A_FILE = (
    """import os, tempfile

"""
    + _HEADER
    + """    ds = tf.data.Dataset.range(len(store))
    ds = ds.map(lambda key: (key, store.read(key)), num_parallel_calls=tf.data.AUTOTUNE)
    ds = ds.batch(batch).map(tf_data.decode, num_parallel_calls=tf.data.AUTOTUNE)
    ds = ds.cache(os.path.join(tempfile.mkdtemp(), "decoded"))   # on disk, not in memory
    ds = ds.map(tf_data.augment, num_parallel_calls=tf.data.AUTOTUNE)
    return ds.prefetch(tf.data.AUTOTUNE)
"""
)

_DROPS_ONE = (
    _HEADER
    + """    ds = tf.data.Dataset.range(len(store) - 1)      # one record short
    ds = ds.map(lambda key: (key, store.read(key)), num_parallel_calls=tf.data.AUTOTUNE).cache()
    ds = ds.batch(batch).map(tf_data.decode, num_parallel_calls=tf.data.AUTOTUNE)
    ds = ds.map(tf_data.augment, num_parallel_calls=tf.data.AUTOTUNE)
    return ds.prefetch(tf.data.AUTOTUNE)
"""
)

_TAKE_BATCHES = (
    _HEADER
    + _REFERENCE_BODY
    + """    return ds.take(2).prefetch(tf.data.AUTOTUNE)   # only the first batches
"""
)

_DUPLICATES = (
    _HEADER
    + """    keys = tf.data.Dataset.range(len(store)).concatenate(tf.data.Dataset.range(1))   # record 0 twice
    ds = keys.map(lambda key: (key, store.read(key)), num_parallel_calls=tf.data.AUTOTUNE).cache()
    ds = ds.batch(batch).map(tf_data.decode, num_parallel_calls=tf.data.AUTOTUNE)
    ds = ds.map(tf_data.augment, num_parallel_calls=tf.data.AUTOTUNE)
    return ds.prefetch(tf.data.AUTOTUNE)
"""
)

_SKIPS_THE_STORAGE = (
    _HEADER
    + """    keys = tf.range(len(store), dtype=tf.int64)
    ds = tf.data.Dataset.from_tensor_slices((keys, store._records))   # the records without waiting for reads
    ds = ds.batch(batch).map(tf_data.decode).cache().map(tf_data.augment)
    return ds.prefetch(tf.data.AUTOTUNE)
"""
)

_ZERO_LATENCY = (
    _HEADER
    + """    store._latency = 0.0                             # make the reads free instead of overlapping them
"""
    + _REFERENCE_BODY
    + """    return ds.prefetch(tf.data.AUTOTUNE)
"""
)

_INFLATED_COUNTERS = (
    _HEADER
    + """    store.reads = 10 ** 6                            # claim the reads instead of making them
    keys = tf.range(len(store), dtype=tf.int64)
    ds = tf.data.Dataset.from_tensor_slices((keys, store._records))
    ds = ds.batch(batch).map(tf_data.decode).cache().map(tf_data.augment)
    return ds.prefetch(tf.data.AUTOTUNE)
"""
)

_MEMOIZED = (
    """_built = {}

"""
    + _HEADER
    + """    if len(store) not in _built:                     # reuse the pipeline built for the last store of that size
"""
    + _REFERENCE_BODY.replace("    ", "        ", 1).replace("\n    ", "\n        ")
    + """        _built[len(store)] = ds.prefetch(tf.data.AUTOTUNE)
    return _built[len(store)]
"""
)

_REFERENCE_DIAGNOSE_CLASSIFY = """

def classify(parts):
    return "input-bound" if parts["pipeline_s"] > parts["step_s"] else "compute-bound"
"""

_STEP_TIMED_THROUGH_THE_PIPELINE = (
    """def measure_parts(dataset, step, batches):
    pipeline_s = timing.stopwatch(lambda: [None for _ in dataset])[1]
    step_s = timing.stopwatch(lambda: [step(b) for b in dataset])[1]   # the step, fed by the pipeline
    both_s = timing.stopwatch(lambda: [step(b) for b in dataset])[1]
    return {"pipeline_s": pipeline_s, "step_s": step_s, "both_s": both_s}
"""
    + _REFERENCE_DIAGNOSE_CLASSIFY
)

_HARD_CODED_TIMES = (
    """def measure_parts(dataset, step, batches):
    return {"pipeline_s": 0.08, "step_s": 0.01, "both_s": 0.09}
"""
    + _REFERENCE_DIAGNOSE_CLASSIFY
)

_ONE_BATCH_ONLY = (
    """def measure_parts(dataset, step, batches):
    batch = next(iter(dataset))
    pipeline_s = timing.stopwatch(lambda: next(iter(dataset)))[1]      # one batch, not one epoch
    step_s = timing.stopwatch(lambda: step(batch))[1]
    both_s = pipeline_s + step_s
    return {"pipeline_s": pipeline_s, "step_s": step_s, "both_s": both_s}
"""
    + _REFERENCE_DIAGNOSE_CLASSIFY
)

_REVERSED = """def measure_parts(dataset, step, batches):
    in_memory = list(dataset)
    pipeline_s = timing.stopwatch(lambda: [None for _ in dataset])[1]
    step_s = timing.stopwatch(lambda: [step(in_memory[i % len(in_memory)]) for i in range(batches)])[1]
    both_s = timing.stopwatch(lambda: [step(b) for b in dataset])[1]
    return {"pipeline_s": pipeline_s, "step_s": step_s, "both_s": both_s}


def classify(parts):
    return "compute-bound" if parts["pipeline_s"] > parts["step_s"] else "input-bound"   # backwards
"""

_ALWAYS_INPUT_BOUND = (
    _REVERSED.split("\n\ndef classify")[0]
    + """


def classify(parts):
    return "input-bound"                             # the usual suspect, without looking
"""
)

SUBMISSIONS = [
    # Concept checks: some wrong letters; the right ones score.
    Submission(
        "concepts_some_wrong",
        {
            "concepts": 'map_python_runs = "a"\ncache_placement = "d"\nparallel_python_work = "a"\nwhat_prefetch_does = "d"'
        },
        {"concepts_map_python_runs": 0, "concepts_cache_placement": 0},
    ),
    # Exercise 1: every case but the file cache fails the structure check; the speed check fails where the
    # result is wrong, the work is skipped, or it is simply not faster.
    Submission(
        name="unfixed_pipeline",
        edits={"fast_pipeline": _UNFIXED},
        expected={"pipeline_tests": 0.0, "pipeline_speed_tests": 0.0},
    ),
    Submission(
        name="prefetch_alone",
        edits={"fast_pipeline": _PREFETCH_ALONE},
        expected={"pipeline_tests": 0.0, "pipeline_speed_tests": 0.0},
    ),
    Submission(
        name="cache_after_augment",
        edits={"fast_pipeline": _CACHE_AFTER_AUGMENT},
        expected={"pipeline_tests": 0.0, "pipeline_speed_tests": 0.0},
    ),
    # Caches every decoded record in memory where the exercise says the decoded data set does not
    # fit: the structure check fails it (an in-memory cache after decode); it is correct and fast,
    # so the speed check's points stay.
    Submission(
        name="caches_decoded_in_memory",
        edits={"fast_pipeline": _CACHES_DECODED_IN_MEMORY},
        expected={"pipeline_tests": 0.0},
    ),
    # The guide's other fix for data that does not fit: the decoded records in a cache file. Full marks.
    Submission(name="caches_decoded_in_a_file", edits={"fast_pipeline": _CACHES_DECODED_IN_A_FILE}, expected={}),
    # honest: the reference ending in prefetch_to_device, which the exercise says counts as a prefetch on a GPU; a
    # learner's GPU answer may be graded on a CPU, where it copies nothing and costs a fixed time per epoch (about
    # 25 ms here, docs/measurements-04_tf_data.md): full marks on either.
    Submission(name="prefetch_to_device", edits={"fast_pipeline": _PREFETCH_TO_DEVICE}, expected={}),
    Submission(
        name="drops_one_record",
        edits={"fast_pipeline": _DROPS_ONE},
        expected={"pipeline_tests": 0.0, "pipeline_speed_tests": 0.0},
    ),
    Submission(
        name="takes_two_batches",
        edits={"fast_pipeline": _TAKE_BATCHES},
        expected={"pipeline_tests": 0.0, "pipeline_speed_tests": 0.0},
    ),
    Submission(
        name="duplicates_a_record",
        edits={"fast_pipeline": _DUPLICATES},
        expected={"pipeline_tests": 0.0, "pipeline_speed_tests": 0.0},
    ),
    Submission(
        name="skips_the_storage",
        edits={"fast_pipeline": _SKIPS_THE_STORAGE},
        expected={"pipeline_tests": 0.0, "pipeline_speed_tests": 0.0},
    ),
    # The right pipeline, with reads made free by writing the store's private latency: the
    # static screen flags the assignment and zeroes the exercise (without the screen, the speed
    # check sees reads that did not wait).
    Submission(
        name="zero_latency_store",
        edits={"fast_pipeline": _ZERO_LATENCY},
        expected={"pipeline_tests": 0.0, "pipeline_speed_tests": 0.0},
    ),
    # Writes the store's read counter (read-only): the call fails.
    Submission(
        name="inflated_counters",
        edits={"fast_pipeline": _INFLATED_COUNTERS},
        expected={"pipeline_tests": 0.0, "pipeline_speed_tests": 0.0},
    ),
    # Returns a pipeline built for an earlier store of the same size: wrong elements.
    Submission(
        name="memoized_pipeline",
        edits={"fast_pipeline": _MEMOIZED},
        expected={"pipeline_tests": 0.0, "pipeline_speed_tests": 0.0},
    ),
    # Exercise 2.
    Submission(
        name="step_timed_through_the_pipeline",
        edits={"diagnose": _STEP_TIMED_THROUGH_THE_PIPELINE},
        expected={"diagnose_tests": 0.0},
    ),
    Submission(name="hard_coded_times", edits={"diagnose": _HARD_CODED_TIMES}, expected={"diagnose_tests": 0.0}),
    Submission(name="one_batch_only", edits={"diagnose": _ONE_BATCH_ONLY}, expected={"diagnose_tests": 0.0}),
    Submission(name="classify_reversed", edits={"diagnose": _REVERSED}, expected={"diagnose_tests": 0.0}),
    Submission(name="always_input_bound", edits={"diagnose": _ALWAYS_INPUT_BOUND}, expected={"diagnose_tests": 0.0}),
]
