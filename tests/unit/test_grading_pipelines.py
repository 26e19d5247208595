"""Structure checks of tf.data pipelines (tfperf.grading.pipelines), read from the dataset's own graph."""

import os
import tempfile

import pytest

from tfperf import logs
from tfperf.experiments import tf_data
from tfperf.grading import GradingFailure, check_pipeline_stages

tf = logs.tensorflow()
AUTOTUNE = tf.data.AUTOTUNE


def _pipeline(store, cache_at: str, filename: str = ""):
    ds = tf.data.Dataset.range(len(store)).map(lambda key: (key, store.read(key)), num_parallel_calls=AUTOTUNE)
    if cache_at == "raw":
        ds = ds.cache(filename)
    ds = ds.batch(4).map(tf_data.decode, num_parallel_calls=AUTOTUNE)
    if cache_at == "decoded":
        ds = ds.cache(filename)
    return ds.map(tf_data.augment, num_parallel_calls=AUTOTUNE).prefetch(AUTOTUNE)


def _check(ds, store, fits: bool):
    return check_pipeline_stages(ds, reader=store.reader, expensive=tf_data.decode, random=tf_data.augment,
                                 what="p", expensive_output_fits_in_memory=fits)


def test_where_the_decoded_data_fits_the_cache_goes_after_decode():
    store = tf_data.SimulatedStorage(8, latency=0.0)
    _check(_pipeline(store, "decoded"), store, fits=True)
    with pytest.raises(GradingFailure, match="before the decoding"):
        _check(_pipeline(store, "raw"), store, fits=True)


def test_where_the_decoded_data_does_not_fit_no_decoded_record_is_cached_in_memory():
    store = tf_data.SimulatedStorage(8, latency=0.0)
    _check(_pipeline(store, "raw"), store, fits=False)
    _check(_pipeline(store, "decoded", os.path.join(tempfile.mkdtemp(), "decoded")), store, fits=False)
    with pytest.raises(GradingFailure, match="caches the decoded records in memory"):
        _check(_pipeline(store, "decoded"), store, fits=False)
    with pytest.raises(GradingFailure, match="nothing is cached"):
        _check(_pipeline(store, "none"), store, fits=False)
