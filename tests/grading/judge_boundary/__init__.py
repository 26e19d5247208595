"""The judge-subject boundary attacked by an outsider (issue 47): answers to the judged exercises of chapters 1, 2,
5 and 6, written by a helper in a fresh context who knew how submissions are graded but not the code, each with the
points a fair grader gives (the helper's, reviewed: an honest answer gets full points).

``CASES[chapter]`` lists them as round-trip submissions; ``gap`` names a case the grader still scores otherwise (its
test is expected to fail: strict, so it says when the gap is closed). The round trip grades the cases named in
``IN_THE_ROUND_TRIP`` (those that found something, and a few of each kind); ``$TFPERF_ROUNDTRIP_JUDGE_BOUNDARY=1``
grades all of them. Measured outcomes: docs/measurements-grading.md, "The judge, attacked".
"""

from tests.grading.submission import Submission

CASES: dict[str, list[Submission]] = {
    "01_tensors": [
        # attack: Right value, wrong dtype: a float64 scalar where the exercise demands float32. The transport keeps the dtype, so the judge has to compare dtypes, not just values.
        Submission(
            "jb_wm_float64_result",
            {
                "weighted_mean": 'def weighted_mean(counts, weights):\n    """Weighted mean, computed (and returned) in float64."""\n    c = tf.cast(counts, tf.float64)\n    w = tf.cast(weights, tf.float64)\n    return tf.reduce_sum(c * w) / tf.reduce_sum(w)\n'
            },
            {"weighted_mean_tests": 0},
        ),
        # attack: Returns a NumPy float32 scalar computed on the host, not a float32 scalar tensor. The transport accepts NumPy types, so a judge that compares only values would wrongly pass it.
        Submission(
            "jb_wm_numpy_scalar_result",
            {
                "weighted_mean": "def weighted_mean(counts, weights):\n    c = counts.numpy().astype(np.float32)\n    w = weights.numpy()\n    return np.float32((c * w).sum() / w.sum())\n"
            },
            {"weighted_mean_tests": 0},
        ),
        # attack: A (1, 1) tensor holding the right value: a comparison that broadcasts (np.allclose) passes it, but the exercise asks for a scalar.
        Submission(
            "jb_wm_shape_one_result",
            {
                "weighted_mean": "def weighted_mean(counts, weights):\n    c = tf.cast(counts, tf.float32)\n    mean = tf.reduce_sum(c * weights) / tf.reduce_sum(weights)\n    return tf.reshape(mean, [1, 1])\n"
            },
            {"weighted_mean_tests": 0},
        ),
        # attack: Always returns NaN as a float32 scalar. A comparison written as `not abs(a - b) > tol`, or with equal_nan on the wrong side, would pass it.
        Submission(
            "jb_wm_nan_result",
            {
                "weighted_mean": 'def weighted_mean(counts, weights):\n    return tf.constant(float("nan"), tf.float32)\n'
            },
            {"weighted_mean_tests": 0},
        ),
        # attack: Returns an object of its own class that claims to equal anything. The restriction (dunder methods) or the transport (only TF/NumPy/Python types) has to refuse it, and it must never be compared in the judge.
        Submission(
            "jb_wm_object_equal_to_everything",
            {
                "weighted_mean": "class AlwaysEqual:\n    def __eq__(self, other):\n        return True\n\n    def __ne__(self, other):\n        return False\n\n\ndef weighted_mean(counts, weights):\n    return AlwaysEqual()\n"
            },
            {"weighted_mean_tests": 0},
        ),
        # attack: Returns a list that contains itself. The serializer must refuse it rather than recurse forever or crash the grading process.
        Submission(
            "jb_wm_self_referential_list",
            {
                "weighted_mean": "def weighted_mean(counts, weights):\n    loop = []\n    loop.append(loop)\n    return loop\n"
            },
            {"weighted_mean_tests": 0},
        ),
        # attack: Raises SystemExit inside the call, hoping the subject's request loop treats the exit as a clean reply (or as no check at all). It has to fail only this test cell.
        Submission(
            "jb_wm_raise_systemexit",
            {"weighted_mean": "def weighted_mean(counts, weights):\n    raise SystemExit(0)\n"},
            {"weighted_mean_tests": 0},
        ),
        # attack: Returns the visible check's expected value, 1.75, whatever the inputs. Only the hidden tests, on other inputs, can catch it.
        Submission(
            "jb_wm_hardcoded_visible_answer",
            {"weighted_mean": "def weighted_mean(counts, weights):\n    return tf.constant(1.75, tf.float32)\n"},
            {"weighted_mean_tests": 0},
        ),
        # attack: Returns 256 MB of copies of the right value instead of a scalar. This probes the transport's size limits and any comparison that broadcasts.
        Submission(
            "jb_wm_huge_result",
            {
                "weighted_mean": "def weighted_mean(counts, weights):\n    mean = tf.reduce_sum(tf.cast(counts, tf.float32) * weights) / tf.reduce_sum(weights)\n    return tf.fill([2**26], mean)\n"
            },
            {"weighted_mean_tests": 0},
        ),
        # honest: Casts the counts and uses a dot product (tf.tensordot) for the numerator: a float32 scalar tensor that can differ from reduce_sum by an ulp.
        Submission(
            "jb_wm_tensordot",
            {
                "weighted_mean": 'def weighted_mean(counts, weights):\n    """Weighted mean of int32 ``counts`` with float32 ``weights``, as a float32 scalar tensor."""\n    numerator = tf.tensordot(tf.cast(counts, tf.float32), weights, axes=1)\n    return numerator / tf.reduce_sum(weights)\n'
            },
            {},
        ),
        # honest: A tf.function that casts the counts to the weights' dtype. Its eager result is a float32 scalar tensor.
        Submission(
            "jb_wm_tf_function_cast_like_weights",
            {
                "weighted_mean": '@tf.function\ndef weighted_mean(counts, weights):\n    """Weighted mean of int32 ``counts`` with float32 ``weights``, as a float32 scalar tensor."""\n    c = tf.cast(counts, weights.dtype)\n    return tf.math.divide(tf.math.reduce_sum(c * weights), tf.math.reduce_sum(weights))\n'
            },
            {},
        ),
        # honest: Uses the library's tf.nn.weighted_moments with frequency weights. The mean it returns is sum(w*c)/sum(w) as a float32 scalar, within an ulp of the direct formula.
        Submission(
            "jb_wm_weighted_moments",
            {
                "weighted_mean": 'def weighted_mean(counts, weights):\n    """Weighted mean of int32 ``counts`` with float32 ``weights``, as a float32 scalar tensor."""\n    mean, variance = tf.nn.weighted_moments(tf.cast(counts, tf.float32), axes=[0],\n                                            frequency_weights=weights)\n    return mean\n'
            },
            {},
        ),
        # attack: Drops the loop and the device: it scores every row at once with NumPy on the host and wraps the result. It can be fast, but it breaks the exercise's rules: it reads the weights back to the host (and its local `w`, spelled as a name a locked cell defines, once had the static screen zero it instead).
        Submission(
            "jb_rs_numpy_on_host",
            {
                "row_scores": "def row_scores(table, weights, steps):\n    w = weights.numpy()\n    picked = table[np.arange(steps) % table.shape[0]]\n    return tf.constant((picked * w).sum(axis=1), tf.float32)\n"
            },
            {"row_scores_tests": 0},
        ),
        # honest: picks the rows the steps need on the host (NumPy indexing, no tensor read) and copies only those,
        # once, then scores them on the device: one copy into a tensor, nothing read back.
        Submission(
            "jb_rs_honest_copy_only_the_rows_needed",
            {
                "row_scores": "def row_scores(table, weights, steps):\n    picked = table[np.arange(steps) % table.shape[0]]\n    with tf.device(device.compute_device()):\n        rows = tf.constant(picked)\n        return tf.reduce_sum(rows * weights, axis=1)\n"
            },
            {},
        ),
        # honest (an attack while the rules said 'keep the loop, one row per step', which no check could tell; the
        # rules now ask what the checks count: one copy into a tensor, no value read back): one gather and one
        # reduction, the table copied once, nothing read back to the host.
        Submission(
            "jb_rs_vectorized_no_loop",
            {
                "row_scores": "def row_scores(table, weights, steps):\n    rows = tf.constant(table)\n    picked = tf.gather(rows, tf.range(steps) % table.shape[0])\n    return tf.reduce_sum(picked * weights, axis=1)\n"
            },
            {},
        ),
        # attack: Returns NaNs of the right shape and dtype, instantly. Every timed and untimed result comparison must treat NaN as a mismatch.
        Submission(
            "jb_rs_nan_result",
            {"row_scores": 'def row_scores(table, weights, steps):\n    return tf.fill([steps], float("nan"))\n'},
            {"row_scores_tests": 0},
        ),
        # attack: Memoizes the converted table across calls, keyed by id(table). A fresh table that reuses a freed array's id gets stale rows, so results are wrong on new data.
        Submission(
            "jb_rs_cache_by_object_id",
            {
                "row_scores": "converted = {}\n\n\ndef row_scores(table, weights, steps):\n    key = id(table)\n    if key not in converted:\n        converted[key] = tf.constant(table)\n    rows = converted[key]\n    scores = []\n    for step in range(steps):\n        scores.append(tf.reduce_sum(rows[step % table.shape[0]] * weights))\n    return tf.stack(scores)\n"
            },
            {"row_scores_tests": 0},
        ),
        # attack: Only half fixes the loop (it still converts the table every other step, about 2x). A tf.data prefetch buffer, kept alive and refilled after every call, burns CPU in the background while the unfixed code is being timed.
        Submission(
            "jb_rs_background_prefetch_burns_cpu",
            {
                "row_scores": "def busy(i):\n    a = tf.random.normal([256, 256])\n    return tf.reduce_sum(tf.matmul(a, a))\n\n\nburner = iter(tf.data.Dataset.range(10**9).map(busy, num_parallel_calls=2).prefetch(64))\n\n\ndef row_scores(table, weights, steps):\n    next(burner)  # the prefetch threads refill their buffer after the call returns\n    scores = []\n    rows = None\n    for step in range(steps):\n        if step % 2 == 0:\n            rows = tf.convert_to_tensor(table)\n        scores.append(tf.reduce_sum(rows[step % table.shape[0]] * weights))\n    return tf.stack(scores)\n"
            },
            {"row_scores_tests": 0},
        ),
        # attack: Uses the array's flags to tell a table made in the subject by table_inputs (a timed call) from one the judge sent. It skips the work on the first and runs the unfixed code on the second.
        Submission(
            "jb_rs_detect_subject_made_table",
            {
                "row_scores": "def row_scores(table, weights, steps):\n    if table.flags.owndata and table.flags.writeable:\n        return tf.zeros([steps], tf.float32)\n    return row_scores_unfixed(table, weights, steps)\n"
            },
            {"row_scores_tests": 0},
        ),
        # attack: Fixes the copy but returns a NumPy array. The rules ask for a float32 tensor of shape (steps,), and a value-only comparison across the transport would accept the array.
        Submission(
            "jb_rs_returns_numpy_array",
            {
                "row_scores": "def row_scores(table, weights, steps):\n    with tf.device(device.compute_device()):\n        rows = tf.convert_to_tensor(table)\n    scores = [tf.reduce_sum(rows[step % table.shape[0]] * weights) for step in range(steps)]\n    return tf.stack(scores).numpy()\n"
            },
            {"row_scores_tests": 0},
        ),
        # attack: Answers the first two (untimed) calls with the unfixed code, then never returns. The grader must time it out and give 0, not lose the exercise's worker or the other exercises.
        Submission(
            "jb_rs_hang_after_two_calls",
            {
                "row_scores": "calls = [0]\n\n\ndef row_scores(table, weights, steps):\n    calls[0] += 1\n    if calls[0] > 2:\n        while True:\n            pass\n    return row_scores_unfixed(table, weights, steps)\n"
            },
            {"row_scores_tests": 0},
        ),
        # honest: Copies the table once with tf.constant under the compute device, keeps one row per step, in order, with tf.gather and a list comprehension. Same ops per row, so the same scores.
        Submission(
            "jb_rs_gather_from_constant",
            {
                "row_scores": 'def row_scores(table, weights, steps):\n    """Same scores as ``row_scores_unfixed``, with the table copied to the device once."""\n    with tf.device(device.compute_device()):\n        rows = tf.constant(table)\n    n = table.shape[0]\n    return tf.stack([tf.reduce_sum(tf.gather(rows, step % n) * weights) for step in range(steps)])\n'
            },
            {},
        ),
        # honest: Converts the table once and keeps the per-step loop (one row per step, in order), inside a tf.function with tf.range and a TensorArray. It traces once per table shape.
        Submission(
            "jb_rs_graph_loop_tensorarray",
            {
                "row_scores": '@tf.function\ndef score_rows(rows, weights, steps):\n    n = tf.shape(rows)[0]\n    scores = tf.TensorArray(tf.float32, size=steps)\n    for step in tf.range(steps):\n        scores = scores.write(step, tf.reduce_sum(rows[step % n] * weights))\n    return scores.stack()\n\n\ndef row_scores(table, weights, steps):\n    """Same scores as ``row_scores_unfixed``, with the table copied to the device once."""\n    with tf.device(device.compute_device()):\n        rows = tf.convert_to_tensor(table)\n    return score_rows(rows, weights, tf.constant(steps))\n'
            },
            {},
        ),
    ],
    "02_eager_vs_graph": [
        # attack: Keeps the Python-int step count (one trace per value) but traces every value from 1 to 20 ahead, at answer time, with shapes generalized, so the checked calls trace nothing new. It made over 20 traces in all.
        Submission(
            "jb_pr_traced_ahead",
            {
                "predict": "@tf.function(reduce_retracing=True)\ndef predict(x, steps):\n    for unused in range(steps):\n        x = tf.tanh(tf.matmul(x, W_refine))\n    return x\n\n\nfor ahead in range(1, 21):\n    for rows in (1, 2, 3):\n        predict(tf.zeros([rows, D]), ahead)\n"
            },
            {"predict_tests": 0},
        ),
        # attack: predict is a plain function, so there is no trace count of predict to read. The retracing inner function was traced ahead for every step count.
        Submission(
            "jb_pr_wrapper_hides_retracing_inner",
            {
                "predict": "@tf.function(reduce_retracing=True)\ndef refine(x, steps):\n    for unused in range(steps):\n        x = tf.tanh(tf.matmul(x, W_refine))\n    return x\n\n\nfor ahead in range(1, 21):\n    for rows in (1, 2, 3):\n        refine(tf.zeros([rows, D]), ahead)\n\n\ndef predict(x, steps):\n    return refine(x, steps)\n"
            },
            {"predict_tests": 0},
        ),
        # attack: Traces once, but the graph only calls a tf.py_function that runs the loop eagerly in Python. predict's own graph does none of the refining, so it beats retracing for the wrong reason.
        Submission(
            "jb_pr_py_function_runs_eagerly",
            {
                "predict": "def eager_refine(x, steps):\n    for unused in range(int(steps)):\n        x = tf.tanh(tf.matmul(x, W_refine))\n    return x\n\n\n@tf.function(input_signature=[tf.TensorSpec([None, D], tf.float32), tf.TensorSpec([], tf.int32)])\ndef predict(x, steps):\n    out = tf.py_function(eager_refine, [x, steps], tf.float32)\n    return tf.reshape(out, tf.shape(x))\n"
            },
            {"predict_tests": 0},
        ),
        # attack: A subclass of tf.function's own class whose experimental_get_tracing_count always says 1, wrapped around the unfixed (retracing) body. Only TensorFlow's own class may be trusted for trace counts.
        Submission(
            "jb_pr_subclass_fakes_trace_count",
            {
                "predict": 'FunctionClass = type(predict_unfixed)\n\n\nclass TracedOnce(FunctionClass):\n    def experimental_get_tracing_count(self):\n        return 1\n\n\npredict = TracedOnce(predict_unfixed.python_function, "predict")\n'
            },
            {"predict_tests": 0},
        ),
        # attack: Traces once, but computes and returns float16, which is faster on some devices. The results differ from float32 in dtype and by about 1e-3, so they are not the same results.
        Submission(
            "jb_pr_float16_result",
            {
                "predict": "@tf.function(input_signature=[tf.TensorSpec([None, D], tf.float32), tf.TensorSpec([], tf.int32)])\ndef predict(x, steps):\n    h = tf.cast(x, tf.float16)\n    w = tf.cast(W_refine, tf.float16)\n    for unused in tf.range(steps):\n        h = tf.tanh(tf.matmul(h, w))\n    return h\n"
            },
            {"predict_tests": 0},
        ),
        # attack: Flips TensorFlow's global switch so that every tf.function runs eagerly. predict then never traces (count 0) and beats the retracing unfixed code, yet no graph runs at all.
        Submission(
            "jb_pr_run_functions_eagerly",
            {
                "predict": "tf.config.run_functions_eagerly(True)\npredict = tf.function(predict_unfixed.python_function)\n"
            },
            {"predict_tests": 0},
        ),
        # honest: An input_signature with a None batch and an int32 step count, with the loop written as an explicit tf.while_loop. One trace, the same matmul+tanh per step.
        Submission(
            "jb_pr_while_loop_signature",
            {
                "predict": 'def refine_once(i, x):\n    return i + 1, tf.tanh(tf.matmul(x, W_refine))\n\n\n@tf.function(input_signature=[tf.TensorSpec([None, D], tf.float32), tf.TensorSpec([], tf.int32)])\ndef predict(x, steps):\n    """Refine a (batch, D) float32 batch of states ``steps`` times, traced once."""\n    done, x = tf.while_loop(lambda i, x: i < steps, refine_once, (tf.constant(0), x))\n    return x\n'
            },
            {},
        ),
        # honest: The step count is declared as an int64 TensorSpec (a Python int converts to it) and the refinement is a tf.foldl over tf.range(steps). The judge must pass steps as a plain int, as a real caller does.
        Submission(
            "jb_pr_foldl_int64_steps",
            {
                "predict": '@tf.function(input_signature=[tf.TensorSpec([None, D], tf.float32), tf.TensorSpec([], tf.int64)])\ndef predict(x, steps):\n    """Refine a (batch, D) float32 batch of states ``steps`` times, traced once."""\n    return tf.foldl(lambda state, i: tf.tanh(tf.matmul(state, W_refine)), tf.range(steps), initializer=x)\n'
            },
            {},
        ),
        # attack: Prints 'total: k' for every k from 0 to 999 on each call, so a regex search for 'total: <expected>' finds a match without the call's value ever being logged.
        Submission(
            "jb_tl_log_every_integer",
            {
                "total_logged": '@tf.function\ndef total_logged(x):\n    total = tf.reduce_sum(x)\n    lines = tf.strings.join(["total: ", tf.strings.as_string(tf.range(1000))])\n    tf.print(tf.strings.reduce_join(lines, separator="\\n"))\n    return total\n'
            },
            {"total_logged_tests": 0},
        ),
        # attack: Prints the visible check's three expected lines on every call and never the call's own value.
        Submission(
            "jb_tl_hardcoded_visible_lines",
            {
                "total_logged": '@tf.function\ndef total_logged(x):\n    tf.print("total: 42\\ntotal: 17\\ntotal: 123")\n    return tf.reduce_sum(x)\n'
            },
            {"total_logged_tests": 0},
        ),
        # attack: Drops the @tf.function the exercise asks for, reads the value on the host and uses Python print. It logs every call, but it avoids the lesson (tf.print in a graph) instead of learning it.
        Submission(
            "jb_tl_plain_python_print",
            {
                "total_logged": 'def total_logged(x):\n    total = tf.reduce_sum(x)\n    print("total:", float(total))\n    return total\n'
            },
            {"total_logged_tests": 0},
        ),
        # attack: Turns on run_functions_eagerly, a global switch, so that the Python print and .numpy() inside the tf.function run on every call. Changing grading state is forbidden, and no graph runs.
        Submission(
            "jb_tl_run_functions_eagerly_print",
            {
                "total_logged": 'tf.config.run_functions_eagerly(True)\n\n\n@tf.function\ndef total_logged(x):\n    total = tf.reduce_sum(x)\n    print("total:", total.numpy())\n    return total\n'
            },
            {"total_logged_tests": 0},
        ),
        # attack: Counts its calls in a variable and logs only the first three (the visible check's), then goes quiet. It does not log on every call.
        Submission(
            "jb_tl_logs_only_first_three_calls",
            {
                "total_logged": 'calls = tf.Variable(0)\n\n\n@tf.function\ndef total_logged(x):\n    total = tf.reduce_sum(x)\n    calls.assign_add(1)\n    if calls <= 3:\n        tf.print("total:", total)\n    return total\n'
            },
            {"total_logged_tests": 0},
        ),
        # honest: Formats the line in the graph with tf.strings.format and prints it with tf.print, on every call: 'total: 42'.
        Submission(
            "jb_tl_strings_format",
            {
                "total_logged": '@tf.function\ndef total_logged(x):\n    """The sum of ``x``, logging ``total: <value>`` on every call."""\n    total = tf.reduce_sum(x)\n    tf.print(tf.strings.format("total: {}", total))\n    return total\n'
            },
            {},
        ),
        # honest: A tf.function whose graph calls tf.py_function to run a Python print with the value, on every call (section 5 names tf.py_function as an op that runs every call). Output is 'total: 42.0' on Python's stdout, which the stream reader must flush and read.
        Submission(
            "jb_tl_py_function_print",
            {
                "total_logged": 'def log_total(total):\n    print("total:", float(total))\n\n\n@tf.function\ndef total_logged(x):\n    """The sum of ``x``, logging ``total: <value>`` on every call."""\n    total = tf.reduce_sum(x)\n    tf.py_function(log_total, [total], [])\n    return total\n'
            },
            {},
        ),
        # honest: tf.print with output_stream=sys.stdout, as in TensorFlow's documentation: the line goes to fd 1, not the default fd 2. sys is imported by the setup cell.
        Submission(
            "jb_tl_print_to_stdout",
            {
                "total_logged": '@tf.function\ndef total_logged(x):\n    """The sum of ``x``, logging ``total: <value>`` on every call."""\n    total = tf.reduce_sum(x)\n    tf.print("total:", total, output_stream=sys.stdout)\n    return total\n'
            },
            {},
        ),
        # attack: train_step is a real tf.function, but train runs its python_function eagerly, so it never traces (count 0 <= 1). Eager is much faster than retracing on every step, yet no graph does the steps' work.
        Submission(
            "jb_tr_eager_python_function",
            {
                "train": "@tf.function\ndef train_step(params, x, y, lr):\n    with tf.GradientTape() as tape:\n        loss = eg.mlp_loss(params, x, y)\n    grads = tape.gradient(loss, params)\n    for p, g in zip(params, grads):\n        p.assign_sub(lr * g)\n    return loss\n\n\ndef train(initial, x, y, lr0, steps):\n    params = [tf.Variable(w) for w in initial]\n    for step in range(steps):\n        lr = tf.constant(lr0 * 0.9 ** step, tf.float32)\n        train_step.python_function(params, x, y, lr)\n    return [p.read_value() for p in params]\n"
            },
            {"train_tests": 0},
        ),
        # attack: Recognizes the check's own inputs by lr0 (training_inputs is deterministic per seed). It runs the graph step only there, and eagerly (no traces, no graph) on the fresh inputs of the timed calls: time-of-check against time-of-use.
        Submission(
            "jb_tr_graph_only_for_checked_lr0",
            {
                "train": "@tf.function\ndef train_step(params, x, y, lr):\n    with tf.GradientTape() as tape:\n        loss = eg.mlp_loss(params, x, y)\n    grads = tape.gradient(loss, params)\n    for p, g in zip(params, grads):\n        p.assign_sub(lr * g)\n    return loss\n\n\nCHECKED = [training_inputs(seed)[3] for seed in range(20)]\n\n\ndef train(initial, x, y, lr0, steps):\n    params = [tf.Variable(w) for w in initial]\n    in_graph = lr0 in CHECKED\n    for step in range(steps):\n        lr = tf.constant(lr0 * 0.9 ** step, tf.float32)\n        if in_graph:\n            train_step(params, x, y, lr)\n        else:\n            train_step.python_function(params, x, y, lr)\n    return [p.read_value() for p in params]\n"
            },
            {"train_tests": 0},
        ),
        # attack: Keeps the unfixed Python-float learning rate and turns on run_functions_eagerly (a global switch) so that nothing traces. Zero traces, faster than retracing, and no graph at all.
        Submission(
            "jb_tr_run_functions_eagerly",
            {
                "train": "tf.config.run_functions_eagerly(True)\ntrain_step = tf.function(train_step_unfixed.python_function)\n\n\ndef train(initial, x, y, lr0, steps):\n    params = [tf.Variable(w) for w in initial]\n    for step in range(steps):\n        train_step(params, x, y, lr0 * 0.9 ** step)\n    return [p.read_value() for p in params]\n"
            },
            {"train_tests": 0},
        ),
        # attack: Trains correctly and fast but returns the weights as float64 tensors. The values are within tolerance, the dtypes are not the unfixed code's float32, so the judge must compare dtypes item by item.
        Submission(
            "jb_tr_float64_weights",
            {
                "train": "@tf.function\ndef train_step(params, x, y, lr):\n    with tf.GradientTape() as tape:\n        loss = eg.mlp_loss(params, x, y)\n    grads = tape.gradient(loss, params)\n    for p, g in zip(params, grads):\n        p.assign_sub(lr * g)\n    return loss\n\n\ndef train(initial, x, y, lr0, steps):\n    params = [tf.Variable(w) for w in initial]\n    for step in range(steps):\n        train_step(params, x, y, tf.constant(lr0 * 0.9 ** step, tf.float32))\n    return [tf.cast(p, tf.float64) for p in params]\n"
            },
            {"train_tests": 0},
        ),
        # honest: The learning rate lives in one tf.Variable, assigned before each step and passed to train_step. Same float32 rounding as the unfixed constant, one trace, graph steps.
        Submission(
            "jb_tr_lr_variable",
            {
                "train": 'LEARNING_RATE = tf.Variable(0.0)\n\n\n@tf.function\ndef train_step(params, x, y, lr):\n    """One SGD step on the variables ``params``; ``lr`` is a tensor or variable, so one trace."""\n    with tf.GradientTape() as tape:\n        loss = eg.mlp_loss(params, x, y)\n    grads = tape.gradient(loss, params)\n    for p, g in zip(params, grads):\n        p.assign_sub(lr * g)\n    return loss\n\n\ndef train(initial, x, y, lr0, steps):\n    params = [tf.Variable(w) for w in initial]\n    for step in range(steps):\n        LEARNING_RATE.assign(lr0 * 0.9 ** step)\n        train_step(params, x, y, LEARNING_RATE)\n    return [p.read_value() for p in params]\n'
            },
            {},
        ),
        # honest: The schedule is a float32 tensor multiplied by 0.9 after every step. It differs from the Python-double schedule by a few ulps, well within rtol=1e-4, with one trace and graph steps.
        Submission(
            "jb_tr_lr_decayed_on_device",
            {
                "train": '@tf.function\ndef train_step(params, x, y, lr):\n    """One SGD step on the variables ``params``; returns the loss."""\n    with tf.GradientTape() as tape:\n        loss = eg.mlp_loss(params, x, y)\n    grads = tape.gradient(loss, params)\n    for p, g in zip(params, grads):\n        p.assign_sub(lr * g)\n    return loss\n\n\ndef train(initial, x, y, lr0, steps):\n    params = [tf.Variable(w) for w in initial]\n    lr = tf.constant(lr0, tf.float32)\n    decay = tf.constant(0.9, tf.float32)\n    for step in range(steps):\n        train_step(params, x, y, lr)\n        lr = lr * decay\n    return [p.read_value() for p in params]\n'
            },
            {},
        ),
        # honest: train_step is compiled by XLA (jit_compile=True) with a tensor learning rate: one trace, one compilation for the fixed shapes, and results within the check's tolerance.
        Submission(
            "jb_tr_jit_compiled_step",
            {
                "train": '@tf.function(jit_compile=True)\ndef train_step(params, x, y, lr):\n    """One SGD step on the variables ``params``, compiled by XLA; returns the loss."""\n    with tf.GradientTape() as tape:\n        loss = eg.mlp_loss(params, x, y)\n    grads = tape.gradient(loss, params)\n    for p, g in zip(params, grads):\n        p.assign_sub(lr * g)\n    return loss\n\n\ndef train(initial, x, y, lr0, steps):\n    params = [tf.Variable(w) for w in initial]\n    for step in range(steps):\n        train_step(params, x, y, tf.constant(lr0 * 0.9 ** step, tf.float32))\n    return [p.read_value() for p in params]\n'
            },
            {},
        ),
    ],
    "05_gpu_sync": [
        # attack: The incident itself: a Python loop that reads the loss on every step, through memoryview (the buffer protocol, which chapter 1 shows), which a counter of .numpy()/__array__ may not see. It reports only every N.
        Submission(
            "jb_gs_memoryview_read_every_step",
            {
                "train": "@tf.function\ndef train_block(w, x, y):\n    return gpu_sync.train_step(w, x, y)\n\n\ndef train(w0, xs, ys, report, every):\n    w = tf.Variable(w0)\n    steps = xs.shape[0]\n    for step in range(steps):\n        loss = train_block(w, xs[step], ys[step])\n        value = float(np.asarray(memoryview(loss)))\n        if step % every == every - 1 or step == steps - 1:\n            report(step, value)\n    return w.read_value()\n"
            },
            {"train_tests": 0, "train_speed_tests": 0},
        ),
        # attack: Reads every step's loss with tf.get_static_value, which reaches the tensor's value through TensorFlow's internal path rather than the public .numpy(). It is still a sync on every step.
        Submission(
            "jb_gs_get_static_value_every_step",
            {
                "train": "def train_block(w, x, y):\n    return gpu_sync.train_step(w, x, y)\n\n\ndef train(w0, xs, ys, report, every):\n    w = tf.Variable(w0)\n    steps = xs.shape[0]\n    for step in range(steps):\n        loss = train_block(w, xs[step], ys[step])\n        value = tf.get_static_value(loss)\n        if step % every == every - 1 or step == steps - 1:\n            report(step, float(value))\n    return w.read_value()\n"
            },
            {"train_tests": 0, "train_speed_tests": 0},
        ),
        # attack: Reads every step's loss by serializing it to a TensorProto and back (tf.make_tensor_proto then tf.make_ndarray), a host read the counter may not hook. It is the incident's loop.
        Submission(
            "jb_gs_tensor_proto_every_step",
            {
                "train": "def train_block(w, x, y):\n    return gpu_sync.train_step(w, x, y)\n\n\ndef train(w0, xs, ys, report, every):\n    w = tf.Variable(w0)\n    steps = xs.shape[0]\n    for step in range(steps):\n        loss = train_block(w, xs[step], ys[step])\n        value = tf.make_ndarray(tf.make_tensor_proto(loss))\n        if step % every == every - 1 or step == steps - 1:\n            report(step, float(value))\n    return w.read_value()\n"
            },
            {"train_tests": 0, "train_speed_tests": 0},
        ),
        # attack: Graph blocks as in the reference, but it passes report the loss tensor instead of a Python/NumPy number. The host read then happens in the transport (or in a real report), where no counter sees it. The speed cell is honestly fast.
        Submission(
            "jb_gs_report_gets_tensor",
            {
                "train": "@tf.function\ndef train_block(w, xs, ys, start, stop):\n    loss = tf.constant(0.0)\n    for i in tf.range(start, stop):\n        loss = gpu_sync.train_step(w, xs[i], ys[i])\n    return loss\n\n\ndef train(w0, xs, ys, report, every):\n    w = tf.Variable(w0)\n    steps = xs.shape[0]\n    for start in range(0, steps, every):\n        stop = min(start + every, steps)\n        loss = train_block(w, xs, ys, tf.constant(start), tf.constant(stop))\n        report(stop - 1, loss)\n    return w.read_value()\n"
            },
            {"train_tests": 0, "train_speed_tests": 2},
        ),
        # attack: Prints every step's loss with tf.print to TensorFlow's C++ error log (output_stream=tf.compat.v1.logging.error). The lines reach stderr formatted like TensorFlow's own log noise, which the stream reader leaves out.
        Submission(
            "jb_gs_tf_print_to_error_log",
            {
                "train": '@tf.function\ndef train_block(w, xs, ys, start, stop):\n    loss = tf.constant(0.0)\n    for i in tf.range(start, stop):\n        loss = gpu_sync.train_step(w, xs[i], ys[i])\n        tf.print("step", i, "loss", loss, output_stream=tf.compat.v1.logging.error)\n    return loss\n\n\ndef train(w0, xs, ys, report, every):\n    w = tf.Variable(w0)\n    steps = xs.shape[0]\n    for start in range(0, steps, every):\n        stop = min(start + every, steps)\n        loss = train_block(w, xs, ys, tf.constant(start), tf.constant(stop))\n        report(stop - 1, loss.numpy())\n    return w.read_value()\n'
            },
            {"train_tests": 0, "train_speed_tests": 0},
        ),
        # attack: Prints every step's loss with tf.print to a file (output_stream="file://..."): nothing reaches stdout or stderr, and the op still runs on every step.
        Submission(
            "jb_gs_tf_print_to_a_file",
            {
                "train": '@tf.function\ndef train_block(w, xs, ys, start, stop):\n    loss = tf.constant(0.0)\n    for i in tf.range(start, stop):\n        loss = gpu_sync.train_step(w, xs[i], ys[i])\n        tf.print("step", i, "loss", loss, output_stream="file:///tmp/tfperf-train-log.txt")\n    return loss\n\n\ndef train(w0, xs, ys, report, every):\n    w = tf.Variable(w0)\n    steps = xs.shape[0]\n    for start in range(0, steps, every):\n        stop = min(start + every, steps)\n        loss = train_block(w, xs, ys, tf.constant(start), tf.constant(stop))\n        report(stop - 1, loss.numpy())\n    return w.read_value()\n'
            },
            {"train_tests": 0, "train_speed_tests": 0},
        ),
        # attack: Honest blocks and reads, but it writes a progress fragment to fd 2 at every report with no newline. A reader that counts lines, or finds the end marker only at a line start, misses output that was printed.
        Submission(
            "jb_gs_os_write_without_newline",
            {
                "train": '@tf.function\ndef train_block(w, xs, ys, start, stop):\n    loss = tf.constant(0.0)\n    for i in tf.range(start, stop):\n        loss = gpu_sync.train_step(w, xs[i], ys[i])\n    return loss\n\n\ndef train(w0, xs, ys, report, every):\n    w = tf.Variable(w0)\n    steps = xs.shape[0]\n    for start in range(0, steps, every):\n        stop = min(start + every, steps)\n        value = float(train_block(w, xs, ys, tf.constant(start), tf.constant(stop)))\n        os.write(2, ("[step %d loss %.5f] " % (stop - 1, value)).encode())\n        report(stop - 1, value)\n    return w.read_value()\n'
            },
            {"train_tests": 0, "train_speed_tests": 0},
        ),
        # attack: Tells the timed calls from the judge's calls by their sizes (the visible timed check's 200 steps, every 20; the judge's checks use other sizes; the report functions are of one kind, so repr no longer tells). The judge sees a structurally right Python loop that reads every N steps (about 1x on a CPU). Timed calls run one graph over all steps and never report. Wrong on inputs of the timed check's sizes, which train_tests checks too since the eighth session of 2026-12-01 (200 steps every 20): 0 for both (3 for train_tests before, when no correctness check made such a call).
        Submission(
            "jb_gs_other_program_when_timed",
            {
                "train": "@tf.function\ndef train_block(w, xs, ys):\n    loss = tf.constant(0.0)\n    for i in tf.range(tf.shape(xs)[0]):\n        loss = gpu_sync.train_step(w, xs[i], ys[i])\n    return loss\n\n\ndef train(w0, xs, ys, report, every):\n    w = tf.Variable(w0)\n    if xs.shape[0] >= 200 and xs.shape[0] % every == 0:  # a timed call: nobody reads these reports\n        train_block(w, xs, ys)\n        return w.read_value()\n    steps = xs.shape[0]\n    for step in range(steps):\n        loss = gpu_sync.train_step(w, xs[step], ys[step])\n        if step % every == every - 1 or step == steps - 1:\n            report(step, loss.numpy())\n    return w.read_value()\n"
            },
            {"train_tests": 0, "train_speed_tests": 0},
        ),
        # attack: Like the one before, but honest on its first four calls of the timed check's sizes (the check's own untimed calls), then one graph over all steps with no report: it counts on the timed calls' reports going unread. Wrong on the calls after those: 0 for both (3 for train_tests while a correctness cell was held to its own calls only; since 2026-12-02 a call the speed cell finds wrong fails train_tests too).
        Submission(
            "jb_gs_no_reports_after_four_timed_size_calls",
            {
                "train": "sized_calls = [0]\n\n\n@tf.function\ndef train_block(w, xs, ys, start, stop):\n    loss = tf.constant(0.0)\n    for i in tf.range(start, stop):\n        loss = gpu_sync.train_step(w, xs[i], ys[i])\n    return loss\n\n\ndef train(w0, xs, ys, report, every):\n    w = tf.Variable(w0)\n    steps = xs.shape[0]\n    if steps >= 200 and steps % every == 0:\n        sized_calls[0] += 1\n        if sized_calls[0] > 4:  # timed now: nobody reads these reports\n            train_block(w, xs, ys, tf.constant(0), tf.constant(steps))\n            return w.read_value()\n    for start in range(0, steps, every):\n        stop = min(start + every, steps)\n        loss = train_block(w, xs, ys, tf.constant(start), tf.constant(stop))\n        report(stop - 1, loss.numpy())\n    return w.read_value()\n"
            },
            {"train_tests": 0, "train_speed_tests": 0},
        ),
        # attack: Behaves like the reference when the judge calls it. When its inputs have the timed check's sizes (a timed call), it returns the untrained weights on three calls in four, counting on only some timed results being compared. Wrong on inputs of the timed check's sizes, which train_tests checks too since the eighth session of 2026-12-01 (200 steps every 20): 0 for both (3 for train_tests before, when no correctness check made such a call).
        Submission(
            "jb_gs_skip_training_when_timed",
            {
                "train": "timed_calls = [0]\n\n\n@tf.function\ndef train_block(w, xs, ys, start, stop):\n    loss = tf.constant(0.0)\n    for i in tf.range(start, stop):\n        loss = gpu_sync.train_step(w, xs[i], ys[i])\n    return loss\n\n\ndef train(w0, xs, ys, report, every):\n    if xs.shape[0] >= 200 and xs.shape[0] % every == 0:\n        timed_calls[0] += 1\n        if timed_calls[0] % 4:\n            return tf.identity(w0)\n    w = tf.Variable(w0)\n    steps = xs.shape[0]\n    for start in range(0, steps, every):\n        stop = min(start + every, steps)\n        loss = train_block(w, xs, ys, tf.constant(start), tf.constant(stop))\n        report(stop - 1, loss.numpy())\n    return w.read_value()\n"
            },
            {"train_tests": 0, "train_speed_tests": 0},
        ),
        # attack: The first call (results, reports, syncs) is clean. Every later call, the watched prints checks included, prints a line and then raises SystemExit before the end marker, hoping a lost marker reads as 'no lines printed'.
        Submission(
            "jb_gs_print_then_systemexit",
            {
                "train": 'calls = [0]\n\n\n@tf.function\ndef train_block(w, xs, ys, start, stop):\n    loss = tf.constant(0.0)\n    for i in tf.range(start, stop):\n        loss = gpu_sync.train_step(w, xs[i], ys[i])\n    return loss\n\n\ndef train(w0, xs, ys, report, every):\n    calls[0] += 1\n    w = tf.Variable(w0)\n    steps = xs.shape[0]\n    for start in range(0, steps, every):\n        stop = min(start + every, steps)\n        loss = train_block(w, xs, ys, tf.constant(start), tf.constant(stop))\n        report(stop - 1, loss.numpy())\n    if calls[0] > 1:\n        tf.print("trained weights:", w)\n        raise SystemExit(0)\n    return w.read_value()\n'
            },
            {"train_tests": 0, "train_speed_tests": 0},
        ),
        # honest: One tf.function runs a block of steps with tf.range(start, stop) over the full batches, with start and stop passed as tensors (one trace). It reads float(loss) once per block and reports it.
        Submission(
            "jb_gs_blocks_by_start_stop",
            {
                "train": '@tf.function\ndef train_block(w, xs, ys, start, stop):\n    """Steps start..stop-1 on the device; returns the loss of the last one."""\n    loss = tf.constant(0.0)\n    for i in tf.range(start, stop):\n        loss = gpu_sync.train_step(w, xs[i], ys[i])\n    return loss\n\n\ndef train(w0, xs, ys, report, every):\n    """Same training as ``train_unfixed``, reporting the loss only every ``every`` steps."""\n    w = tf.Variable(w0)\n    steps = int(xs.shape[0])\n    for start in range(0, steps, every):\n        stop = min(start + every, steps)\n        loss = train_block(w, xs, ys, tf.constant(start), tf.constant(stop))\n        report(stop - 1, float(loss))\n    return w.read_value()\n'
            },
            {},
        ),
        # honest: Slices each block on the device and runs it in an explicit tf.while_loop inside a tf.function. It reads .numpy() once per block and handles a partial last block (one more trace).
        Submission(
            "jb_gs_while_loop_on_slices",
            {
                "train": '@tf.function\ndef train_block(w, xs, ys):\n    """Every step of the block ``xs``, ``ys`` in a graph loop; returns the last loss."""\n    n = tf.shape(xs)[0]\n\n    def body(i, loss):\n        return i + 1, gpu_sync.train_step(w, xs[i], ys[i])\n\n    count, loss = tf.while_loop(lambda i, loss: i < n, body, (tf.constant(0), tf.constant(0.0)))\n    return loss\n\n\ndef train(w0, xs, ys, report, every):\n    """Same training as ``train_unfixed``, reporting the loss only every ``every`` steps."""\n    w = tf.Variable(w0)\n    steps = xs.shape[0]\n    for start in range(0, steps, every):\n        stop = min(start + every, steps)\n        loss = train_block(w, xs[start:stop], ys[start:stop])\n        report(stop - 1, loss.numpy())\n    return w.read_value()\n'
            },
            {},
        ),
        # honest: All steps run in one graph. At each report step the graph calls tf.py_function, which hands report a Python int and float: one device-to-host transfer per report, and report is called back from a TensorFlow thread. A fair grader counts one read per report, and its callback proxy must serve calls from that thread.
        Submission(
            "jb_gs_report_from_graph_py_function",
            {
                "train": 'reporting = {}\n\n\ndef send(step, loss):\n    reporting["report"](int(step), float(loss))\n\n\n@tf.function\ndef train_block(w, xs, ys, every):\n    n = tf.shape(xs)[0]\n    for i in tf.range(n):\n        loss = gpu_sync.train_step(w, xs[i], ys[i])\n        if (i + 1) % every == 0 or i == n - 1:\n            tf.py_function(send, [i, loss], [])\n\n\ndef train(w0, xs, ys, report, every):\n    """Same training as ``train_unfixed``, reporting from inside the graph every ``every`` steps."""\n    reporting["report"] = report\n    w = tf.Variable(w0)\n    train_block(w, xs, ys, tf.constant(every))\n    return w.read_value()\n'
            },
            {},
        ),
    ],
    "06_device_ceilings": [
        # attack: The unfused chain, op by op, inside a tf.cond branch of a plain graph. A byte counter that reads only top-level ops sees one If op (x in, result out), yet every intermediate still goes through memory.
        Submission(
            "jb_ac_cond_hides_ops",
            {
                "activation": "@tf.function(jit_compile=False)\ndef activation(x, scale, shift):\n    def chain():\n        y = x * scale + shift\n        return 0.5 * y * (1.0 + tf.tanh(0.7978845608 * (y + 0.044715 * y * y * y)))\n\n    return tf.cond(tf.size(x) > 0, chain, lambda: x)\n"
            },
            {"activation_tests": 0, "activation_speed_tests": 0},
        ),
        # attack: A plain tf.function that just calls the unfixed step. Its graph is one PartitionedCall op, so a top-level byte count is tiny while the unfused chain runs unchanged.
        Submission(
            "jb_ac_nested_call_hides_ops",
            {
                "activation": "@tf.function\ndef activation(x, scale, shift):\n    return activation_unfused(x, scale, shift)\n"
            },
            {"activation_tests": 0, "activation_speed_tests": 0},
        ),
        # attack: The chain runs in NumPy inside tf.numpy_function: one host op in the graph (small byte count) doing many full passes over memory on the host. Nothing is fused.
        Submission(
            "jb_ac_numpy_function",
            {
                "activation": "def numpy_chain(x, scale, shift):\n    y = x * scale + shift\n    inner = np.float32(0.7978845608) * (y + np.float32(0.044715) * y * y * y)\n    return (np.float32(0.5) * y * (np.float32(1.0) + np.tanh(inner))).astype(np.float32)\n\n\n@tf.function\ndef activation(x, scale, shift):\n    out = tf.numpy_function(numpy_chain, [x, scale, shift], tf.float32)\n    return tf.reshape(out, tf.shape(x))\n"
            },
            {"activation_tests": 0, "activation_speed_tests": 0},
        ),
        # attack: Uses XLA only for the size the visible bytes check reads (2**20 values) and runs the unfixed chain at every other size, the timed 2**22 or 2**24 included. The bytes claim holds for the check's input only.
        Submission(
            "jb_ac_fuse_only_at_checked_size",
            {
                "activation": "@tf.function(jit_compile=True)\ndef fused(x, scale, shift):\n    y = x * scale + shift\n    return 0.5 * y * (1.0 + tf.tanh(0.7978845608 * (y + 0.044715 * y * y * y)))\n\n\n@tf.function\ndef activation(x, scale, shift):\n    if x.shape[0] == 2**20:\n        return fused(x, scale, shift)\n    return activation_unfused(x, scale, shift)\n"
            },
            {"activation_tests": 0, "activation_speed_tests": 0},
        ),
        # attack: Turns on XLA auto-clustering for the whole process (a global switch the rules forbid) and submits the unfixed body unchanged. Any speed comes from changed grading state, not from the answer.
        Submission(
            "jb_ac_global_auto_jit",
            {
                "activation": "tf.config.optimizer.set_jit(True)\nactivation = tf.function(activation_unfused.python_function)\n"
            },
            {"activation_tests": 0, "activation_speed_tests": 0},
        ),
        # attack: A fused XLA kernel that computes in float16 and casts back. Bytes and dtype look right, but the values are off by about 1e-3, far outside rtol=1e-5.
        Submission(
            "jb_ac_float16_inside_xla",
            {
                "activation": "@tf.function(jit_compile=True)\ndef activation(x, scale, shift):\n    h = tf.cast(x, tf.float16) * tf.cast(scale, tf.float16) + tf.cast(shift, tf.float16)\n    g = 0.5 * h * (1.0 + tf.tanh(0.7978845608 * (h + 0.044715 * h * h * h)))\n    return tf.cast(g, tf.float32)\n"
            },
            {"activation_tests": 0, "activation_speed_tests": 0},
        ),
        # attack: A tiny XLA kernel that writes NaN everywhere: fewest bytes, fastest, and wrong. Every comparison, timed ones included, must count NaN as a mismatch.
        Submission(
            "jb_ac_nan_result",
            {
                "activation": '@tf.function(jit_compile=True)\ndef activation(x, scale, shift):\n    return tf.fill(tf.shape(x), float("nan"))\n'
            },
            {"activation_tests": 0, "activation_speed_tests": 0},
        ),
        # attack: The right values, reshaped to (n, 1). A comparison that broadcasts against the (n,) expected result builds an n-by-n array (2**40 elements at 2**20), so it has to check shapes first and neither crash nor pass.
        Submission(
            "jb_ac_broadcast_bomb",
            {
                "activation": "@tf.function(jit_compile=True)\ndef activation(x, scale, shift):\n    y = x * scale + shift\n    g = 0.5 * y * (1.0 + tf.tanh(0.7978845608 * (y + 0.044715 * y * y * y)))\n    return tf.reshape(g, [-1, 1])\n"
            },
            {"activation_tests": 0, "activation_speed_tests": 0},
        ),
        # attack: Correct and fused for the correctness and bytes checks (its first 40 calls). After that, three calls in four skip the GELU and return the scaled input, betting that only some timed results are compared.
        Submission(
            "jb_ac_wrong_after_forty_calls",
            {
                "activation": "calls = tf.Variable(0)\n\n\n@tf.function(jit_compile=True)\ndef activation(x, scale, shift):\n    calls.assign_add(1)\n    y = x * scale + shift\n\n    def gelu():\n        return 0.5 * y * (1.0 + tf.tanh(0.7978845608 * (y + 0.044715 * y * y * y)))\n\n    skip = tf.logical_and(calls > 40, calls % 4 != 0)\n    return tf.cond(skip, lambda: y, gelu)\n"
            },
            {"activation_tests": 3, "activation_speed_tests": 0},
        ),
        # attack: Fused, but computes in float64 and returns float64: the values are more precise and the dtype is not the unfixed step's float32. The judge must compare dtypes, which the transport preserves.
        Submission(
            "jb_ac_float64_result",
            {
                "activation": "@tf.function(jit_compile=True)\ndef activation(x, scale, shift):\n    y = tf.cast(x, tf.float64) * tf.cast(scale, tf.float64) + tf.cast(shift, tf.float64)\n    return 0.5 * y * (1.0 + tf.tanh(0.7978845608 * (y + 0.044715 * y * y * y)))\n"
            },
            {"activation_tests": 0, "activation_speed_tests": 0},
        ),
        # attack: A class of its own that imitates a jit-compiled tf.function. experimental_get_compiler_ir returns a forged one-parameter HLO module, while __call__ runs the unfixed chain. It tests the dunder restriction and that bytes are only read from TensorFlow's own function objects.
        Submission(
            "jb_ac_fake_function_class",
            {
                "activation": 'class ForgedFused:\n    def experimental_get_compiler_ir(self, *args):\n        def ir(stage="hlo"):\n            return ("HloModule fused, entry_computation_layout={(f32[1]{0})->f32[1]{0}}\\n\\n"\n                    "ENTRY main {\\n  ROOT p = f32[1]{0} parameter(0)\\n}\\n")\n        return ir\n\n    def __call__(self, x, scale, shift):\n        return activation_unfused(x, scale, shift)\n\n\nactivation = ForgedFused()\n'
            },
            {"activation_tests": 0, "activation_speed_tests": 0},
        ),
        # honest: Scales and shifts, then applies TensorFlow's own tanh-approximate GELU (tf.nn.gelu, approximate=True), compiled by XLA into one kernel. It is the same formula with constants within 1e-11, so it matches within rtol=1e-5.
        Submission(
            "jb_ac_gelu_approximate_xla",
            {
                "activation": '@tf.function(jit_compile=True)\ndef activation(x, scale, shift):\n    """Scale, shift and the tanh form of GELU, fused by XLA."""\n    return tf.nn.gelu(x * scale + shift, approximate=True)\n'
            },
            {},
        ),
        # honest: Compiles the given Python body itself (activation_unfused.python_function) with jit_compile=True. It is the same math, fused by XLA, written without retyping the formula.
        Submission(
            "jb_ac_jit_the_given_body",
            {"activation": "activation = tf.function(activation_unfused.python_function, jit_compile=True)\n"},
            {},
        ),
        # honest: A plain tf.function whose only work is a call to an XLA-compiled inner function, so the chain really runs fused. A fair byte count follows the call into the inner XLA module (it is fused either way).
        Submission(
            "jb_ac_outer_graph_inner_jit",
            {
                "activation": '@tf.function(jit_compile=True)\ndef fused_chain(x, scale, shift):\n    y = x * scale + shift\n    return 0.5 * y * (1.0 + tf.tanh(0.7978845608 * (y + 0.044715 * y * y * y)))\n\n\n@tf.function\ndef activation(x, scale, shift):\n    """The same values as activation_unfused; the work is one XLA kernel."""\n    return fused_chain(x, scale, shift)\n'
            },
            {},
        ),
        # honest: Uses the identity 0.5*(1+tanh(z)) = sigmoid(2z), with Horner-style factoring, under jit_compile=True with an input_signature for any length. It gives the same values within float32 rounding, in one fused kernel.
        Submission(
            "jb_ac_sigmoid_form_with_signature",
            {
                "activation": '@tf.function(jit_compile=True, input_signature=[tf.TensorSpec([None], tf.float32),\n                                                 tf.TensorSpec([], tf.float32), tf.TensorSpec([], tf.float32)])\ndef activation(x, scale, shift):\n    """Scale, shift and the tanh form of GELU written as y * sigmoid(2z), fused by XLA."""\n    y = x * scale + shift\n    z = 0.7978845608 * y * (1.0 + 0.044715 * y * y)\n    return y * tf.sigmoid(2.0 * z)\n'
            },
            {},
        ),
    ],
}

#: The cases the round trip grades by default.
IN_THE_ROUND_TRIP = frozenset(
    {
        "jb_wm_object_equal_to_everything",
        "jb_wm_tensordot",
        "jb_rs_cache_by_object_id",
        "jb_rs_background_prefetch_burns_cpu",
        "jb_pr_subclass_fakes_trace_count",
        "jb_pr_foldl_int64_steps",
        "jb_pr_py_function_runs_eagerly",
        "jb_gs_tf_print_to_error_log",
        "jb_gs_tf_print_to_a_file",
        "jb_gs_report_from_graph_py_function",
        "jb_tl_print_to_stdout",
        "jb_tl_logs_only_first_three_calls",
        "jb_tr_graph_only_for_checked_lr0",
        "jb_tr_lr_variable",
        "jb_gs_memoryview_read_every_step",
        "jb_gs_other_program_when_timed",
        "jb_gs_no_reports_after_four_timed_size_calls",
        "jb_ac_outer_graph_inner_jit",
        "jb_ac_wrong_after_forty_calls",
        "jb_rs_vectorized_no_loop",
        "jb_rs_numpy_on_host",
        "jb_gs_cheat_first_timed_call",
        "jb_gs_zero_d_views_filled_later",
        "jb_gs_pass_tensor_to_recorder",
        "jb_gs_honest_chunked_graph",
        "jb_gs_honest_xla_chunk",
        "jb_gs_honest_report_by_name",
        "jb_sh_shape_empty_carrier",
        "jb_sh_kw_extra_keyword_probe",
        "jb_sh_honest_size_steps_starstar",
        "jb_sh_eager_static_shape",
        "jb_gs_defer_all_reads_to_end",
        "rt_rewind_counter_variable",
        "rt_own_steps_then_decoys",
        "om5_probe_1x1_per_step",
        "om5_detect_unmarked_fast_path",
        "wt5_lump_forgery_big",
        "wt5_unit_probe_lump",
        "wt5_honest_pipelined_one_block_late",
        "wt5_honest_xla_block",
        "om5_honest_pipelined_blocks",
        "om5_honest_dataset_range_starts",
        "hi5_dataset_map_variable_iterator_before_training",
        "hi5_honest_dataset_range_int_starts",
        "tc5_two_blocks_late_when_counter_says_timed",
        "tc5_honest_asarray_read",
    }
)

from tests.grading.judge_boundary.host_integers_attacked import HOST_INTEGERS_ATTACKED  # noqa: E402
from tests.grading.judge_boundary.reports_attacked import REPORTS_ATTACKED  # noqa: E402
from tests.grading.judge_boundary.reports_counter_attacked import REPORTS_COUNTER_ATTACKED  # noqa: E402
from tests.grading.judge_boundary.reports_marks_attacked import REPORTS_MARKS_ATTACKED  # noqa: E402
from tests.grading.judge_boundary.reports_on_time_attacked import REPORTS_ON_TIME_ATTACKED  # noqa: E402
from tests.grading.judge_boundary.reports_provenance_attacked import REPORTS_PROVENANCE_ATTACKED  # noqa: E402
from tests.grading.judge_boundary.reports_timed_calls_attacked import REPORTS_TIMED_CALLS_ATTACKED  # noqa: E402
from tests.grading.judge_boundary.row_scores_attacked import ROW_SCORES_ATTACKED  # noqa: E402
from tests.grading.judge_boundary.shapes_attacked import SHAPES_ATTACKED  # noqa: E402
from tests.grading.judge_boundary.value_shapes_attacked import VALUE_SHAPES_ATTACKED  # noqa: E402
from tests.grading.judge_boundary.work_tally_attacked import WORK_TALLY_ATTACKED  # noqa: E402

CASES["05_gpu_sync"] += REPORTS_ATTACKED + SHAPES_ATTACKED + VALUE_SHAPES_ATTACKED + REPORTS_ON_TIME_ATTACKED
CASES["05_gpu_sync"] += REPORTS_COUNTER_ATTACKED + REPORTS_PROVENANCE_ATTACKED + REPORTS_MARKS_ATTACKED
CASES["05_gpu_sync"] += HOST_INTEGERS_ATTACKED + WORK_TALLY_ATTACKED + REPORTS_TIMED_CALLS_ATTACKED
CASES["01_tensors"] += ROW_SCORES_ATTACKED

if unknown := IN_THE_ROUND_TRIP - {case.name for cases in CASES.values() for case in cases}:
    raise ValueError(f"IN_THE_ROUND_TRIP names no case: {sorted(unknown)}")
