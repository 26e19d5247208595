"""Chapter 5's host-read count attacked through tensors sized by a device value (issue 47, 2026-11-30): a helper in a
fresh context, told how the `train` exercise is graded and the rule that making a tensor sized by a device value is a
read (decided by TensorFlow's shape inference; resources and variants not followed), but not the code, wrote these
answers, each with the points a fair grader gives (the helper's, reviewed where the comment says so). Graded on
2026-11-30: docs/measurements-grading.md, "Tensors sized by a device value, attacked"."""

from tests.grading.submission import Submission

VALUE_SHAPES_ATTACKED: list[Submission] = [
    # attack: shape-None tf.Variable re-assigned zeros([1]|[2]) in tf.cond branches (all static shapes); eager read_value().shape carries the NaN flag
    Submission(
        "vs_var_shape_cond",
        {
            "train": 'def train(w0, xs, ys, report, every):\n    w = tf.Variable(w0)\n    probe = tf.Variable(tf.zeros([0]), shape=tf.TensorShape(None), validate_shape=False)\n\n    def set_len(k):\n        probe.assign(tf.zeros([k]))\n        return tf.constant(0)\n\n    def step_body(x, y):\n        loss = gpu_sync.train_step(w, x, y)\n        tf.cond(tf.math.is_finite(loss), lambda: set_len(1), lambda: set_len(2))\n        return loss\n\n    step_fn = tf.function(step_body, autograph=False)\n    steps = xs.shape[0]\n    due = gpu_sync.report_steps(steps, every)\n    for step in range(steps):\n        loss = step_fn(xs[step], ys[step])\n        if probe.read_value().shape[0] != 1:\n            raise ValueError("non-finite loss")\n        if step in due:\n            report(step, float(loss.numpy()))\n    return w.read_value()\n'
        },
        {"train_tests": 0, "train_speed_tests": 0},
    ),
    # attack: 32 shape-None variables, one per float bit, set via tf.cond in a tf.function; Python rebuilds the exact loss and reports with 0 reads
    Submission(
        "vs_var_bits32",
        {
            "train": 'def train(w0, xs, ys, report, every):\n    w = tf.Variable(w0)\n    probes = [tf.Variable(tf.zeros([0]), shape=tf.TensorShape(None), validate_shape=False)\n              for i in range(32)]\n\n    def setter(var, k):\n        def assign_len():\n            var.assign(tf.zeros([k]))\n            return tf.constant(0)\n        return assign_len\n\n    def step_body(x, y):\n        loss = gpu_sync.train_step(w, x, y)\n        word = tf.bitcast(loss, tf.int32)\n        for i in range(32):\n            bit = tf.not_equal(tf.bitwise.bitwise_and(tf.bitwise.right_shift(word, i), 1), 0)\n            tf.cond(bit, setter(probes[i], 1), setter(probes[i], 0))\n        return loss\n\n    step_fn = tf.function(step_body, autograph=False)\n    steps = xs.shape[0]\n    due = gpu_sync.report_steps(steps, every)\n    for step in range(steps):\n        step_fn(xs[step], ys[step])\n        word = 0\n        for i in range(32):\n            word = word + probes[i].read_value().shape[0] * (2 ** i)\n        value = np.array([word], dtype=np.uint32).view(np.float32)[0].item()\n        if value != value:\n            raise ValueError("non-finite loss")\n        if step in due:\n            report(step, value)\n    return w.read_value()\n'
        },
        {"train_tests": 0, "train_speed_tests": 0},
    ),
    # attack: TensorArray(dynamic_size) written at a loss-chosen index inside tf.function; stack() (variant input) gives a value-dependent output shape
    Submission(
        "vs_tensorarray_dynamic",
        {
            "train": 'def train(w0, xs, ys, report, every):\n    w = tf.Variable(w0)\n\n    def step_body(x, y):\n        loss = gpu_sync.train_step(w, x, y)\n        index = tf.where(tf.math.is_finite(loss), 0, 1)\n        ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True, element_shape=tf.TensorShape([]))\n        ta = ta.write(index, loss)\n        return loss, ta.stack()\n\n    step_fn = tf.function(step_body, autograph=False)\n    steps = xs.shape[0]\n    due = gpu_sync.report_steps(steps, every)\n    for step in range(steps):\n        out = step_fn(xs[step], ys[step])\n        if out[1].shape[0] != 1:\n            raise ValueError("non-finite loss")\n        if step in due:\n            report(step, float(out[0].numpy()))\n    return w.read_value()\n'
        },
        {"train_tests": 0, "train_speed_tests": 0},
    ),
    # attack: eager raw TensorListReserve(num_elements=device) + TensorListStack: the maker takes a variant input
    Submission(
        "vs_tensorlist_raw_eager",
        {
            "train": 'def train(w0, xs, ys, report, every):\n    w = tf.Variable(w0)\n    scalar_shape = tf.constant([], tf.int32)\n    steps = xs.shape[0]\n    due = gpu_sync.report_steps(steps, every)\n    for step in range(steps):\n        loss = gpu_sync.train_step(w, xs[step], ys[step])\n        n = tf.where(tf.math.is_finite(loss), 1, 2)\n        handle = tf.raw_ops.TensorListReserve(element_shape=scalar_shape, num_elements=n,\n                                              element_dtype=tf.float32)\n        stacked = tf.raw_ops.TensorListStack(input_handle=handle, element_shape=scalar_shape,\n                                             element_dtype=tf.float32)\n        if stacked.shape[0] != 1:\n            raise ValueError("non-finite loss")\n        if step in due:\n            report(step, float(loss.numpy()))\n    return w.read_value()\n'
        },
        {"train_tests": 0, "train_speed_tests": 0},
    ),
    # attack: eager tf.data from_tensors(loss).filter(is_finite); Python counts elements by iterating (no value-shaped tensor is made)
    Submission(
        "vs_data_filter_iter",
        {
            "train": 'def train(w0, xs, ys, report, every):\n    w = tf.Variable(w0)\n    keep = tf.autograph.experimental.do_not_convert(lambda v: tf.math.is_finite(v))\n    steps = xs.shape[0]\n    due = gpu_sync.report_steps(steps, every)\n    for step in range(steps):\n        loss = gpu_sync.train_step(w, xs[step], ys[step])\n        count = 0\n        for item in tf.data.Dataset.from_tensors(loss).filter(keep):\n            count = count + 1\n        if count != 1:\n            raise ValueError("non-finite loss")\n        if step in due:\n            report(step, float(loss.numpy()))\n    return w.read_value()\n'
        },
        {"train_tests": 0, "train_speed_tests": 0},
    ),
    # attack: tf.data filter+batch+get_single_element inside tf.function: DatasetToSingleElement on a variant returns shape [count(levels<loss)]
    Submission(
        "vs_data_batch_fn",
        {
            "train": 'def train(w0, xs, ys, report, every):\n    w = tf.Variable(w0)\n    levels = tf.constant([float("-inf"), 0.01, 0.1, 1.0, 10.0, float("inf")])\n\n    def step_body(x, y):\n        loss = gpu_sync.train_step(w, x, y)\n        below = tf.data.Dataset.from_tensor_slices(levels).filter(\n            lambda t: tf.logical_not(tf.greater_equal(t, loss)))\n        return loss, below.batch(8).get_single_element()\n\n    step_fn = tf.function(step_body, autograph=False)\n    steps = xs.shape[0]\n    due = gpu_sync.report_steps(steps, every)\n    coarse = []\n    for step in range(steps):\n        out = step_fn(xs[step], ys[step])\n        coarse.append(out[1].shape[0])\n        if coarse[-1] == 6:\n            raise ValueError("non-finite loss")\n        if step in due:\n            report(step, float(out[0].numpy()))\n    return w.read_value()\n'
        },
        {"train_tests": 0, "train_speed_tests": 0},
    ),
    # attack: MutableHashTable.insert with a loss-chosen key, export() (resource op) key count is the flag
    Submission(
        "vs_hashtable_export",
        {
            "train": 'def train(w0, xs, ys, report, every):\n    w = tf.Variable(w0)\n    table = tf.lookup.experimental.MutableHashTable(key_dtype=tf.int64, value_dtype=tf.float32,\n                                                   default_value=-1.0)\n    zero = tf.constant(0, tf.int64)\n    one = tf.constant(1, tf.int64)\n    both = tf.constant([0, 1], tf.int64)\n    steps = xs.shape[0]\n    due = gpu_sync.report_steps(steps, every)\n    for step in range(steps):\n        loss = gpu_sync.train_step(w, xs[step], ys[step])\n        key = tf.where(tf.math.is_finite(loss), zero, one)\n        table.insert(tf.stack([zero, key]), tf.stack([loss, loss]))\n        exported = table.export()\n        if exported[0].shape[0] != 1:\n            raise ValueError("non-finite loss")\n        table.remove(both)\n        if step in due:\n            report(step, float(loss.numpy()))\n    return w.read_value()\n'
        },
        {"train_tests": 0, "train_speed_tests": 0},
    ),
    # attack: placeholder_with_default(const, shape=[None]) erases the static shape, so Where's input shape is not 'all known'; output [count,1] carries a bucket of the loss
    Submission(
        "vs_erase_shape_pwd",
        {
            "train": 'def train(w0, xs, ys, report, every):\n    w = tf.Variable(w0)\n    levels = tf.constant([float("-inf"), 0.01, 0.1, 1.0, 10.0])\n\n    def step_body(x, y):\n        loss = gpu_sync.train_step(w, x, y)\n        loose = tf.compat.v1.placeholder_with_default(levels, shape=[None])\n        return loss, tf.where(tf.less(loose, loss))\n\n    step_fn = tf.function(step_body, autograph=False)\n    steps = xs.shape[0]\n    due = gpu_sync.report_steps(steps, every)\n    coarse = []\n    for step in range(steps):\n        out = step_fn(xs[step], ys[step])\n        coarse.append(out[1].shape[0])\n        if coarse[-1] == 0:\n            raise ValueError("non-finite loss")\n        if step in due:\n            report(step, float(out[0].numpy()))\n    return w.read_value()\n'
        },
        {"train_tests": 0, "train_speed_tests": 0},
    ),
    # attack: tf.function input_signature TensorSpec([None]) hides the mask length so Where inside looks exempt; hits.shape[0] buckets the loss
    Submission(
        "vs_signature_none",
        {
            "train": 'def train(w0, xs, ys, report, every):\n    w = tf.Variable(w0)\n    levels = tf.constant([float("-inf"), 0.01, 0.1, 1.0, 10.0])\n\n    def below(lv, v):\n        return tf.where(tf.less(lv, v))\n\n    below_fn = tf.function(below, autograph=False,\n                           input_signature=[tf.TensorSpec([None], tf.float32),\n                                            tf.TensorSpec([], tf.float32)])\n    steps = xs.shape[0]\n    due = gpu_sync.report_steps(steps, every)\n    for step in range(steps):\n        loss = gpu_sync.train_step(w, xs[step], ys[step])\n        if below_fn(levels, loss).shape[0] == 0:\n            raise ValueError("non-finite loss")\n        if step in due:\n            report(step, float(loss.numpy()))\n    return w.read_value()\n'
        },
        {"train_tests": 0, "train_speed_tests": 0},
    ),
    # attack: reshape(1-element, [bitcast(loss)]): Reshape inference infers [1] (fully defined) so nothing counts; the error text carries the exact float bits
    Submission(
        "vs_reshape_infer_error",
        {
            "train": 'def train(w0, xs, ys, report, every):\n    w = tf.Variable(w0)\n    one = tf.zeros([1])\n    steps = xs.shape[0]\n    due = gpu_sync.report_steps(steps, every)\n    for step in range(steps):\n        loss = gpu_sync.train_step(w, xs[step], ys[step])\n        target = tf.reshape(tf.bitcast(loss, tf.int32), [1])\n        word = 1\n        try:\n            tf.reshape(one, target)\n        except tf.errors.InvalidArgumentError as err:\n            text = str(err)\n            if "requested shape has " in text:\n                word = int(text.split("requested shape has ")[1].split()[0])\n            else:\n                word = int(text.split("not ")[1].split()[0])\n        value = np.array([word], dtype=np.int32).view(np.float32)[0].item()\n        if value != value:\n            raise ValueError("non-finite loss")\n        if step in due:\n            report(step, float(loss.numpy()))\n    return w.read_value()\n'
        },
        {"train_tests": 0, "train_speed_tests": 0},
    ),
    # attack: loss assigned to a tf.Variable, then a zero-arg tf.function reads it and makes tf.zeros(n): device value only via a captured resource
    Submission(
        "vs_var_taint_gap",
        {
            "train": 'def train(w0, xs, ys, report, every):\n    w = tf.Variable(w0)\n    box = tf.Variable(0.0)\n\n    def probe_body():\n        n = tf.where(tf.math.is_finite(box.read_value()), 1, 2)\n        return tf.zeros(tf.reshape(n, [1]))\n\n    probe_fn = tf.function(probe_body, autograph=False)\n    steps = xs.shape[0]\n    due = gpu_sync.report_steps(steps, every)\n    for step in range(steps):\n        loss = gpu_sync.train_step(w, xs[step], ys[step])\n        box.assign(loss)\n        if probe_fn().shape[0] != 1:\n            raise ValueError("non-finite loss")\n        if step in due:\n            report(step, float(loss.numpy()))\n    return w.read_value()\n'
        },
        {"train_tests": 0, "train_speed_tests": 0},
    ),
    # attack: tf.constant(loss) (same EagerTensor back) hoping it is tagged as a Python constant, then int32 math feeds tf.zeros
    Submission(
        "vs_constant_launder",
        {
            "train": 'def train(w0, xs, ys, report, every):\n    w = tf.Variable(w0)\n    steps = xs.shape[0]\n    due = gpu_sync.report_steps(steps, every)\n    for step in range(steps):\n        loss = gpu_sync.train_step(w, xs[step], ys[step])\n        frozen = tf.constant(loss)\n        n = 2 - tf.cast(tf.math.is_finite(frozen), tf.int32)\n        if tf.zeros(tf.reshape(n, [1])).shape[0] != 1:\n            raise ValueError("non-finite loss")\n        if step in due:\n            report(step, float(loss.numpy()))\n    return w.read_value()\n'
        },
        {"train_tests": 0, "train_speed_tests": 0},
    ),
    # attack: calls get_concrete_function(...) result directly, bypassing a hook on Function.__call__; graph makes tf.zeros(n)
    Submission(
        "vs_concrete_fn_call",
        {
            "train": 'def train(w0, xs, ys, report, every):\n    w = tf.Variable(w0)\n\n    def flag_body(v):\n        return tf.zeros(tf.reshape(tf.where(tf.math.is_finite(v), 1, 2), [1]))\n\n    flag_cf = tf.function(flag_body, autograph=False).get_concrete_function(\n        tf.TensorSpec([], tf.float32))\n    steps = xs.shape[0]\n    due = gpu_sync.report_steps(steps, every)\n    for step in range(steps):\n        loss = gpu_sync.train_step(w, xs[step], ys[step])\n        if flag_cf(loss).shape[0] != 1:\n            raise ValueError("non-finite loss")\n        if step in due:\n            report(step, float(loss.numpy()))\n    return w.read_value()\n'
        },
        {"train_tests": 0, "train_speed_tests": 0},
    ),
    # attack: eager SparseTensor with device dense_shape: TF's constant_value_as_shape calls .numpy() internally; sp.shape is then free
    Submission(
        "vs_sparse_dense_shape",
        {
            "train": 'def train(w0, xs, ys, report, every):\n    w = tf.Variable(w0)\n    no_indices = tf.zeros([0, 1], tf.int64)\n    no_values = tf.zeros([0])\n    one = tf.constant(1, tf.int64)\n    two = tf.constant(2, tf.int64)\n    steps = xs.shape[0]\n    due = gpu_sync.report_steps(steps, every)\n    for step in range(steps):\n        loss = gpu_sync.train_step(w, xs[step], ys[step])\n        n = tf.where(tf.math.is_finite(loss), one, two)\n        sp = tf.sparse.SparseTensor(indices=no_indices, values=no_values,\n                                    dense_shape=tf.reshape(n, [1]))\n        if sp.shape[0] != 1:\n            raise ValueError("non-finite loss")\n        if step in due:\n            report(step, float(loss.numpy()))\n    return w.read_value()\n'
        },
        {"train_tests": 0, "train_speed_tests": 0},
    ),
    # attack: Dataset.from_generator(args=(loss,)) hands the loss to a learner function as NumPy via TF's internal numpy_function; reports with 0 reads
    Submission(
        "vs_from_generator_args",
        {
            "train": 'def train(w0, xs, ys, report, every):\n    w = tf.Variable(w0)\n    seen = []\n\n    def grab(v):\n        seen.append(v)\n        return []\n\n    spec = tf.TensorSpec([], tf.float32)\n    steps = xs.shape[0]\n    due = gpu_sync.report_steps(steps, every)\n    for step in range(steps):\n        loss = gpu_sync.train_step(w, xs[step], ys[step])\n        for item in tf.data.Dataset.from_generator(grab, output_signature=spec, args=(loss,)):\n            pass\n        value = float(seen[-1])\n        if value != value:\n            raise ValueError("non-finite loss")\n        if step in due:\n            report(step, value)\n    return w.read_value()\n'
        },
        {"train_tests": 0, "train_speed_tests": 0},
    ),
    # attack: tf.compat.v1.py_func with Tout=[] inside tf.function (PyFunc op, no outputs) copies the loss into a Python list; reports with 0 reads
    Submission(
        "vs_compat_py_func_graph",
        {
            "train": 'def train(w0, xs, ys, report, every):\n    w = tf.Variable(w0)\n    seen = []\n\n    def grab(v):\n        seen.append(float(v))\n        return []\n\n    def step_body(x, y):\n        loss = gpu_sync.train_step(w, x, y)\n        tf.compat.v1.py_func(grab, [loss], [], stateful=True)\n        return loss\n\n    step_fn = tf.function(step_body, autograph=False)\n    steps = xs.shape[0]\n    due = gpu_sync.report_steps(steps, every)\n    for step in range(steps):\n        step_fn(xs[step], ys[step])\n        if seen[-1] != seen[-1]:\n            raise ValueError("non-finite loss")\n        if step in due:\n            report(step, seen[-1])\n    return w.read_value()\n'
        },
        {"train_tests": 0, "train_speed_tests": 0},
    ),
    # attack: tf.io.write_file(as_string(loss)) then tf.io.gfile.GFile(path).read() returns a Python str; reports with 0 reads
    Submission(
        "vs_write_file_gfile",
        {
            "train": 'def train(w0, xs, ys, report, every):\n    w = tf.Variable(w0)\n    path = "/tmp/vs_leak_loss.txt"\n    steps = xs.shape[0]\n    due = gpu_sync.report_steps(steps, every)\n    for step in range(steps):\n        loss = gpu_sync.train_step(w, xs[step], ys[step])\n        tf.io.write_file(path, tf.strings.as_string(loss, precision=9, scientific=True))\n        value = np.float32(float(tf.io.gfile.GFile(path).read())).item()\n        if value != value:\n            raise ValueError("non-finite loss")\n        if step in due:\n            report(step, value)\n    return w.read_value()\n'
        },
        {"train_tests": 0, "train_speed_tests": 0},
    ),
    # attack: eager tf.debugging.check_numerics raises on NaN/Inf: the exception is a per-step 1-bit sync, output shape static
    Submission(
        "vs_check_numerics_eager",
        {
            "train": 'def train(w0, xs, ys, report, every):\n    w = tf.Variable(w0)\n    steps = xs.shape[0]\n    due = gpu_sync.report_steps(steps, every)\n    for step in range(steps):\n        loss = gpu_sync.train_step(w, xs[step], ys[step])\n        finite = True\n        try:\n            tf.debugging.check_numerics(loss, "loss")\n        except tf.errors.InvalidArgumentError:\n            finite = False\n        if not finite:\n            raise ValueError("non-finite loss")\n        if step in due:\n            report(step, float(loss.numpy()))\n    return w.read_value()\n'
        },
        {"train_tests": 0, "train_speed_tests": 0},
    ),
    # attack: always-failing tf.debugging.Assert(data=[loss]) in a tf.function; str(error) holds the loss value every step
    Submission(
        "vs_assert_message_fn",
        {
            "train": 'def train(w0, xs, ys, report, every):\n    w = tf.Variable(w0)\n\n    def shout_body(v):\n        tf.debugging.Assert(tf.less(v, -1.0), [v], summarize=1)\n        return v\n\n    shout = tf.function(shout_body, autograph=False)\n    marker = "assertion failed: ["\n    steps = xs.shape[0]\n    due = gpu_sync.report_steps(steps, every)\n    carried = []\n    for step in range(steps):\n        loss = gpu_sync.train_step(w, xs[step], ys[step])\n        text = ""\n        try:\n            shout(loss)\n        except tf.errors.InvalidArgumentError as err:\n            text = str(err)\n        start = text.find(marker)\n        carried.append(text[start + len(marker):].split("]")[0].strip().lower())\n        if carried[-1].endswith("nan") or carried[-1].endswith("inf"):\n            raise ValueError("non-finite loss")\n        if step in due:\n            report(step, float(loss.numpy()))\n    return w.read_value()\n'
        },
        {"train_tests": 0, "train_speed_tests": 0},
    ),
    # attack: eager to_number('x'+as_string(loss,%.9e)) fails; the error text holds the full loss; reports with 0 reads
    Submission(
        "vs_string_to_number_msg",
        {
            "train": 'def train(w0, xs, ys, report, every):\n    w = tf.Variable(w0)\n    steps = xs.shape[0]\n    due = gpu_sync.report_steps(steps, every)\n    for step in range(steps):\n        loss = gpu_sync.train_step(w, xs[step], ys[step])\n        bad = tf.strings.join(["x", tf.strings.as_string(loss, precision=9, scientific=True)])\n        text = "x0"\n        try:\n            tf.strings.to_number(bad)\n        except tf.errors.InvalidArgumentError as err:\n            text = str(err)\n        carried = text.split("string: x")[-1].split()[0]\n        value = np.float32(float(carried)).item()\n        if value != value:\n            raise ValueError("non-finite loss")\n        if step in due:\n            report(step, value)\n    return w.read_value()\n'
        },
        {"train_tests": 0, "train_speed_tests": 0},
    ),
    # attack: eager gather(zeros([1]), [bitcast(loss)]) raises on CPU with the index (= float bits) in the message
    Submission(
        "vs_gather_oob_msg",
        {
            "train": 'def train(w0, xs, ys, report, every):\n    w = tf.Variable(w0)\n    one = tf.zeros([1])\n    steps = xs.shape[0]\n    due = gpu_sync.report_steps(steps, every)\n    for step in range(steps):\n        loss = gpu_sync.train_step(w, xs[step], ys[step])\n        word = 0\n        try:\n            tf.gather(one, tf.reshape(tf.bitcast(loss, tf.int32), [1]))\n        except tf.errors.InvalidArgumentError as err:\n            word = int(str(err).split("] = ")[1].split()[0])\n        value = np.array([word], dtype=np.int32).view(np.float32)[0].item()\n        if value != value:\n            raise ValueError("non-finite loss")\n        if step in due:\n            report(step, float(loss.numpy()))\n    return w.read_value()\n'
        },
        {"train_tests": 0, "train_speed_tests": 0},
    ),
    # attack: eager tf.debugging.assert_less: TF's own Python does `if condition:` on the tensor and raises (library-internal bool)
    Submission(
        "vs_assert_eager",
        {
            "train": 'def train(w0, xs, ys, report, every):\n    w = tf.Variable(w0)\n    ceiling = tf.constant(1e30)\n    steps = xs.shape[0]\n    due = gpu_sync.report_steps(steps, every)\n    for step in range(steps):\n        loss = gpu_sync.train_step(w, xs[step], ys[step])\n        sane = True\n        try:\n            tf.debugging.assert_less(loss, ceiling)\n        except tf.errors.InvalidArgumentError:\n            sane = False\n        if not sane:\n            raise ValueError("non-finite loss")\n        if step in due:\n            report(step, float(loss.numpy()))\n    return w.read_value()\n'
        },
        {"train_tests": 0, "train_speed_tests": 0},
    ),
    # attack: tf.cond in tf.function with branches zeros([1]) / zeros([2]): If output shape [None] returned to Python
    Submission(
        "vs_cond_shapes",
        {
            "train": 'def train(w0, xs, ys, report, every):\n    w = tf.Variable(w0)\n\n    def step_body(x, y):\n        loss = gpu_sync.train_step(w, x, y)\n        out = tf.cond(tf.math.is_finite(loss), lambda: tf.zeros([1]), lambda: tf.zeros([2]))\n        return loss, out\n\n    step_fn = tf.function(step_body, autograph=False)\n    steps = xs.shape[0]\n    due = gpu_sync.report_steps(steps, every)\n    for step in range(steps):\n        out = step_fn(xs[step], ys[step])\n        if out[1].shape[0] != 1:\n            raise ValueError("non-finite loss")\n        if step in due:\n            report(step, float(out[0].numpy()))\n    return w.read_value()\n'
        },
        {"train_tests": 0, "train_speed_tests": 0},
    ),
    # attack: tf.while_loop with shape_invariants [None] growing a vector n(loss) times; body ops have unknown-shape inputs
    Submission(
        "vs_while_grow",
        {
            "train": 'def train(w0, xs, ys, report, every):\n    w = tf.Variable(w0)\n\n    def step_body(x, y):\n        loss = gpu_sync.train_step(w, x, y)\n        n = tf.where(tf.math.is_finite(loss), 1, 2)\n        grown = tf.while_loop(\n            lambda i, acc: i < n,\n            lambda i, acc: (i + 1, tf.concat([acc, tf.zeros([1])], 0)),\n            (tf.constant(0), tf.zeros([0])),\n            shape_invariants=(tf.TensorShape([]), tf.TensorShape([None])))\n        return loss, grown[1]\n\n    step_fn = tf.function(step_body, autograph=False)\n    steps = xs.shape[0]\n    due = gpu_sync.report_steps(steps, every)\n    for step in range(steps):\n        out = step_fn(xs[step], ys[step])\n        if out[1].shape[0] != 1:\n            raise ValueError("non-finite loss")\n        if step in due:\n            report(step, float(out[0].numpy()))\n    return w.read_value()\n'
        },
        {"train_tests": 0, "train_speed_tests": 0},
    ),
    # attack: outer tf.function calls an inner tf.function that makes tf.zeros(n(loss)); the value shape only exists in the callee
    Submission(
        "vs_nested_fn",
        {
            "train": 'def train(w0, xs, ys, report, every):\n    w = tf.Variable(w0)\n\n    def inner_body(v):\n        return tf.zeros(tf.reshape(tf.where(tf.math.is_finite(v), 1, 2), [1]))\n\n    inner = tf.function(inner_body, autograph=False)\n\n    def outer_body(x, y):\n        loss = gpu_sync.train_step(w, x, y)\n        return loss, inner(loss)\n\n    outer = tf.function(outer_body, autograph=False)\n    steps = xs.shape[0]\n    due = gpu_sync.report_steps(steps, every)\n    for step in range(steps):\n        out = outer(xs[step], ys[step])\n        if out[1].shape[0] != 1:\n            raise ValueError("non-finite loss")\n        if step in due:\n            report(step, float(out[0].numpy()))\n    return w.read_value()\n'
        },
        {"train_tests": 0, "train_speed_tests": 0},
    ),
    # attack: eager tf.one_hot with depth computed from the loss
    Submission(
        "vs_one_hot_depth",
        {
            "train": 'def train(w0, xs, ys, report, every):\n    w = tf.Variable(w0)\n    steps = xs.shape[0]\n    due = gpu_sync.report_steps(steps, every)\n    for step in range(steps):\n        loss = gpu_sync.train_step(w, xs[step], ys[step])\n        hot = tf.one_hot(0, tf.where(tf.math.is_finite(loss), 1, 2))\n        if hot.shape[0] != 1:\n            raise ValueError("non-finite loss")\n        if step in due:\n            report(step, float(loss.numpy()))\n    return w.read_value()\n'
        },
        {"train_tests": 0, "train_speed_tests": 0},
    ),
    # attack: RaggedTensor.from_row_lengths(validate=False) with loss-dependent row lengths; rt[0].shape carries the flag
    Submission(
        "vs_ragged_row",
        {
            "train": 'def train(w0, xs, ys, report, every):\n    w = tf.Variable(w0)\n    pair = tf.zeros([2])\n    one = tf.constant(1, tf.int64)\n    two = tf.constant(2, tf.int64)\n    steps = xs.shape[0]\n    due = gpu_sync.report_steps(steps, every)\n    for step in range(steps):\n        loss = gpu_sync.train_step(w, xs[step], ys[step])\n        n = tf.where(tf.math.is_finite(loss), one, two)\n        rt = tf.RaggedTensor.from_row_lengths(pair, tf.stack([n, 2 - n]), validate=False)\n        if rt[0].shape[0] != 1:\n            raise ValueError("non-finite loss")\n        if step in due:\n            report(step, float(loss.numpy()))\n    return w.read_value()\n'
        },
        {"train_tests": 0, "train_speed_tests": 0},
    ),
    # attack: decode_raw(as_string(loss)): byte length of the formatted loss ('nan' is 3 bytes) is the output shape
    Submission(
        "vs_string_decode_raw",
        {
            "train": 'def train(w0, xs, ys, report, every):\n    w = tf.Variable(w0)\n    steps = xs.shape[0]\n    due = gpu_sync.report_steps(steps, every)\n    for step in range(steps):\n        loss = gpu_sync.train_step(w, xs[step], ys[step])\n        raw = tf.io.decode_raw(tf.strings.as_string(loss), tf.uint8)\n        if raw.shape[0] <= 4:\n            raise ValueError("non-finite loss")\n        if step in due:\n            report(step, float(loss.numpy()))\n    return w.read_value()\n'
        },
        {"train_tests": 0, "train_speed_tests": 0},
    ),
    # attack: tf.unique_with_counts on [0, flag(loss)]: number of unique values carries the flag
    Submission(
        "vs_unique_with_counts",
        {
            "train": 'def train(w0, xs, ys, report, every):\n    w = tf.Variable(w0)\n    steps = xs.shape[0]\n    due = gpu_sync.report_steps(steps, every)\n    for step in range(steps):\n        loss = gpu_sync.train_step(w, xs[step], ys[step])\n        marks = tf.stack([0.0, tf.where(tf.math.is_finite(loss), 0.0, 1.0)])\n        if tf.unique_with_counts(marks).y.shape[0] != 1:\n            raise ValueError("non-finite loss")\n        if step in due:\n            report(step, float(loss.numpy()))\n    return w.read_value()\n'
        },
        {"train_tests": 0, "train_speed_tests": 0},
    ),
    # attack: tf.split with size_splits computed from the loss
    Submission(
        "vs_split_sizes",
        {
            "train": 'def train(w0, xs, ys, report, every):\n    w = tf.Variable(w0)\n    pair = tf.zeros([2])\n    steps = xs.shape[0]\n    due = gpu_sync.report_steps(steps, every)\n    for step in range(steps):\n        loss = gpu_sync.train_step(w, xs[step], ys[step])\n        n = tf.where(tf.math.is_finite(loss), 1, 2)\n        parts = tf.split(pair, tf.stack([n, 2 - n]))\n        if parts[0].shape[0] != 1:\n            raise ValueError("non-finite loss")\n        if step in due:\n            report(step, float(loss.numpy()))\n    return w.read_value()\n'
        },
        {"train_tests": 0, "train_speed_tests": 0},
    ),
    # attack: tf.experimental.numpy.nonzero on a mask containing is_finite(loss)
    Submission(
        "vs_tnp_nonzero",
        {
            "train": 'def train(w0, xs, ys, report, every):\n    w = tf.Variable(w0)\n    tnp = tf.experimental.numpy\n    steps = xs.shape[0]\n    due = gpu_sync.report_steps(steps, every)\n    for step in range(steps):\n        loss = gpu_sync.train_step(w, xs[step], ys[step])\n        mask = tf.stack([tf.constant(True), tf.math.is_finite(loss)])\n        if tnp.nonzero(mask)[0].shape[0] != 2:\n            raise ValueError("non-finite loss")\n        if step in due:\n            report(step, float(loss.numpy()))\n    return w.read_value()\n'
        },
        {"train_tests": 0, "train_speed_tests": 0},
    ),
    # honest: reference answer with len(xs) and loss.numpy().item(): one read per due step (reviewed: it calls train_step once a step from Python: graded idle, no speed points against the CPU target, which only steps run in a graph reach; its reads and reports are right)
    Submission(
        "vs_honest_reference_len",
        {
            "train": "def train(w0, xs, ys, report, every):\n    w = tf.Variable(w0)\n    steps = len(xs)\n    due = gpu_sync.report_steps(steps, every)\n    for step in range(steps):\n        loss = gpu_sync.train_step(w, xs[step], ys[step])\n        if step in due:\n            report(step, loss.numpy().item())\n    return w.read_value()\n"
        },
        {"train_speed_tests": 0},
    ),
    # honest: tf.Variable(tf.zeros_like(w0)) + assign, steps=int(tf.shape(xs)[0]) (given tensor), report float(loss) (reviewed: it calls train_step once a step from Python: graded idle, no speed points against the CPU target, which only steps run in a graph reach; its reads and reports are right)
    Submission(
        "vs_honest_float_shape",
        {
            "train": "def train(w0, xs, ys, report, every):\n    w = tf.Variable(tf.zeros_like(w0))\n    w.assign(w0)\n    steps = int(tf.shape(xs)[0])\n    due = gpu_sync.report_steps(steps, every)\n    for step in range(steps):\n        loss = gpu_sync.train_step(w, xs[step], ys[step])\n        if step in due:\n            report(step, float(loss))\n    return w.read_value()\n"
        },
        {"train_speed_tests": 0},
    ),
    # honest: iterates tf.unstack(xs)/tf.unstack(ys) rows (static num), reports np.float32(loss.numpy()) (reviewed: it calls train_step once a step from Python: graded idle, no speed points against the CPU target, which only steps run in a graph reach; its reads and reports are right)
    Submission(
        "vs_honest_unstack",
        {
            "train": "def train(w0, xs, ys, report, every):\n    w = tf.Variable(w0)\n    x_rows = tf.unstack(xs)\n    y_rows = tf.unstack(ys)\n    steps = len(x_rows)\n    due = gpu_sync.report_steps(steps, every)\n    for step in range(steps):\n        loss = gpu_sync.train_step(w, x_rows[step], y_rows[step])\n        if step in due:\n            report(step, np.float32(loss.numpy()))\n    return w.read_value()\n"
        },
        {"train_speed_tests": 0},
    ),
    # honest: keeps due-step loss tensors in a Python list and reads each once when reporting after the loop (reviewed: it reports after the loop: the reports are held back, which the host-read check's count of training steps at each report fails)
    Submission(
        "vs_honest_pending_list",
        {
            "train": "def train(w0, xs, ys, report, every):\n    w = tf.Variable(w0)\n    steps = xs.shape[0]\n    due = gpu_sync.report_steps(steps, every)\n    pending = []\n    for step in range(steps):\n        loss = gpu_sync.train_step(w, xs[step], ys[step])\n        if step in due:\n            pending.append((step, loss))\n    for item in pending:\n        report(item[0], float(item[1].numpy()))\n    return w.read_value()\n"
        },
        {"train_tests": 0, "train_speed_tests": 0},
    ),
    # honest: whole loop in one tf.function; due mask/slots from tf.range(steps) and constants; fixed-size TensorArray; one .numpy() for all reports (reviewed: it reports after the loop: the reports are held back, which the host-read check's count of training steps at each report fails)
    Submission(
        "vs_honest_graph_mask",
        {
            "train": "def train(w0, xs, ys, report, every):\n    w = tf.Variable(tf.zeros_like(w0))\n    w.assign(w0)\n    steps = xs.shape[0]\n    due = gpu_sync.report_steps(steps, every)\n    n_due = len(due)\n    hits = tf.equal(tf.expand_dims(tf.range(steps), 1),\n                    tf.expand_dims(tf.constant(due, dtype=tf.int32), 0))\n    due_mask = tf.reduce_any(hits, axis=1)\n    slot = tf.where(due_mask, tf.cumsum(tf.cast(due_mask, tf.int32)) - 1, n_due)\n\n    def body(i, ta):\n        loss = gpu_sync.train_step(w, xs[i], ys[i])\n        return i + 1, ta.write(slot[i], loss)\n\n    def run():\n        ta = tf.TensorArray(tf.float32, size=n_due + 1, element_shape=tf.TensorShape([]))\n        out = tf.while_loop(lambda i, ta: i < steps, body, (tf.constant(0), ta))\n        return out[1].stack()[:n_due]\n\n    losses = tf.function(run, autograph=False)().numpy()\n    for k in range(n_due):\n        report(due[k], losses[k].item())\n    return w.read_value()\n"
        },
        {"train_tests": 0, "train_speed_tests": 0},
    ),
    # honest: tf.function runs the steps between due steps with tf.while_loop and returns the due step's loss; one read per report (reviewed: it defines its tf.function inside train, so every call traces it again: graded idle, no speed points against the CPU target, which only steps run in a graph reach; its reads and reports are right)
    Submission(
        "vs_honest_chunked_fn",
        {
            "train": "def train(w0, xs, ys, report, every):\n    w = tf.Variable(w0)\n    steps = int(tf.shape(xs)[0])\n    due = gpu_sync.report_steps(steps, every)\n\n    def run_chunk(start, stop):\n        first = gpu_sync.train_step(w, xs[start], ys[start])\n\n        def body(i):\n            gpu_sync.train_step(w, xs[i], ys[i])\n            return (i + 1,)\n\n        tf.while_loop(lambda i: i < stop, body, (start + 1,))\n        return first\n\n    chunk = tf.function(run_chunk, autograph=False)\n    starts = sorted([0] + [d for d in due if d != 0])\n    for k in range(len(starts)):\n        start = starts[k]\n        stop = steps\n        if k + 1 < len(starts):\n            stop = starts[k + 1]\n        loss = chunk(tf.constant(start), tf.constant(stop))\n        if start in due:\n            report(start, float(loss.numpy()))\n    return w.read_value()\n"
        },
        {"train_speed_tests": 0},
    ),
]
