"""Measure what chapter 7's exercise 2 (the tf.data service) can be graded on, on this machine; print and write JSON.

Usage: python tools/probes/chapter7_service_probe.py OUT.json [ELEMENTS]

One preprocessing-bound pipeline (a tf.function of pure TensorFlow ops per element), read in elements per second
(median of 3 epochs after a warm-up epoch):
- locally, as tf.data runs it by default (its map made parallel by map_parallelization), and on one thread;
- through a service (runtime.servers.DataService) of 1 and 2 workers, distributed element by element, and batched
  by 16 before distribute ('distributed_epoch'): epochs of ELEMENTS elements, and one long job (an endless
  dataset, ELEMENTS of its elements timed after a tenth as a warm-up). The service's client learns that a job
  ended about once a second, so an epoch through it lasts whole seconds or so: short epochs hide its throughput.
"""

from __future__ import annotations

import json
import os
import sys

import tensorflow as tf

from tfperf.measure import timing
from tfperf.runtime import servers

ELEMENTS = int(sys.argv[2]) if len(sys.argv) > 2 else 512
SIZE = 128


@tf.function
def preprocess(i):
    x = tf.random.stateless_uniform((SIZE, SIZE), seed=tf.stack([i, i]))
    for _ in range(8):
        x = tf.tanh(x @ x / SIZE)
    return tf.reduce_sum(x, axis=0)


def one_thread(dataset: tf.data.Dataset) -> tf.data.Dataset:
    options = tf.data.Options()
    options.threading.private_threadpool_size = 1
    options.experimental_optimization.map_parallelization = False
    return dataset.with_options(options)


def rate(make) -> float:
    def epoch():
        with tf.device("/cpu:0"):
            return sum(int(tf.size(v)) for v in make())

    epoch()
    times = []
    for _ in range(3):
        start = timing.now()
        epoch()
        times.append(timing.now() - start)
    return round(ELEMENTS / sorted(times)[1], 1)


def steady_rate(dataset: tf.data.Dataset, batch: int | None) -> float:
    """Elements per second in one long job (no epoch ends): the first tenth read as a warm-up, then timed."""
    count = 0
    with tf.device("/cpu:0"):
        iterator = iter(dataset)
        while count < ELEMENTS // 10:
            count += batch or 1
            next(iterator)
        start, count = timing.now(), 0
        while count < ELEMENTS:
            count += batch or 1
            next(iterator)
    return round(count / (timing.now() - start), 1)


def main() -> int:
    out = {"cores": len(os.sched_getaffinity(0)), "elements": ELEMENTS, "size": SIZE}
    local = tf.data.Dataset.range(ELEMENTS).map(preprocess)
    out["local, default"] = rate(lambda: local)
    out["local, one thread"] = rate(lambda: one_thread(local))
    for workers in (1, 2):
        with servers.DataService(workers=workers) as service:
            for name, batch in (("element by element", None), ("batched by 16", 16)):

                def served(batch=batch):
                    d = tf.data.Dataset.range(ELEMENTS).map(preprocess)
                    d = d.batch(batch) if batch else d
                    return d.apply(tf.data.experimental.service.distribute("distributed_epoch", service.target))

                out[f"service {workers} worker(s), {name}"] = rate(served)
                endless = tf.data.Dataset.range(10**9).map(preprocess)
                endless = endless.batch(batch) if batch else endless
                shared = endless.apply(tf.data.experimental.service.distribute("distributed_epoch", service.target))
                out[f"service {workers} worker(s), {name}, one long job"] = steady_rate(shared, batch)
                if batch:  # each worker's pipeline on one thread, as on a machine of one core
                    alone = one_thread(endless).apply(
                        tf.data.experimental.service.distribute("distributed_epoch", service.target)
                    )
                    out[f"service {workers} worker(s), {name}, one long job, one thread a worker"] = steady_rate(
                        alone, batch
                    )
                print(json.dumps(out), flush=True)
    out["local, default, one long job"] = steady_rate(tf.data.Dataset.range(10**9).map(preprocess), None)
    out["local, one thread, one long job"] = steady_rate(one_thread(tf.data.Dataset.range(10**9).map(preprocess)), None)
    with open(sys.argv[1], "w") as f:
        json.dump(out, f, indent=1)
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
