"""What a pipeline's batches cost taken alone (tfperf.measure.pipeline_alone), on real tf.data pipelines."""

import tensorflow as tf

from tfperf.measure.pipeline_alone import pull


def _costly(x):
    for _ in range(30):
        x = tf.sqrt(x * x + 1.0) - 0.5
    return x


def test_a_costly_map_costs_more_cpu_a_batch_than_a_plain_batch():
    rows = tf.random.stateless_normal([4096, 256], seed=[1, 2])
    plain = pull(iter(tf.data.Dataset.from_tensor_slices(rows).batch(64).repeat()), most=24)
    costly = pull(iter(tf.data.Dataset.from_tensor_slices(rows).map(_costly).batch(64).repeat()), most=24)
    assert plain.taken == costly.taken == 24 and plain.batches == costly.batches == 12
    assert not plain.ended and plain.cores >= 1
    assert costly.cpu_per_batch > 5 * plain.cpu_per_batch, (costly, plain)
    assert costly.seconds_per_batch > plain.seconds_per_batch


def test_a_pipeline_that_runs_out_is_measured_to_its_end_or_not_at_all():
    ended = pull(iter(tf.data.Dataset.range(10).batch(1)))
    assert ended.ended and ended.taken == 10 and ended.batches == 5
    assert pull(iter(tf.data.Dataset.range(3))) is None
