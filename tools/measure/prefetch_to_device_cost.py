"""Chapter 4's pipelines timed in one process, by the number of records: what ``prefetch_to_device`` costs on a CPU.

    TFPERF_SIZE=ci taskset -c 0 python tools/measure/prefetch_to_device_cost.py 24 48 96

For each number of records: the naive pipeline (the exercise's unfixed code), the wrong "prefetch alone", the
reference, and the reference ending in ``prefetch_to_device(device.compute_device())`` in place of ``prefetch``, each
training 3 epochs in batches of 8 from a store of 4 ms reads, 9 alternated calls after one warm-up call each; prints
each one's median time and its speedup over the naive pipeline's median. docs/measurements-04_tf_data.md.
"""

import statistics
import sys
import time

import tensorflow as tf

from tfperf.experiments import tf_data
from tfperf.runtime import device


def naive_pipeline(store, batch):
    def records():
        for key in range(len(store)):
            yield key, store.reader(key)

    ds = tf.data.Dataset.from_generator(
        records, output_signature=(tf.TensorSpec([], tf.int64), tf.TensorSpec([tf_data.RECORD_BYTES], tf.uint8))
    )
    ds = ds.map(tf_data.decode)
    ds = ds.map(tf_data.augment)
    return ds.batch(batch)


def fast(store, batch, end):
    ds = tf.data.Dataset.range(len(store))
    ds = ds.map(lambda key: (key, store.read(key)), num_parallel_calls=tf.data.AUTOTUNE)
    ds = ds.cache().batch(batch)
    ds = ds.map(tf_data.decode, num_parallel_calls=tf.data.AUTOTUNE)
    ds = ds.map(tf_data.augment, num_parallel_calls=tf.data.AUTOTUNE)
    return end(ds)


def prefetch_alone(store, batch):
    return naive_pipeline(store, batch).prefetch(tf.data.AUTOTUNE)


ends = {
    "reference": lambda ds: ds.prefetch(tf.data.AUTOTUNE),
    "prefetch_to_device": lambda ds: ds.apply(tf.data.experimental.prefetch_to_device(device.compute_device())),
}
for records in [int(r) for r in sys.argv[1:]]:

    def inputs():
        return tf_data.SimulatedStorage(records, latency=0.004), 8, 3

    sides = {
        "naive": lambda s, b, e: tf_data.train_epochs(naive_pipeline(s, b), e),
        "prefetch alone": lambda s, b, e: tf_data.train_epochs(prefetch_alone(s, b), e),
        **{k: (lambda s, b, e, end=end: tf_data.train_epochs(fast(s, b, end), e)) for k, end in ends.items()},
    }
    times = {k: [] for k in sides}
    for f in sides.values():
        f(*inputs())  # warm
    for _ in range(9):
        for k, f in sides.items():
            args = inputs()
            started = time.perf_counter()
            f(*args)
            times[k].append(time.perf_counter() - started)
    med = {k: statistics.median(v) for k, v in times.items()}
    print(records, {k: f"{med['naive'] / v:.2f}x ({v * 1e3:.0f} ms)" for k, v in med.items()}, flush=True)
