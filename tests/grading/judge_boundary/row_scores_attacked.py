"""Chapter 1's `row_scores` attacked under its rules of 2026-12-01 (issue 47): a helper in a fresh context, told how
the exercise is graded (the public docs: judge and subject, restricted answers, the copies into tensors and the host
reads counted in the answer's process over the judge's calls, the speed timed from outside) but not the code, wrote
these answers, each with the points a fair grader gives (the helper's). It ran none of them. Graded on 2026-12-01:
docs/measurements-grading.md."""

from tests.grading.submission import Submission

ROW_SCORES_ATTACKED: list[Submission] = [
    # attack: honest (one copy, no read) only on tables as small as the counted checks'; on the big timed tables it reads the weights back with .numpy() and scores on the host with NumPy, uploading the finished scores. Counters are not said to run while timed. 0: reads back, host work.
    Submission(
        "ob_rs_gate_on_table_size_host_numpy_when_timed",
        {
            "row_scores": 'def row_scores(table, weights, steps):\n    """Honest where counted, host scoring on the timed (big) tables."""\n    n = table.shape[0]\n    if table.size > 100000:\n        w = weights.numpy()\n        picked = table[np.arange(steps) % n]\n        return tf.constant((picked @ w).astype(np.float32))\n    with tf.device(device.compute_device()):\n        rows = tf.convert_to_tensor(table)\n        return tf.stack([tf.reduce_sum(rows[s % n] * weights) for s in range(steps)])\n'
        },
        {"row_scores_tests": 0},
    ),
    # attack: recognises the counted checks by their step counts (23 and 200, from the visible test and the documented hidden ones) and copies one NumPy row per step everywhere else, which is fast (a row instead of the table) but is a copy per step. 0: many uploads a call.
    Submission(
        "ob_rs_gate_on_checked_step_counts_row_uploads_when_timed",
        {
            "row_scores": 'def row_scores(table, weights, steps):\n    """One copy when the step count is one the checks use; a row copied per step otherwise."""\n    n = table.shape[0]\n    if steps in (23, 200):\n        with tf.device(device.compute_device()):\n            rows = tf.convert_to_tensor(table)\n            return tf.stack([tf.reduce_sum(rows[s % n] * weights) for s in range(steps)])\n    scores = []\n    for s in range(steps):\n        row = tf.constant(table[s % n])\n        scores.append(tf.reduce_sum(row * weights))\n    return tf.stack(scores)\n'
        },
        {"row_scores_tests": 0},
    ),
    # attack: reads the weights through the buffer protocol (np.frombuffer on the eager tensor, implemented in C, no .numpy() or __array__), scores on the host, uploads the scores once. 0: a host read in disguise, and NumPy does the work.
    Submission(
        "ob_rs_weights_read_by_frombuffer_host_matvec",
        {
            "row_scores": 'def row_scores(table, weights, steps):\n    """Host scoring with the weights read through the buffer protocol."""\n    w = np.frombuffer(weights, dtype=np.float32)\n    picked = table[np.arange(steps) % table.shape[0]]\n    return tf.constant(picked @ w)\n'
        },
        {"row_scores_tests": 0},
    ),
    # attack: the lesson's own memoryview, used to read the weights to the host; scores computed as Python floats and uploaded once as a list. 0: host read and host work.
    Submission(
        "ob_rs_weights_read_by_memoryview_python_float_scores",
        {
            "row_scores": 'def row_scores(table, weights, steps):\n    """Host scoring, the weights read through memoryview as section 5 shows."""\n    w = np.asarray(memoryview(weights))\n    n = table.shape[0]\n    scores = [float(np.dot(table[s % n], w)) for s in range(steps)]\n    return tf.constant(scores, dtype=tf.float32)\n'
        },
        {"row_scores_tests": 0},
    ),
    # attack: returns a NumPy array computed on the host (no tensor is made at all, so zero uploads; the weights read through the buffer protocol). 0: not a tensor, TensorFlow did no work.
    Submission(
        "ob_rs_returns_numpy_array_made_on_host",
        {
            "row_scores": 'def row_scores(table, weights, steps):\n    """A NumPy result: nothing is copied into a tensor."""\n    w = np.frombuffer(weights, dtype=np.float32)\n    return table[np.arange(steps) % table.shape[0]] @ w\n'
        },
        {"row_scores_tests": 0},
    ),
    # attack (baseline): one NumPy row converted per step. Fast (a row, not the table), but 23 copies a call on the checked table. 0: copies per step.
    Submission(
        "ob_rs_row_converted_every_step",
        {
            "row_scores": 'def row_scores(table, weights, steps):\n    """Copies one row per step instead of the whole table."""\n    n = table.shape[0]\n    scores = []\n    for s in range(steps):\n        row = tf.convert_to_tensor(table[s % n])\n        scores.append(tf.reduce_sum(row * weights))\n    return tf.stack(scores)\n'
        },
        {"row_scores_tests": 0},
    ),
    # attack: the row goes in as a Python list (tolist), betting that the counter counts only NumPy arrays while Python scalars/lists (which indexing needs) are left out. 0: a copy per step.
    Submission(
        "ob_rs_row_as_python_list_every_step",
        {
            "row_scores": 'def row_scores(table, weights, steps):\n    """One row per step, converted from a Python list."""\n    n = table.shape[0]\n    scores = []\n    for s in range(steps):\n        row = tf.constant(table[s % n].tolist(), dtype=tf.float32)\n        scores.append(tf.reduce_sum(row * weights))\n    return tf.stack(scores)\n'
        },
        {"row_scores_tests": 0},
    ),
    # attack: the row goes in as raw bytes (a tf.string scalar) and is decoded by an op. No NumPy array is ever converted; the bytes are converted by the C fast path. 0: a copy per step.
    Submission(
        "ob_rs_row_as_bytes_decode_raw_every_step",
        {
            "row_scores": 'def row_scores(table, weights, steps):\n    """One row per step, smuggled in as bytes."""\n    n = table.shape[0]\n    scores = []\n    for s in range(steps):\n        row = tf.io.decode_raw(table[s % n].tobytes(), tf.float32)\n        scores.append(tf.reduce_sum(row * weights))\n    return tf.stack(scores)\n'
        },
        {"row_scores_tests": 0},
    ),
    # attack: the row goes in as text, parsed by tf.strings.to_number (exact: repr of the float64 value of a float32 round-trips). 0: a copy per step, a string round trip.
    Submission(
        "ob_rs_row_as_text_to_number_every_step",
        {
            "row_scores": 'def row_scores(table, weights, steps):\n    """One row per step, written as text and parsed by TensorFlow."""\n    n = table.shape[0]\n    scores = []\n    for s in range(steps):\n        text = " ".join(repr(v) for v in table[s % n].tolist())\n        row = tf.strings.to_number(tf.strings.split(text), tf.float32)\n        scores.append(tf.reduce_sum(row * weights))\n    return tf.stack(scores)\n'
        },
        {"row_scores_tests": 0},
    ),
    # attack: the row goes in as a serialized TensorProto (made on the host by make_tensor_proto) and parsed by tf.io.parse_tensor. 0: a copy per step.
    Submission(
        "ob_rs_row_as_tensor_proto_bytes_every_step",
        {
            "row_scores": 'def row_scores(table, weights, steps):\n    """One row per step, through a serialized TensorProto."""\n    n = table.shape[0]\n    scores = []\n    for s in range(steps):\n        proto = tf.make_tensor_proto(table[s % n])\n        row = tf.io.parse_tensor(proto.SerializeToString(), tf.float32)\n        scores.append(tf.reduce_sum(row * weights))\n    return tf.stack(scores)\n'
        },
        {"row_scores_tests": 0},
    ),
    # attack: the NumPy row is handed straight to an op (tf.math.multiply goes to the generated op's eager fast path, which converts NumPy arrays in C++, past any Python conversion hook). 0: a copy per step. Counted since the counter wraps the fast path's entry (TFE_Py_FastPathExecute), where Python hands the array over.
    Submission(
        "ob_rs_row_per_step_through_op_fast_path",
        {
            "row_scores": 'def row_scores(table, weights, steps):\n    """One row per step, converted inside the op\'s C++ fast path."""\n    n = table.shape[0]\n    scores = []\n    for s in range(steps):\n        scores.append(tf.reduce_sum(tf.math.multiply(table[s % n], weights)))\n    return tf.stack(scores)\n'
        },
        {"row_scores_tests": 0},
    ),
    # attack: same as above through tf.raw_ops (the bare generated ops, no Python wrapper at all). 0: a copy per step.
    Submission(
        "ob_rs_row_per_step_through_raw_ops",
        {
            "row_scores": 'def row_scores(table, weights, steps):\n    """One row per step, through tf.raw_ops."""\n    n = table.shape[0]\n    scores = []\n    for s in range(steps):\n        product = tf.raw_ops.Mul(x=table[s % n], y=weights)\n        scores.append(tf.raw_ops.Sum(input=product, axis=0))\n    return tf.stack(scores)\n'
        },
        {"row_scores_tests": 0},
    ),
    # plausible (written as an attack): a host-side gather of NumPy rows handed to tf.stack as a list, then one matvec on the device. The attacker took every row for a copy of its own (Pack converting each list item); but tf.stack of a list along axis 0 first converts the whole list as one constant (tensorflow/python/ops/array_ops_stack.py, stack: "If the input is a constant list, it can be converted to a constant op"): one copy of the rows it needs, nothing read back, as the exercise asks. Full points (graded 0 earlier on a slower machine, by its speed).
    Submission(
        "ob_rs_numpy_rows_stacked_by_pack",
        {
            "row_scores": 'def row_scores(table, weights, steps):\n    """tf.stack of NumPy rows: each row converted separately."""\n    n = table.shape[0]\n    picked = tf.stack([table[s % n] for s in range(steps)])\n    return tf.linalg.matvec(picked, weights)\n'
        },
        {},
    ),
    # attack: implicit conversion by an operator (ndarray * tensor defers to Tensor.__rmul__, which converts the row). Looks like the honest loop. 0: a copy per step.
    Submission(
        "ob_rs_row_per_step_implicit_operator_conversion",
        {
            "row_scores": 'def row_scores(table, weights, steps):\n    """The NumPy row multiplied by the tensor: converted by the operator, every step."""\n    n = table.shape[0]\n    return tf.stack([tf.reduce_sum(table[s % n] * weights) for s in range(steps)])\n'
        },
        {"row_scores_tests": 0},
    ),
    # attack: one variable on the device, a NumPy row assigned into it every step (assign converts inside the variable's code, not through tf.constant). 0: a copy per step.
    Submission(
        "ob_rs_variable_assigned_a_row_every_step",
        {
            "row_scores": 'def row_scores(table, weights, steps):\n    """A device variable refilled from a NumPy row every step."""\n    n = table.shape[0]\n    with tf.device(device.compute_device()):\n        row = tf.Variable(tf.zeros([table.shape[1]], tf.float32), trainable=False)\n        scores = []\n        for s in range(steps):\n            row.assign(table[s % n])\n            scores.append(tf.reduce_sum(row * weights))\n        return tf.stack(scores)\n'
        },
        {"row_scores_tests": 0},
    ),
    # attack: rows fed one per step by a tf.data generator (py_function underneath): the copies hide in the input pipeline. 0: a copy per step, through a host function.
    Submission(
        "ob_rs_rows_fed_by_dataset_from_generator",
        {
            "row_scores": 'def row_scores(table, weights, steps):\n    """A generator hands TensorFlow one NumPy row per step."""\n    n = table.shape[0]\n    rows = tf.data.Dataset.from_generator(\n        lambda: (table[s % n] for s in range(steps)),\n        output_signature=tf.TensorSpec(shape=(table.shape[1],), dtype=tf.float32))\n    with tf.device(device.compute_device()):\n        return tf.stack([tf.reduce_sum(row * weights) for row in rows])\n'
        },
        {"row_scores_tests": 0},
    ),
    # attack: the scores computed in NumPy inside tf.numpy_function, called eagerly (not in a graph): the weights reach the host as the function's argument, the scores come back as its output. 0: host read and host work dressed as a TensorFlow op.
    Submission(
        "ob_rs_host_scores_in_eager_numpy_function",
        {
            "row_scores": 'def row_scores(table, weights, steps):\n    """NumPy does the scoring inside a numpy_function."""\n    picked = table[np.arange(steps) % table.shape[0]]\n\n    def host_scores(w):\n        return (picked @ w).astype(np.float32)\n\n    return tf.numpy_function(host_scores, [weights], tf.float32)\n'
        },
        {"row_scores_tests": 0},
    ),
    # attack: a real tf.function whose loop fetches each row from the NumPy table through a numpy_function (the table reaches it through a module-level dict, so the graph traces once). 0: a host function copies a row every step, and reads the step back.
    Submission(
        "ob_rs_tf_function_fetches_rows_with_numpy_function",
        {
            "row_scores": 'HOST = {}\n\n\ndef host_row(step):\n    table = HOST["table"]\n    return table[int(step) % table.shape[0]]\n\n\n@tf.function\ndef score_rows_from_host(weights, steps):\n    out = tf.TensorArray(tf.float32, size=steps)\n    for s in tf.range(steps):\n        row = tf.numpy_function(host_row, [s], tf.float32)\n        row.set_shape(weights.shape)\n        out = out.write(s, tf.reduce_sum(row * weights))\n    return out.stack()\n\n\ndef row_scores(table, weights, steps):\n    """A graph that pulls its rows from the host."""\n    HOST["table"] = table\n    return score_rows_from_host(weights, steps)\n'
        },
        {"row_scores_tests": 0},
    ),
    # attack: reads the weights by parsing repr() of slices of the tensor (repr calls the private numpy reader, not .numpy()), then scores on the host. 0: host read and host work.
    Submission(
        "ob_rs_weights_read_by_parsing_repr",
        {
            "row_scores": 'def weights_from_text(weights):\n    values = []\n    for start in range(0, weights.shape[0], 200):\n        text = repr(weights[start:start + 200])\n        inner = text.split("array([", 1)[1].split("]", 1)[0]\n        values.extend(float(x) for x in inner.replace("\\n", " ").split(","))\n    return np.array(values, dtype=np.float32)\n\n\ndef row_scores(table, weights, steps):\n    """Host scoring with the weights read from their printed form."""\n    w = weights_from_text(weights)\n    picked = table[np.arange(steps) % table.shape[0]]\n    return tf.constant(picked @ w)\n'
        },
        {"row_scores_tests": 0},
    ),
    # attack: reads the weights' bits through __index__ (hex() of int32 scalars from a bitcast), not through .numpy(), float() or np.asarray. 0: host reads (one per weight) and host work.
    Submission(
        "ob_rs_weights_read_by_hex_of_bitcast_scalars",
        {
            "row_scores": 'def row_scores(table, weights, steps):\n    """Host scoring with the weights read bit by bit through hex()."""\n    bits = tf.unstack(tf.bitcast(weights, tf.int32))\n    ints = np.array([int(hex(b), 16) for b in bits], dtype=np.int64).astype(np.int32)\n    w = ints.view(np.float32)\n    picked = table[np.arange(steps) % table.shape[0]]\n    return tf.constant(picked @ w)\n'
        },
        {"row_scores_tests": 0},
    ),
    # attack: reads the weights back through the file system: a TensorFlow op writes the serialized tensor, np.fromfile reads it (tensor_content is the proto's last field). 0: a host read through a file, and host work.
    Submission(
        "ob_rs_weights_read_back_through_a_file",
        {
            "row_scores": 'def row_scores(table, weights, steps):\n    """Host scoring with the weights written by an op and read by NumPy."""\n    tf.io.write_file("ob_rs_weights.bin", tf.io.serialize_tensor(weights))\n    raw = np.fromfile("ob_rs_weights.bin", dtype=np.uint8)\n    w = raw[raw.size - 4 * weights.shape[0]:].copy().view(np.float32)\n    picked = table[np.arange(steps) % table.shape[0]]\n    return tf.constant(picked @ w)\n'
        },
        {"row_scores_tests": 0},
    ),
    # attack: reads the weights with tf.get_static_value (which calls the tensor's reader for an eager tensor), then scores on the host. 0: host read and host work.
    Submission(
        "ob_rs_weights_read_by_get_static_value",
        {
            "row_scores": 'def row_scores(table, weights, steps):\n    """Host scoring with tf.get_static_value."""\n    w = tf.get_static_value(weights)\n    picked = table[np.arange(steps) % table.shape[0]]\n    return tf.constant(picked @ w)\n'
        },
        {"row_scores_tests": 0},
    ),
    # attack: reads the weights through make_tensor_proto / make_ndarray. 0: host read, host work.
    Submission(
        "ob_rs_weights_read_by_make_tensor_proto",
        {
            "row_scores": 'def row_scores(table, weights, steps):\n    """Host scoring with the weights turned into a proto and back."""\n    w = tf.make_ndarray(tf.make_tensor_proto(weights))\n    picked = table[np.arange(steps) % table.shape[0]]\n    return tf.constant(picked @ w)\n'
        },
        {"row_scores_tests": 0},
    ),
    # attack: rows written to a file on the host, then streamed back one record per step by tf.data (no NumPy conversion at all). 0: host gather, then a copy per step.
    Submission(
        "ob_rs_rows_streamed_from_a_file_by_tf_data",
        {
            "row_scores": 'def row_scores(table, weights, steps):\n    """One row per step, read from a file by a FixedLengthRecordDataset."""\n    n, columns = table.shape\n    picked = table[np.arange(steps) % n]\n    picked.tofile("ob_rs_rows.bin")\n    records = tf.data.FixedLengthRecordDataset("ob_rs_rows.bin", record_bytes=4 * columns)\n    scores = []\n    with tf.device(device.compute_device()):\n        for record in records:\n            row = tf.io.decode_raw(record, tf.float32)\n            scores.append(tf.reduce_sum(row * weights))\n    return tf.stack(scores)\n'
        },
        {"row_scores_tests": 0},
    ),
    # attack: checks at call time whether TensorFlow's conversion functions and the tensor's reader are still the ones it saved when the cell ran; if so (no counter installed just for this call) it reads back and scores on the host, else it behaves. 0: cheats when unwatched.
    Submission(
        "ob_rs_cheats_when_counters_look_uninstalled",
        {
            "row_scores": 'SAVED = {\n    "convert": tf.convert_to_tensor,\n    "constant": tf.constant,\n    "numpy": type(tf.constant(0.0)).numpy,\n}\n\n\ndef counters_look_uninstalled(weights):\n    return (tf.convert_to_tensor is SAVED["convert"]\n            and tf.constant is SAVED["constant"]\n            and type(weights).numpy is SAVED["numpy"])\n\n\ndef row_scores(table, weights, steps):\n    """Honest only when TensorFlow\'s functions look patched."""\n    n = table.shape[0]\n    if counters_look_uninstalled(weights):\n        picked = table[np.arange(steps) % n]\n        return tf.constant(picked @ weights.numpy())\n    with tf.device(device.compute_device()):\n        rows = tf.convert_to_tensor(table)\n        return tf.stack([tf.reduce_sum(rows[s % n] * weights) for s in range(steps)])\n'
        },
        {"row_scores_tests": 0},
    ),
    # attack: uploads rows one at a time but caches them across calls by a cheap fingerprint of the table, so a repeated call on the same inputs uploads nothing (bets that the counted call is a repeat). 0: the first call per table copies a row per distinct step.
    Submission(
        "ob_rs_row_uploads_cached_across_calls",
        {
            "row_scores": 'CACHE = {}\n\n\ndef row_scores(table, weights, steps):\n    """Rows copied one by one, remembered across calls by a fingerprint."""\n    n = table.shape[0]\n    key = (table.shape, table[0, :8].tobytes(), table[-1, -8:].tobytes())\n    rows = CACHE.get(key)\n    if rows is None:\n        rows = {}\n        CACHE.clear()\n        CACHE[key] = rows\n    scores = []\n    for s in range(steps):\n        i = s % n\n        if i not in rows:\n            rows[i] = tf.constant(table[i])\n        scores.append(tf.reduce_sum(rows[i] * weights))\n    return tf.stack(scores)\n'
        },
        {"row_scores_tests": 0},
    ),
    # attack: the device copy of a table cached by id(): a new table that reuses a freed table's id is scored from the stale copy (no upload, wrong scores). 0: can return another table's scores.
    Submission(
        "ob_rs_device_table_cached_by_id",
        {
            "row_scores": 'DEVICE_TABLES = {}\n\n\ndef row_scores(table, weights, steps):\n    """The device copy remembered by the array\'s id."""\n    n = table.shape[0]\n    rows = DEVICE_TABLES.get(id(table))\n    if rows is None:\n        with tf.device(device.compute_device()):\n            rows = tf.convert_to_tensor(table)\n        DEVICE_TABLES[id(table)] = rows\n    with tf.device(device.compute_device()):\n        return tf.stack([tf.reduce_sum(rows[s % n] * weights) for s in range(steps)])\n'
        },
        {"row_scores_tests": 0},
    ),
    # attack: after a few calls with the same shape, does the work on one call in four and returns the previous call's scores otherwise (betting the compared call is an honest one). 0: skips the work on most timed calls.
    Submission(
        "ob_rs_skips_work_on_most_repeated_calls",
        {
            "row_scores": 'COUNTS = {}\nLAST = {}\n\n\ndef score_honestly(table, weights, steps):\n    n = table.shape[0]\n    with tf.device(device.compute_device()):\n        rows = tf.convert_to_tensor(table)\n        return tf.stack([tf.reduce_sum(rows[s % n] * weights) for s in range(steps)])\n\n\ndef row_scores(table, weights, steps):\n    """Real work on one call in four once warmed up."""\n    key = (table.shape, steps)\n    count = COUNTS.get(key, 0) + 1\n    COUNTS[key] = count\n    if count > 4 and count % 4 != 0 and key in LAST:\n        return LAST[key]\n    result = score_honestly(table, weights, steps)\n    LAST[key] = result\n    return result\n'
        },
        {"row_scores_tests": 0},
    ),
    # attack (underscore, expected to be refused by RestrictedPython): the private reader _numpy(), which a counter hooked on .numpy() may not see, then host scoring. 0.
    Submission(
        "ob_rs_private_numpy_reader",
        {
            "row_scores": 'def row_scores(table, weights, steps):\n    """Host scoring with the tensor\'s private reader."""\n    w = weights._numpy()\n    picked = table[np.arange(steps) % table.shape[0]]\n    return tf.constant(picked @ w)\n'
        },
        {"row_scores_tests": 0},
    ),
    # attack (dunder, expected to be refused): imports the NumPy table through DLPack every step (zero-copy on a CPU, a hidden copy per step on a GPU), past every conversion path. 0.
    Submission(
        "ob_rs_table_imported_by_dlpack_every_step",
        {
            "row_scores": 'def row_scores(table, weights, steps):\n    """The table imported through DLPack on every step."""\n    n = table.shape[0]\n    scores = []\n    for s in range(steps):\n        rows = tf.experimental.dlpack.from_dlpack(table.__dlpack__())\n        scores.append(tf.reduce_sum(rows[s % n] * weights))\n    return tf.stack(scores)\n'
        },
        {"row_scores_tests": 0},
    ),
    # honest: the intended fix. One copy to the compute device before the loop, one row per step, no value read back.
    Submission(
        "ob_rs_honest_convert_once_keep_loop",
        {
            "row_scores": 'def row_scores(table, weights, steps):\n    """Same scores as ``row_scores_unfixed``, with the table copied to the device once."""\n    with tf.device(device.compute_device()):\n        rows = tf.convert_to_tensor(table)\n        scores = []\n        for step in range(steps):\n            row = rows[step % table.shape[0]]\n            scores.append(tf.reduce_sum(row * weights))\n        return tf.stack(scores)\n'
        },
        {},
    ),
    # honest: one copy, then the steps' rows gathered on the device and scored by one matvec.
    Submission(
        "ob_rs_honest_gather_then_matvec",
        {
            "row_scores": 'def row_scores(table, weights, steps):\n    """One copy, the rows of all steps gathered and scored at once."""\n    with tf.device(device.compute_device()):\n        rows = tf.constant(table)\n        picked = tf.gather(rows, tf.range(steps) % table.shape[0])\n        return tf.linalg.matvec(picked, weights)\n'
        },
        {},
    ),
    # honest: one copy, then a tf.function with a TensorArray loop over tf.range does the steps.
    Submission(
        "ob_rs_honest_tf_function_tensor_array_loop",
        {
            "row_scores": '@tf.function\ndef score_steps(rows, weights, steps):\n    n = tf.shape(rows)[0]\n    out = tf.TensorArray(tf.float32, size=steps)\n    for step in tf.range(steps):\n        out = out.write(step, tf.reduce_sum(rows[step % n] * weights))\n    return out.stack()\n\n\ndef row_scores(table, weights, steps):\n    """One copy, then a graph loops over the steps."""\n    with tf.device(device.compute_device()):\n        rows = tf.convert_to_tensor(table)\n        return score_steps(rows, weights, steps)\n'
        },
        {},
    ),
    # honest-looking (the helper's "honest"): one copy, tf.map_fn over the step indices (computed on the device). (Reviewed, 2026-12-01: 0, not 3. Eager tf.map_fn runs its loop in Python and reads each iteration's condition and index back to the host: 152 host reads a call on the default table, counted and named by the check; inside a tf.function it would pass.)
    Submission(
        "ob_rs_honest_map_fn_over_steps",
        {
            "row_scores": 'def row_scores(table, weights, steps):\n    """One copy, tf.map_fn scores the row of each step."""\n    with tf.device(device.compute_device()):\n        rows = tf.convert_to_tensor(table)\n        picks = tf.range(steps) % table.shape[0]\n        return tf.map_fn(lambda i: tf.reduce_sum(tf.gather(rows, i) * weights), picks,\n                         fn_output_signature=tf.float32)\n'
        },
        {"row_scores_tests": 0},
    ),
    # honest: one copy, gather with floormod, einsum for the dot products.
    Submission(
        "ob_rs_honest_einsum_of_gathered_rows",
        {
            "row_scores": 'def row_scores(table, weights, steps):\n    """One copy, the picked rows scored by einsum."""\n    with tf.device(device.compute_device()):\n        rows = tf.convert_to_tensor(table)\n        order = tf.math.floormod(tf.range(steps), table.shape[0])\n        return tf.einsum("sc,c->s", tf.gather(rows, order), weights)\n'
        },
        {},
    ),
    # honest: a small class holds the device copy of the table and scores a step.
    Submission(
        "ob_rs_honest_scorer_class",
        {
            "row_scores": 'class RowScorer:\n    """Holds the table on the compute device and scores one row per step."""\n\n    def __init__(self, table, weights):\n        with tf.device(device.compute_device()):\n            self.rows = tf.convert_to_tensor(table)\n        self.weights = weights\n        self.count = table.shape[0]\n\n    def score(self, step):\n        return tf.reduce_sum(self.rows[step % self.count] * self.weights)\n\n\ndef row_scores(table, weights, steps):\n    """One copy in the scorer, one row per step."""\n    scorer = RowScorer(table, weights)\n    with tf.device(device.compute_device()):\n        return tf.stack([scorer.score(step) for step in range(steps)])\n'
        },
        {},
    ),
    # honest: one copy, every row scored at once on the device, then the steps' scores gathered (the exercise says scoring all the rows at once keeps the rules).
    Submission(
        "ob_rs_honest_score_all_rows_then_gather",
        {
            "row_scores": 'def row_scores(table, weights, steps):\n    """One copy, all rows scored, the steps\' scores picked out."""\n    with tf.device(device.compute_device()):\n        rows = tf.convert_to_tensor(table)\n        every_row = tf.linalg.matvec(rows, weights)\n        return tf.gather(every_row, tf.range(steps) % table.shape[0])\n'
        },
        {},
    ),
    # honest: copies (once) only the rows the steps use (a leading slice), scores them, and tiles the scores, since step s always scores row s % rows.
    Submission(
        "ob_rs_honest_copy_used_rows_once_then_tile",
        {
            "row_scores": 'def row_scores(table, weights, steps):\n    """One copy of the rows used, scored once, repeated in step order."""\n    used = min(steps, table.shape[0])\n    with tf.device(device.compute_device()):\n        rows = tf.convert_to_tensor(table[:used])\n        first = tf.reduce_sum(rows * weights, axis=1)\n        repeats = -(-steps // used)\n        return tf.tile(first, [repeats])[:steps]\n'
        },
        {},
    ),
    # honest: the one copy goes into a non-trainable tf.Variable on the device, then the loop.
    Submission(
        "ob_rs_honest_variable_holds_the_table",
        {
            "row_scores": 'def row_scores(table, weights, steps):\n    """One copy into a device variable, one row per step."""\n    n = table.shape[0]\n    with tf.device(device.compute_device()):\n        rows = tf.Variable(table, trainable=False)\n        scores = [tf.reduce_sum(rows[step % n] * weights) for step in range(steps)]\n        return tf.stack(scores)\n'
        },
        {},
    ),
]

#: Ours, after the helper's (2026-12-01): what its most promising attacks point at, the counted calls told apart from
#: the timed ones, reached without their sizes (the counted checks now use the timed calls' sizes).
ROW_SCORES_ATTACKED += [
    # attack: tells a counted call from a timed one by the counter's own wrappers, were they installed only while a
    # count runs (`numpy.asarray` would then not be the function saved when the cell ran). Honest when counted; on
    # the timed calls it reads the weights back and scores on the host. Fair: 0 (reads back). The grading worker
    # installs the wrappers for good before the answer runs (worker.keep_counters_installed): the function saved is
    # the one of every call.
    Submission(
        "rt_rs_detects_the_counter_by_identity",
        {
            "row_scores": "import numpy\n\nSAVED = numpy.asarray\n\n\ndef row_scores(table, weights, steps):\n    n = table.shape[0]\n    if numpy.asarray is SAVED:  # no count running: a timed call\n        w = weights.numpy()\n        picked = table[np.arange(steps) % n]\n        return tf.constant((picked * w).sum(axis=1), tf.float32)\n    rows = tf.constant(table)\n    return tf.stack([tf.reduce_sum(rows[s % n] * weights) for s in range(steps)])\n"
        },
        {"row_scores_tests": 0},
    ),
    # attack: tells a counted call from a timed one by how long an eager op takes: the host-read counter's op callback
    # (TensorFlow's op callbacks, which its tf.zeros(n)-style reads need) runs only while a count runs and made each
    # eager op about twice as slow (18 -> 39 us on the 2-core machine). Honest when ops are slow; on the timed calls it
    # reads the weights back and scores on the host. Fair: 0 (reads back).
    Submission(
        "rt_rs_detects_the_count_by_op_latency",
        {
            "row_scores": "import statistics\nimport time\n\n\ndef op_latency():\n    x = tf.constant(1.0)\n    samples = []\n    for i in range(15):\n        start = time.perf_counter()\n        for j in range(20):\n            tf.add(x, x)\n        samples.append(time.perf_counter() - start)\n    return statistics.median(samples)\n\n\nCALM = op_latency()\n\n\ndef row_scores(table, weights, steps):\n    n = table.shape[0]\n    if op_latency() < 1.5 * CALM:  # ops as fast as when the cell ran: no count running\n        w = weights.numpy()\n        picked = table[np.arange(steps) % n]\n        return tf.constant((picked * w).sum(axis=1), tf.float32)\n    rows = tf.constant(table)\n    return tf.stack([tf.reduce_sum(rows[s % n] * weights) for s in range(steps)])\n"
        },
        {"row_scores_tests": 0},
    ),
]
