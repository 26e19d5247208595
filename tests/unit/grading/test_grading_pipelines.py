"""Structure checks of tf.data pipelines (tfperf.grading.pipelines), read from the dataset's own graph."""

import os
import tempfile

import pytest

from tfperf import grading
from tfperf.experiments import tf_data
from tfperf.grading import GradingFailure, check_pipeline_stages
from tfperf.runtime import logs

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
    return check_pipeline_stages(
        ds,
        reader=store.reader,
        expensive=tf_data.decode,
        random=tf_data.augment,
        what="p",
        expensive_output_fits_in_memory=fits,
    )


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


def test_a_pipeline_ending_in_prefetch_to_device_is_read_through_its_python_objects():
    """tf.data cannot serialize copy_to_device (a GeneratorDataset inside): its stages come from the
    Python objects, so prefetch_to_device, which the chapter shows for GPUs, is a prefetch at the end."""
    from tfperf.measure import dataset_graph

    store = tf_data.SimulatedStorage(8, latency=0.0)
    on_device = _pipeline(store, "decoded").apply(tf.data.experimental.prefetch_to_device("/cpu:0", 2))
    chain = _check(on_device, store, fits=True)
    assert [s.kind for s in chain[-3:]] == ["prefetch", "copy_to_device", "prefetch"]
    assert "copy_to_device (to /cpu:0)" in dataset_graph.describe(on_device)
    assert chain[-1].args == {"buffer_size": 2}
    copied_only = _pipeline(store, "decoded").apply(tf.data.experimental.copy_to_device("/cpu:0"))
    assert dataset_graph.stages(copied_only)[-1].kind == "copy_to_device"
    with pytest.raises(GradingFailure, match="prefetch"):
        _check(copied_only, store, fits=True)


def test_a_pipeline_that_cannot_be_read_fails_with_a_short_reason():
    store = tf_data.SimulatedStorage(8, latency=0.0)
    after_copy = (
        _pipeline(store, "decoded").apply(tf.data.experimental.copy_to_device("/cpu:0")).map(lambda x, y: (x, y))
    )
    with pytest.raises(GradingFailure, match="cannot serialize this pipeline") as failure:
        _check(after_copy, store, fits=True)
    assert "Traceback" not in str(failure.value) and len(str(failure.value)) < 600


def test_a_subclass_that_names_another_input_is_not_believed():
    """Only TensorFlow's own copy_to_device and prefetch datasets are read through their Python objects: a
    subclass (whose methods may set self._input_dataset) could show a decoy while it reads something else."""
    from tensorflow.python.data.experimental.ops import prefetching_ops

    store = tf_data.SimulatedStorage(8, latency=0.0)

    class _CopyToDeviceDataset(prefetching_ops._CopyToDeviceDataset):  # the same name, even
        def __init__(self, really_read, shown):
            super().__init__(really_read, "/cpu:0")
            self._input_dataset = shown

    memorized = tf.data.Dataset.from_tensor_slices(tf.range(8))
    with pytest.raises(GradingFailure, match="defined outside TensorFlow"):
        _check(_CopyToDeviceDataset(memorized, _pipeline(store, "decoded")), store, fits=True)


def test_a_dataset_of_a_class_written_outside_tensorflow_is_not_read():
    """A subclass could describe one pipeline (its own _as_serialized_graph, options) while it runs another: its
    stages are not read at all."""
    store = tf_data.SimulatedStorage(8, latency=0.0)
    good = _pipeline(store, "decoded")
    sequential = tf.data.Dataset.range(len(store)).map(lambda key: (key, store.read(key))).prefetch(1)

    class Describes(type(sequential)):
        def _as_serialized_graph(self, *args, **kwargs):
            return good._as_serialized_graph(*args, **kwargs)

    with pytest.raises(GradingFailure, match="defined outside TensorFlow"):
        _check(Describes(sequential, 1), store, fits=True)


@pytest.mark.slow
def test_a_served_pipeline_needs_the_service_the_preprocessing_behind_it_and_every_element_once():
    from tfperf.runtime import servers

    @tf.function
    def preprocess(i):
        return tf.reduce_sum(tf.random.stateless_uniform((8, 8), seed=tf.stack([i, i])))

    local = tf.data.Dataset.range(64).map(preprocess)
    with servers.DataService(workers=2) as service:

        def served(mode="distributed_epoch"):
            distribute = tf.data.experimental.service.distribute(mode, service.target)
            return tf.data.Dataset.range(64).map(preprocess).batch(8).apply(distribute)

        chain = grading.check_served_pipeline(served(), local, preprocess=preprocess, what="served")
        assert [s.kind for s in chain][0] == "service"
        with pytest.raises(grading.GradingFailure, match="no stage reads from the tf.data service"):
            grading.check_served_pipeline(local.batch(8), local, preprocess=preprocess, what="local")
        after = tf.data.Dataset.range(64).apply(
            tf.data.experimental.service.distribute("distributed_epoch", service.target)
        )
        with pytest.raises(grading.GradingFailure, match="the preprocessing runs in this process"):
            grading.check_served_pipeline(after.map(preprocess), local, preprocess=preprocess, what="after")
        with pytest.raises(grading.GradingFailure, match="yields 128 values, the local pipeline 64"):
            grading.check_served_pipeline(served("parallel_epochs"), local, preprocess=preprocess, what="parallel")
        hidden = after.map(
            lambda i: tf.py_function(lambda i: preprocess(i), [i], tf.float32)
        )  # not a call in the graph
        with pytest.raises(grading.GradingFailure, match="after the service, this process still runs code"):
            grading.check_served_pipeline(hidden, local, preprocess=preprocess, what="hidden")
        rebatched = served().prefetch(2)  # only prefetching after it: allowed
        grading.check_served_pipeline(rebatched, local, preprocess=preprocess, what="rebatched")
        # the structure alone (every timed call of the speed check): nothing is read
        assert [s.kind for s in grading.assert_served(served(), preprocess=preprocess, what="served")][0] == "service"
        with pytest.raises(grading.GradingFailure, match="no stage reads from the tf.data service"):
            grading.assert_served(local.repeat(), preprocess=preprocess, what="endless and local")
