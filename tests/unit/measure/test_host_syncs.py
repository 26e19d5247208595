"""The host-sync counter counts exactly, on a known loop, and leaves no trace behind."""

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")

from tensorflow.python.framework import ops  # noqa: E402

from tfperf.measure import host_syncs  # noqa: E402


def test_counts_a_known_loop_exactly():
    step = tf.function(lambda x: x * 2.0 + 1.0)
    with host_syncs.counting() as syncs:
        x = tf.constant(1.0)
        for i in range(20):
            x = step(x) / 3.0
            if i % 5 == 4:
                float(x)
    assert syncs.count == 4
    assert syncs.kinds == {"float()": 4}


def test_every_kind_of_read_counts_once():
    t, v, i = tf.constant(2.0), tf.constant([1.0, 2.0]), tf.constant(3)
    var = tf.Variable(1.5)
    with host_syncs.counting() as syncs:
        t.numpy()
        float(t)
        int(i)
        bool(t)
        str(t)
        f"{t:.1f}"
        list(range(i))
        np.asarray(v)
        np.array(v)
        var.numpy()
        if t > 1.0:
            pass
    assert syncs.count == 11
    assert syncs.kinds[".numpy()"] == 2
    assert syncs.kinds["np.asarray()/np.array()"] == 2
    assert "11 host reads" in syncs.describe()


def test_device_work_without_reads_is_not_counted():
    with host_syncs.counting() as syncs:
        x = tf.random.normal([8, 8])
        y = tf.matmul(x, x)
        tf.convert_to_tensor(y)
        _ = y.shape, y.dtype, y.device
    assert syncs.count == 0
    assert syncs.describe() == "no host reads"


def test_reads_of_a_given_tensors_shape_size_and_rank_are_not_counted_but_values_made_from_them_are():
    x, w = tf.zeros([5, 3]), tf.Variable(tf.zeros([2]))
    with host_syncs.counting() as syncs:
        host_syncs.give([x, {"w": w}])  # the counted call's own arguments
        assert int(tf.shape(x)[0]) == 5  # Shape reads only metadata, into host memory: no device work to wait for
        assert list(np.asarray(tf.shape(x))) == [5, 3]
        assert [int(s[1]) for s in tf.shape_n([x, x])] == [3, 3]
        assert (int(tf.size(x)), int(tf.rank(x)), int(tf.shape(w)[0])) == (15, 2, 2)
        assert (int(tf.size(x[0])), int(tf.shape(x[1:, :2])[1])) == (3, 2)  # parts of it, by Python's indices
    assert syncs.count == 0
    with host_syncs.counting() as syncs:
        host_syncs.give([x])
        loss = tf.reduce_sum(x) + 3.0  # computed on the device, in the block
        int(tf.shape(x)[0] * 2)  # computed from a shape by another op: a read like any other
        int(tf.cast(loss, tf.int32))
        # a value of the device's carried through a size, an index or a shape made in the call: still a read each
        int(tf.size(tf.compat.v1.SparseTensorValue(tf.zeros([1, 1], tf.int64), [0.0], tf.cast(loss, tf.int64)[None])))
        int(tf.shape(tf.zeros([4, 5, 6, 7]))[tf.cast(loss, tf.int32)])
        int(tf.shape(tf.zeros(tf.stack([0, tf.cast(loss, tf.int32)])))[1])
        int(tf.size(tf.where(tf.range(10) < tf.cast(loss, tf.int32))))
        int(tf.shape(x, out_type=tf.int64)[0])  # an int64 slice may live in device memory on a GPU
        int(tf.size(x[tf.cast(loss, tf.int32) - 3 :]))  # a part taken by an index computed on the device
    # three of those tensors were also sized by the loss: making each waited for it (the zeros, where, the slice)
    assert syncs.kinds == {"int()": 8, host_syncs.KINDS["making"]: 3}


def test_making_a_tensor_sized_by_a_device_value_is_a_read_and_its_shape_then_costs_nothing():
    x = tf.constant([1.0, 2.0, 3.0])

    @tf.function
    def carrier(h):
        return tf.zeros(tf.stack([0, h]))

    @tf.function
    def doubled(h):
        return h * 2

    @tf.function
    def calls_doubled(h):
        return doubled(h) + 1

    sized_by_the_device = {
        "tf.zeros of a stacked device value, then .shape": lambda: tf.zeros(tf.stack([0, n])).shape[1],
        "len() of tf.boolean_mask": lambda: len(tf.boolean_mask(tf.range(100), tf.range(100) < n)),
        "tf.range(n), then .shape": lambda: tf.range(n).shape[0],
        "tf.where": lambda: tf.where(x > 1.5),
        "a slice up to a device index": lambda: x[n - 5 :],
        "a tf.function that makes one": lambda: carrier(n).shape,
    }
    for what, make in sized_by_the_device.items():
        with host_syncs.counting() as syncs:
            n = tf.cast(tf.reduce_sum(x) + 3.0, tf.int32)  # computed on the device, in the block
            make()
        assert syncs.kinds == {host_syncs.KINDS["making"]: 1}, what
    with host_syncs.counting() as syncs:  # shapes from shapes, constants and Python: nothing waits
        n = tf.cast(tf.reduce_sum(x) + 3.0, tf.int32)
        tf.matmul(tf.ones([2, 2]), tf.ones([2, 2])) + 1
        tf.reduce_sum(x, 0), x[1], x[1:], tf.reshape(x, [-1, 1]), tf.range(5), tf.zeros(tf.shape(x))
        tf.zeros(tf.shape(x)[0] + 2), len(x * 2), (x * 2).shape
        doubled(n), calls_doubled(n)
    assert syncs.count == 0, syncs.describe()


def test_branches_text_datasets_checks_and_errors_on_a_device_value_are_reads():
    x = tf.constant([1.0, 2.0, 3.0])

    @tf.function(autograph=False)
    def branches(v):
        return tf.cond(v > 0, lambda: tf.zeros([1]), lambda: tf.zeros([2]))

    @tf.function(autograph=False)
    def loops(v):
        return tf.while_loop(lambda i, s: s < v, lambda i, s: (i + 1, s + 1.0), (0, 0.0))[1]

    @tf.function
    def graph_loop(n):  # a loop over a count the host holds: nothing waits
        total = tf.constant(0.0)
        for i in tf.range(n):
            total += tf.cast(i, tf.float32)
        return total

    table = tf.lookup.experimental.MutableHashTable(tf.int64, tf.float32, default_value=0.0)
    kinds = {
        "a tf.cond on it": (lambda v: branches(v), "making"),
        "a tf.while_loop on it": (lambda v: loops(v), "making"),
        "text of it": (lambda v: tf.strings.as_string(v), "to_host"),
        "a dataset of it": (lambda v: tf.data.Dataset.from_tensors(v), "to_host"),
        "a lookup table's key": (lambda v: table.insert(tf.cast(v, tf.int64)[None], v[None]), "to_host"),
        "tf.debugging.check_numerics": (lambda v: tf.debugging.check_numerics(v, "v"), "check"),
    }
    for what, (use, kind) in kinds.items():
        with host_syncs.counting() as syncs:
            loss = tf.reduce_sum(x)  # computed on the device, in the block
            use(loss)
        assert syncs.kinds == {host_syncs.KINDS[kind]: 1}, what
    with host_syncs.counting() as syncs:  # a float made before the block is the device's on a GPU too
        tf.boolean_mask(x, x > 1.5)
    assert syncs.kinds == {host_syncs.KINDS["making"]: 1}
    with host_syncs.counting() as syncs:  # tf.print's formatting is a print's cost; text used elsewhere is a read
        loss = tf.reduce_sum(x)
        tf.print(loss, output_stream="file:///dev/null")
        tf.strings.length(tf.strings.format("{}", loss))
    assert syncs.kinds == {host_syncs.KINDS["to_host"]: 1}
    with host_syncs.counting() as syncs:
        with pytest.raises(tf.errors.InvalidArgumentError):
            tf.gather(x, tf.cast(tf.reduce_sum(x), tf.int32))  # index 6 of 3: the error tells the host about it
    assert syncs.kinds == {host_syncs.KINDS["error"]: 1}
    batches = tf.data.Dataset.from_tensor_slices(np.ones((5, 2), np.float32)).batch(2)
    with host_syncs.counting() as syncs:
        graph_loop(tf.shape(x)[0]), graph_loop(tf.constant(3))
        for _ in batches:
            pass
    assert syncs.count == 0, syncs.describe()


def test_values_made_on_the_host_size_tensors_without_a_wait():
    """TensorFlow makes a converted Python or NumPy value on the CPU (``pywrap_tensor.cc``: "We always generate CPU:0
    tensors"), tf.data's ops run on the host, and eager ops on small integers the host holds run there too
    (``MaybePinSmallOpsToCpu``): sizing by such integers waits for no device, unless a pipeline copies its elements
    to one first, or a device op computed the size; a bool the host made still goes to a GPU op."""
    on_the_host = {
        "tf.range of an int64 tf.constant": lambda: tf.range(tf.constant(5, tf.int64)),
        "tf.zeros of a converted NumPy integer": lambda: tf.zeros(tf.convert_to_tensor(np.int64(3))),
        "a slice up to a tf.data element": lambda: [tf.ones([9])[:s] for s in tf.data.Dataset.range(1, 4)],
        "a small int64 op the host runs": lambda: tf.range(tf.constant(5, tf.int64) + 1),
        "an int32 cast to int64 on the host": lambda: tf.zeros(tf.cast(tf.constant(2), tf.int64)),
    }
    for what, make in on_the_host.items():
        with host_syncs.counting() as syncs:
            make()
        assert syncs.count == 0, (what, syncs.describe())
    copied = tf.data.Dataset.range(1, 2).apply(tf.data.experimental.prefetch_to_device("/cpu:0"))
    computed = {
        "tf.where of a bool the host made (a GPU op: it runs in the device's order)": lambda: tf.where(
            tf.constant([True, False, True])
        ),
        "a device op's result": lambda: tf.range(tf.cast(tf.reduce_sum(tf.ones([3])), tf.int64)),
        "an element copied to a device": lambda: [tf.ones([9])[:s] for s in copied],
    }
    for what, make in computed.items():
        with host_syncs.counting() as syncs:
            make()
        assert syncs.kinds == {host_syncs.KINDS["making"]: 1}, (what, syncs.describe())


def test_reading_integers_the_host_made_is_not_a_sync_unless_state_or_the_device_went_in():
    """Python's integers converted, and tf.data's elements (its ops run on the host), are in host memory, and so is
    what a stateless op pinned to the host makes of them; not where a function of the pipeline reads a variable
    (which the training may write) or runs Python, nor what a tf.py_function returns."""
    v = tf.Variable(3, dtype=tf.int64)
    made = tf.zeros([4])
    free = {
        "int() of a pinned op on a tf.data element": lambda: [int(s + 1) for s in tf.data.Dataset.range(2)],
        "a pipeline batched in the block (TensorFlow reads its drop_remainder)": lambda: [
            None for _ in tf.data.Dataset.range(5).batch(2)
        ],
        "int() of a tf.data range's elements": lambda: [int(s) for s in tf.data.Dataset.range(3)],
        "as_numpy_iterator of host arrays": lambda: list(
            tf.data.Dataset.from_tensor_slices(np.arange(3)).as_numpy_iterator()
        ),
        "int() of an integer tf.constant, and of a pinned op on it": lambda: int(
            tf.minimum(tf.constant(7, tf.int64) + 1, 9)
        ),
        "int() of a host range's reduce": lambda: int(
            tf.data.Dataset.range(4).reduce(tf.constant(0, tf.int64), lambda count, _: count + 1)
        ),
    }
    for what, read in free.items():
        with host_syncs.counting() as syncs:
            read()
        assert syncs.count == 0, (what, syncs.describe())
    counted = {  # a pipeline whose function reads a variable: each element may carry what the training wrote
        "elements of a map reading a variable": (
            lambda: [int(s) for s in tf.data.Dataset.range(2).map(lambda i: i + v)],
            2,
        ),
        "a shape of a tensor made in the block, through a pinned op": (lambda: int(tf.shape(made * 2)[0] + 1), 1),
        "a float tf.constant (the chapters' examples read one for a loss)": (lambda: float(tf.constant(0.25)), 1),
        "a tf.py_function of a host integer, returning a device value it holds": (
            lambda: int(
                tf.py_function(lambda i: tf.cast(tf.reduce_sum(made), tf.int32) + i, [tf.constant(1)], tf.int32)
            ),
            1,
        ),
        "a reduce whose function reads a variable": (
            lambda: int(tf.data.Dataset.range(4).reduce(tf.constant(0, tf.int64), lambda count, _: count + v)),
            1,
        ),
        "a reduce that starts from a device value (taken to the host, then read)": (
            lambda: int(tf.data.Dataset.range(4).reduce(tf.cast(tf.reduce_sum(made), tf.int64), lambda c, _: c + 1)),
            2,
        ),
    }
    for what, (read, reads) in counted.items():
        with host_syncs.counting() as syncs:
            read()
        assert syncs.count == reads, (what, syncs.describe())


def test_a_tensor_array_of_device_values_sized_by_the_host_is_stacked_without_a_wait():
    """A ``TensorArray`` in a graph is a ``TensorList``: its length comes from its size and the indices written,
    not from what its elements hold; written at an index computed on the device, stacking it waits."""
    xs = tf.ones([6, 3])

    @tf.function
    def losses(xs):  # the honest one: every element is a device value, the length is the host's
        n = tf.shape(xs)[0]
        out = tf.TensorArray(tf.float32, size=n)
        for i in tf.range(n):
            out = out.write(i, tf.reduce_sum(xs[i]))
        return out.stack()

    @tf.function(autograph=False)
    def chosen(xs):  # written at an index the device chose, in an array that grows to it
        out = tf.TensorArray(tf.float32, size=0, dynamic_size=True, element_shape=tf.TensorShape([]))
        index = tf.cast(tf.reduce_sum(xs[0]), tf.int32)
        return out.write(index, 1.0).stack()

    with host_syncs.counting() as syncs:
        losses(xs), losses(xs[:4])
    assert syncs.count == 0, syncs.describe()
    with host_syncs.counting() as syncs:
        chosen(xs)
    assert syncs.kinds == {host_syncs.KINDS["making"]: 1}


def test_restores_everything_even_on_exceptions():
    original = ops._EagerTensorBase.__dict__["_numpy"]
    original_asarray = np.asarray
    with pytest.raises(RuntimeError):
        with host_syncs.counting():
            assert ops._EagerTensorBase.__dict__["_numpy"] is not original
            assert host_syncs.is_counting()
            raise RuntimeError("learner bug")
    assert ops._EagerTensorBase.__dict__["_numpy"] is original
    assert np.asarray is original_asarray
    assert not host_syncs.is_counting()
    with host_syncs.counting() as syncs:
        pass
    tf.constant(1.0).numpy()  # after the block: not counted
    assert syncs.count == 0


def test_nested_blocks_each_count_their_own_reads():
    t = tf.constant(1.0)
    with host_syncs.counting() as outer:
        t.numpy()
        with host_syncs.counting() as inner:
            float(t)
        t.numpy()
    assert (outer.count, inner.count) == (3, 1)
    assert not host_syncs.is_counting()


def test_reads_inside_a_py_function_count():
    @tf.function
    def f(x):
        return tf.py_function(lambda t: float(t) * 2.0, [x], tf.float32)

    f(tf.constant(1.0))  # trace outside the block
    with host_syncs.counting() as syncs:
        for _ in range(3):
            f(tf.constant(1.0))
    assert syncs.count == 3


def test_counts_numpy_uploads_separately():
    a = np.ones((8, 4), np.float32)
    f = tf.function(lambda x: x * 2.0)
    f(a)
    with host_syncs.counting() as syncs:
        for _ in range(3):
            tf.convert_to_tensor(a)  # 3 uploads
        tf.matmul(a, tf.ones((4, 1)))  # 1
        f(a)  # 1
        data = tf.data.Dataset.from_tensor_slices(a).batch(4)  # 1, once
        for _ in data:
            pass
        tf.constant(1.0) + 1.0  # Python numbers: not counted
    assert syncs.uploads == 8  # + 2 batches delivered by the tf.data iterator
    assert syncs.count == 0  # Dataset.batch reads back the constants it made of its arguments: host memory


def test_the_axes_a_reduction_makes_for_itself_are_not_uploads():
    x = tf.ones((4, 3))
    labels = np.arange(6, dtype=np.int32)
    with host_syncs.counting() as syncs:
        for _ in range(3):
            tf.reduce_sum(x)  # makes its axes from np.arange on every call
            tf.reduce_mean(x, axis=[0, 1])
        tf.convert_to_tensor(labels)  # six labels: a short integer array, not counted either
        tf.convert_to_tensor(np.arange(64, dtype=np.int32))  # 64 labels: data
    assert syncs.uploads == 1


def test_reads_through_numpy_functions_and_private_methods_count():
    t = tf.constant([1.0, 2.0, 3.0])
    with host_syncs.counting() as syncs:
        np.mean(t)
        np.add(t, 1.0)
        np.sum(t)
        t._numpy_internal()
        np.concatenate([t, t])
    assert syncs.count == 5, syncs.kinds
    assert np.mean(t) == 2.0 and not hasattr(type(t), "__array_function__")  # restored


def test_host_functions_inside_a_graph_count_as_reads():
    @tf.function
    def f(x):
        return tf.numpy_function(lambda a: a * 2.0, [x], tf.float32)

    f(tf.constant([1.0]))
    with host_syncs.counting() as syncs:
        for _ in range(4):
            f(tf.constant([1.0]))
    assert syncs.count == 4 and syncs.kinds[host_syncs.KINDS["host_function"]] == 4


def test_lists_generators_and_datasets_count_as_uploads():
    rows = [[1.0, 2.0], [3.0, 4.0]]

    def gen():
        yield from np.ones((3, 2), np.float32)

    data = tf.data.Dataset.from_generator(gen, output_signature=tf.TensorSpec([2], tf.float32))
    cached = tf.data.Dataset.from_tensor_slices(np.ones((4, 2), np.float32)).cache()
    ahead = cached.apply(tf.data.experimental.prefetch_to_device("/CPU:0"))
    with host_syncs.counting() as syncs:
        tf.constant(rows)  # 1
        for _ in range(2):  # 2 epochs of 3 generated elements: 6 deliveries
            for _ in data:
                pass
        for _ in range(2):  # a cache in host memory still delivers every epoch: 8
            for _ in cached:
                pass
        for _ in ahead:  # copied ahead of time, but copied: 4
            pass
    assert syncs.uploads == 1 + 6 + 8 + 4, syncs.upload_kinds
    assert syncs.upload_kinds["a tf.data iterator, copied ahead by prefetch_to_device"] == 4
    assert syncs.count == 0, syncs.kinds  # tf.data's own generator calls are not reads


def test_a_block_knows_when_its_wrappers_were_removed():
    with host_syncs.counting():
        assert host_syncs.tampered() == []
        original = ops._EagerTensorBase._numpy.__closure__  # our wrapper
        assert original
        ops._EagerTensorBase._numpy = lambda self: 0.0  # learner code switching the counter off
        assert host_syncs.tampered() == ["_EagerTensorBase._numpy"]
    assert tf.constant(2.0).numpy() == 2.0  # the original is back


def test_patches_removed_from_inside_a_block_are_noticed():
    from tfperf.measure import host_syncs

    with host_syncs.counting():
        host_syncs._patches._restore()  # what an answer could call to stop being counted
        assert host_syncs.tampered() == ["every counting patch (removed while counting)"]
    with host_syncs.counting():  # the next block counts again
        assert host_syncs.tampered() == []


def test_origins_tell_the_users_reads_from_kerass_and_the_input_pipelines():
    """tfperf diagnose names the user's own reads (with the line), not Keras's reads of its logs after every call of
    its train function, nor a tf.py_function's body's (the input pipeline's work)."""
    import keras

    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
    model.compile("sgd", "mse")
    x, y = np.ones((32, 4), "float32"), np.ones((32, 1), "float32")

    def body(v):
        return v.numpy() * 2  # the pipeline's own read

    dataset = tf.data.Dataset.range(4).map(lambda i: tf.py_function(body, [tf.cast(i, tf.float32)], tf.float32))
    with host_syncs.counting(origins=True) as syncs:
        model.fit(x, y, batch_size=8, epochs=1, verbose=0)
        for _ in dataset:  # (list(dataset) would read its length: a read of the user's line too)
            pass
        value = float(tf.constant(1.0))  # the user's own read: this line
    assert value == 1.0
    by_who = {}
    for (who, _where), n in syncs.read_origins.items():
        by_who[who] = by_who.get(who, 0) + n
    assert by_who.get(host_syncs.KERAS, 0) >= 4 and by_who.get(host_syncs.PIPELINE, 0) == 4, syncs.read_origins
    mine = [where for (who, where), _ in syncs.read_origins.items() if who == host_syncs.YOURS]
    assert len(mine) == 1 and mine[0].startswith(__file__) and "test_origins_tell" in mine[0], mine
    assert syncs.upload_bytes == 0 or syncs.uploads > 0


def test_a_py_functions_reads_of_its_inputs_are_one_crossing_a_call():
    """Its inputs reach the body on the host together: int(step) and float(loss) in one call are one read."""
    import tensorflow as tf

    from tfperf.measure import host_syncs

    seen = []

    def report(step, loss):
        seen.append((int(step), float(loss)))

    @tf.function
    def every_other(n):
        for i in tf.range(n):
            if i % 2 == 1:
                tf.py_function(report, [i, tf.cast(i, tf.float32) / 10], [])
        return n

    with host_syncs.counting() as syncs:
        every_other(tf.constant(6))
    assert [step for step, _ in seen] == [1, 3, 5]
    assert syncs.count == 3, syncs.describe()
    with host_syncs.counting() as syncs:  # outside a py_function, each read is one
        step, loss = tf.cast(tf.constant(1.5), tf.int32), tf.constant(0.5)  # a device's int32, and a loss
        int(step), float(loss)
    assert syncs.count == 2


KEPT = """
import numpy as np
import tensorflow as tf
from tfperf.measure import host_syncs

seen_before = np.asarray
t = tf.constant([1.0, 2.0])
replaced = host_syncs.keep_installed()
kept = np.asarray
assert kept is not seen_before and (np, "asarray") in replaced
np.asarray(t); t.numpy()  # outside a block: counted by none
with host_syncs.counting() as syncs:
    np.asarray(t)
    tf.constant(np.ones(20, np.float32))
assert (syncs.count, syncs.uploads) == (1, 1), (syncs.count, syncs.uploads)
assert np.asarray is kept and not host_syncs.is_counting()  # the same function in and out of a count
with host_syncs.counting():
    assert np.asarray is kept and host_syncs.tampered() == []
print("ok")
"""


def test_wrappers_kept_installed_count_only_inside_a_block_and_look_the_same_outside():
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", KEPT], capture_output=True, text=True, timeout=300)
    assert done.stdout.strip().endswith("ok"), done.stderr[-2000:]


def test_host_data_handed_straight_to_an_op_is_an_upload_once_and_tensors_are_not():
    w = tf.constant(np.ones(20, np.float32))
    row = np.ones(20, np.float32)
    with host_syncs.counting() as syncs:
        tf.math.multiply(row, w)  # converted in TensorFlow's C++ fast path
        tf.raw_ops.Mul(x=row, y=w)
        w * row
        tf.gather(w, np.arange(10) % 20)  # indices from NumPy
        tf.concat([w, row], 0)  # an array in a list input
    assert syncs.uploads == 5 and syncs.upload_kinds == {host_syncs.STRAIGHT_TO_AN_OP: 5}
    assert syncs.upload_bytes == 4 * 80 + 8 * 10
    with host_syncs.counting() as syncs:
        tf.stack([w] * 10)  # a list input of tensors
        tf.reshape(w, [2, 10])  # a shape
        tf.reduce_sum(tf.reshape(w, (4, 5)), axis=[0, 1])
        w * 0.5
        tf.gather(w, tf.range(10))
        tf.constant(row) + w  # converted once, by tf.constant
    assert syncs.uploads == 1 and syncs.upload_kinds == {
        "tf.convert_to_tensor, tf.constant or a NumPy/list argument": 1
    }
