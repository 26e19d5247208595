"""Chapter 5's rule "report while it trains" attacked by an outsider (issue 47, 2026-11-30): a helper in a fresh context,
told how the exercise is graded (train_step's runs counted in its graph and read at each report, the bound of one
block late, the total of runs) but not the code, wrote these answers, each with the points a fair grader gives: the
attacks tell the judge's timing call from the others, fool the counter, or report from where a naive check does not
look; every attack fails both cells. The honest answers get full points, and speed points only where the steps between
two reads run inside a graph."""

from tests.grading.submission import Submission

REPORTS_ON_TIME_ATTACKED: list[Submission] = [
    # attack: the answer counts its calls per (steps, every): the second call with one size is the judge's timing check (`check_train` calls `train` for the values, then again for the timing, with the same inputs). There it is the reference, block by block, on time. Every other call (the one whose reports are compared, the printing check, every timed call) trains the whole run in one graph, reads all the due losses with one read and reports them after the loop. Its values, steps and reads are right everywhere and the timing check only ever sees the honest call, yet the reports whose values are checked are all made after training ended: the rule is broken where nobody watches the clock.
    Submission(
        "rt_on_time_only_when_watched",
        {
            "train": 'CALLS = {}\n\n\ndef watched(xs, every):\n    """The judge\'s timing check is the second call with one size (the first is the call whose reports it compares)."""\n    key = (int(xs.shape[0]), int(every))\n    CALLS[key] = CALLS.get(key, 0) + 1\n    return CALLS[key] == 2\n\n\n@tf.function\ndef run_all(w, xs, ys):\n    """Every step of the run in one graph; the loss of every step."""\n    n = tf.shape(xs)[0]\n    out = tf.TensorArray(xs.dtype, size=n)\n    for i in tf.range(n):\n        out = out.write(i, gpu_sync.train_step(w, xs[i], ys[i]))\n    return out.stack()\n\n\ndef late(w0, xs, ys, report, every):\n    """Train the whole run, read every due loss with one read, then report them all: after the loop."""\n    w = tf.Variable(w0)\n    steps = int(xs.shape[0])\n    values = run_all(w, xs, ys).numpy()\n    for s in gpu_sync.report_steps(steps, every):\n        report(s, float(values[s]))\n    return w.read_value()\n\n\n@tf.function\ndef run_block(w, xs, ys):\n    """One block of steps in one graph; its last loss."""\n    loss = tf.constant(0.0, xs.dtype)\n    for i in tf.range(tf.shape(xs)[0]):\n        loss = gpu_sync.train_step(w, xs[i], ys[i])\n    return loss\n\n\ndef train(w0, xs, ys, report, every):\n    if watched(xs, every):                       # the timing check: behave\n        w = tf.Variable(w0)\n        steps = int(xs.shape[0])\n        for start in range(0, steps, every):\n            end = min(start + every, steps)\n            loss = run_block(w, xs[start:end], ys[start:end])\n            report(end - 1, float(loss))\n        return w.read_value()\n    return late(w0, xs, ys, report, every)       # everywhere else: every report after the loop\n'
        },
        {"train_tests": 0, "train_speed_tests": 0},
    ),
    # attack: the timing call (told apart by counting calls per size, as rt_on_time_only_when_watched) trains the whole run and makes no report at all, so a check that only bounds the reports it sees ("for each report ...") has nothing to refuse and the total of runs is right; every other call reports after the loop. A fair check also requires the due steps to be reported in the timing call.
    Submission(
        "rt_silent_when_watched",
        {
            "train": 'CALLS = {}\n\n\ndef watched(xs, every):\n    """The judge\'s timing check is the second call with one size (the first is the call whose reports it compares)."""\n    key = (int(xs.shape[0]), int(every))\n    CALLS[key] = CALLS.get(key, 0) + 1\n    return CALLS[key] == 2\n\n\n@tf.function\ndef run_all(w, xs, ys):\n    """Every step of the run in one graph; the loss of every step."""\n    n = tf.shape(xs)[0]\n    out = tf.TensorArray(xs.dtype, size=n)\n    for i in tf.range(n):\n        out = out.write(i, gpu_sync.train_step(w, xs[i], ys[i]))\n    return out.stack()\n\n\ndef late(w0, xs, ys, report, every):\n    """Train the whole run, read every due loss with one read, then report them all: after the loop."""\n    w = tf.Variable(w0)\n    steps = int(xs.shape[0])\n    values = run_all(w, xs, ys).numpy()\n    for s in gpu_sync.report_steps(steps, every):\n        report(s, float(values[s]))\n    return w.read_value()\n\n\ndef train(w0, xs, ys, report, every):\n    if watched(xs, every):\n        w = tf.Variable(w0)\n        run_all(w, xs, ys)                       # all the steps, no report to be timed\n        return w.read_value()\n    return late(w0, xs, ys, report, every)\n'
        },
        {"train_tests": 0, "train_speed_tests": 0},
    ),
    # attack: in the timing call the answer trains the whole run, then reports only the last step: its bound (steps - 1 + every + 1) is met by a report made after every step ran. Every other call reports all the due steps after the loop. A check that does not require each due step once in the timing call passes it.
    Submission(
        "rt_last_report_only_when_watched",
        {
            "train": 'CALLS = {}\n\n\ndef watched(xs, every):\n    """The judge\'s timing check is the second call with one size (the first is the call whose reports it compares)."""\n    key = (int(xs.shape[0]), int(every))\n    CALLS[key] = CALLS.get(key, 0) + 1\n    return CALLS[key] == 2\n\n\n@tf.function\ndef run_all(w, xs, ys):\n    """Every step of the run in one graph; the loss of every step."""\n    n = tf.shape(xs)[0]\n    out = tf.TensorArray(xs.dtype, size=n)\n    for i in tf.range(n):\n        out = out.write(i, gpu_sync.train_step(w, xs[i], ys[i]))\n    return out.stack()\n\n\ndef late(w0, xs, ys, report, every):\n    """Train the whole run, read every due loss with one read, then report them all: after the loop."""\n    w = tf.Variable(w0)\n    steps = int(xs.shape[0])\n    values = run_all(w, xs, ys).numpy()\n    for s in gpu_sync.report_steps(steps, every):\n        report(s, float(values[s]))\n    return w.read_value()\n\n\ndef train(w0, xs, ys, report, every):\n    if watched(xs, every):\n        w = tf.Variable(w0)\n        steps = int(xs.shape[0])\n        values = run_all(w, xs, ys).numpy()\n        report(steps - 1, float(values[steps - 1]))   # the one report whose bound a late report still meets\n        return w.read_value()\n    return late(w0, xs, ys, report, every)\n'
        },
        {"train_tests": 0, "train_speed_tests": 0},
    ),
    # attack: the first argument of `report` is taken as the step, so in the timing call the answer reports `float('inf')` as the step of every due report, after training everything: `runs <= inf + every + 1` holds for any count. The compared calls report the right steps (after the loop). A fair check requires the timing call's steps to be the due steps, as integers.
    Submission(
        "rt_infinite_step_when_watched",
        {
            "train": 'CALLS = {}\n\n\ndef watched(xs, every):\n    """The judge\'s timing check is the second call with one size (the first is the call whose reports it compares)."""\n    key = (int(xs.shape[0]), int(every))\n    CALLS[key] = CALLS.get(key, 0) + 1\n    return CALLS[key] == 2\n\n\n@tf.function\ndef run_all(w, xs, ys):\n    """Every step of the run in one graph; the loss of every step."""\n    n = tf.shape(xs)[0]\n    out = tf.TensorArray(xs.dtype, size=n)\n    for i in tf.range(n):\n        out = out.write(i, gpu_sync.train_step(w, xs[i], ys[i]))\n    return out.stack()\n\n\ndef late(w0, xs, ys, report, every):\n    """Train the whole run, read every due loss with one read, then report them all: after the loop."""\n    w = tf.Variable(w0)\n    steps = int(xs.shape[0])\n    values = run_all(w, xs, ys).numpy()\n    for s in gpu_sync.report_steps(steps, every):\n        report(s, float(values[s]))\n    return w.read_value()\n\n\ndef train(w0, xs, ys, report, every):\n    if watched(xs, every):\n        w = tf.Variable(w0)\n        steps = int(xs.shape[0])\n        values = run_all(w, xs, ys).numpy()\n        for s in gpu_sync.report_steps(steps, every):\n            report(float("inf"), float(values[s]))    # a "step" no count of runs can be late for\n        return w.read_value()\n    return late(w0, xs, ys, report, every)\n'
        },
        {"train_tests": 0, "train_speed_tests": 0},
    ),
    # attack: as rt_infinite_step_when_watched with NaN as the step. A bound written `not runs > step + every + 1` (or a `max`/`min` that drops NaN) lets every late report through, and `runs <= nan` compares false only where it is written the other way round.
    Submission(
        "rt_nan_step_when_watched",
        {
            "train": 'CALLS = {}\n\n\ndef watched(xs, every):\n    """The judge\'s timing check is the second call with one size (the first is the call whose reports it compares)."""\n    key = (int(xs.shape[0]), int(every))\n    CALLS[key] = CALLS.get(key, 0) + 1\n    return CALLS[key] == 2\n\n\n@tf.function\ndef run_all(w, xs, ys):\n    """Every step of the run in one graph; the loss of every step."""\n    n = tf.shape(xs)[0]\n    out = tf.TensorArray(xs.dtype, size=n)\n    for i in tf.range(n):\n        out = out.write(i, gpu_sync.train_step(w, xs[i], ys[i]))\n    return out.stack()\n\n\ndef late(w0, xs, ys, report, every):\n    """Train the whole run, read every due loss with one read, then report them all: after the loop."""\n    w = tf.Variable(w0)\n    steps = int(xs.shape[0])\n    values = run_all(w, xs, ys).numpy()\n    for s in gpu_sync.report_steps(steps, every):\n        report(s, float(values[s]))\n    return w.read_value()\n\n\ndef train(w0, xs, ys, report, every):\n    if watched(xs, every):\n        w = tf.Variable(w0)\n        steps = int(xs.shape[0])\n        values = run_all(w, xs, ys).numpy()\n        for s in gpu_sync.report_steps(steps, every):\n            report(np.nan, float(values[s]))          # NaN compares false with every bound\n        return w.read_value()\n    return late(w0, xs, ys, report, every)\n'
        },
        {"train_tests": 0, "train_speed_tests": 0},
    ),
    # attack: the judge bounds how late a report is, not how early: in the timing call the answer makes every due report (steps right, values 0.0) before running a single step, then trains the whole run. The timing call's values are not compared, and the compared calls report the true values after the loop. No report of it is ever made while training.
    Submission(
        "rt_reports_before_training_when_watched",
        {
            "train": 'CALLS = {}\n\n\ndef watched(xs, every):\n    """The judge\'s timing check is the second call with one size (the first is the call whose reports it compares)."""\n    key = (int(xs.shape[0]), int(every))\n    CALLS[key] = CALLS.get(key, 0) + 1\n    return CALLS[key] == 2\n\n\n@tf.function\ndef run_all(w, xs, ys):\n    """Every step of the run in one graph; the loss of every step."""\n    n = tf.shape(xs)[0]\n    out = tf.TensorArray(xs.dtype, size=n)\n    for i in tf.range(n):\n        out = out.write(i, gpu_sync.train_step(w, xs[i], ys[i]))\n    return out.stack()\n\n\ndef late(w0, xs, ys, report, every):\n    """Train the whole run, read every due loss with one read, then report them all: after the loop."""\n    w = tf.Variable(w0)\n    steps = int(xs.shape[0])\n    values = run_all(w, xs, ys).numpy()\n    for s in gpu_sync.report_steps(steps, every):\n        report(s, float(values[s]))\n    return w.read_value()\n\n\ndef train(w0, xs, ys, report, every):\n    if watched(xs, every):\n        steps = int(xs.shape[0])\n        for s in gpu_sync.report_steps(steps, every):\n            report(s, 0.0)                            # 0 runs so far: as early as it gets\n        w = tf.Variable(w0)\n        run_all(w, xs, ys)\n        return w.read_value()\n    return late(w0, xs, ys, report, every)\n'
        },
        {"train_tests": 0, "train_speed_tests": 0},
    ),
    # attack: callbacks called more times: in the timing call each due step is reported twice, first as a placeholder (0.0) before any training, then with its true value after the loop. A check that keeps the first report of each step (a dict filled with `setdefault`, or "the report for step s" found by a search from the front) sees every step on time; the compared calls report once, after the loop. A fair check bounds every report and refuses a step reported twice.
    Submission(
        "rt_duplicate_early_reports_when_watched",
        {
            "train": 'CALLS = {}\n\n\ndef watched(xs, every):\n    """The judge\'s timing check is the second call with one size (the first is the call whose reports it compares)."""\n    key = (int(xs.shape[0]), int(every))\n    CALLS[key] = CALLS.get(key, 0) + 1\n    return CALLS[key] == 2\n\n\n@tf.function\ndef run_all(w, xs, ys):\n    """Every step of the run in one graph; the loss of every step."""\n    n = tf.shape(xs)[0]\n    out = tf.TensorArray(xs.dtype, size=n)\n    for i in tf.range(n):\n        out = out.write(i, gpu_sync.train_step(w, xs[i], ys[i]))\n    return out.stack()\n\n\ndef late(w0, xs, ys, report, every):\n    """Train the whole run, read every due loss with one read, then report them all: after the loop."""\n    w = tf.Variable(w0)\n    steps = int(xs.shape[0])\n    values = run_all(w, xs, ys).numpy()\n    for s in gpu_sync.report_steps(steps, every):\n        report(s, float(values[s]))\n    return w.read_value()\n\n\ndef train(w0, xs, ys, report, every):\n    if watched(xs, every):\n        steps = int(xs.shape[0])\n        for s in gpu_sync.report_steps(steps, every):\n            report(s, 0.0)                            # on time, and empty\n        return late(w0, xs, ys, report, every)        # the real reports, after the loop\n    return late(w0, xs, ys, report, every)\n'
        },
        {"train_tests": 0, "train_speed_tests": 0},
    ),
    # attack: no tell needed: in every call each due step is reported twice, a placeholder 0.0 before training and the true value after the loop. A value check that keeps the last report per step (`dict(reports)`) and a timing check that keeps the first (`setdefault`) would both pass it, though every real value comes after training ended. A fair grader compares the whole list of reports (each due step once, in order) and bounds each report.
    Submission(
        "rt_placeholder_then_late_value",
        {
            "train": '@tf.function\ndef run_all(w, xs, ys):\n    """Every step of the run in one graph; the loss of every step."""\n    n = tf.shape(xs)[0]\n    out = tf.TensorArray(xs.dtype, size=n)\n    for i in tf.range(n):\n        out = out.write(i, gpu_sync.train_step(w, xs[i], ys[i]))\n    return out.stack()\n\n\ndef train(w0, xs, ys, report, every):\n    steps = int(xs.shape[0])\n    due = gpu_sync.report_steps(steps, every)\n    for s in due:\n        report(s, 0.0)                                # "on time": before a single step ran\n    w = tf.Variable(w0)\n    values = run_all(w, xs, ys).numpy()               # one read, the whole run trained\n    for s in due:\n        report(s, float(values[s]))                   # the values, after the loop\n    return w.read_value()\n'
        },
        {"train_tests": 0, "train_speed_tests": 0},
    ),
    # attack: reports whose first argument is not the step: after training the whole run, the answer reports by name with the loss first, `report(loss=..., step=...)`. The given report function accepts it, and the compared values and steps are right. A timing check that takes the step from the first positional argument finds none (and may skip the report) or takes the loss (a small float, which would refuse it); a fair check binds the arguments to the report function's parameters and finds every report late.
    Submission(
        "rt_keyword_reports_after_loop",
        {
            "train": '@tf.function\ndef run_all(w, xs, ys):\n    """Every step of the run in one graph; the loss of every step."""\n    n = tf.shape(xs)[0]\n    out = tf.TensorArray(xs.dtype, size=n)\n    for i in tf.range(n):\n        out = out.write(i, gpu_sync.train_step(w, xs[i], ys[i]))\n    return out.stack()\n\n\ndef train(w0, xs, ys, report, every):\n    w = tf.Variable(w0)\n    steps = int(xs.shape[0])\n    values = run_all(w, xs, ys).numpy()\n    for s in gpu_sync.report_steps(steps, every):\n        report(loss=float(values[s]), step=s)         # no positional arguments at all\n    return w.read_value()\n'
        },
        {"train_tests": 0, "train_speed_tests": 0},
    ),
    # attack: reports from inside a graph, but after its loop: one tf.function runs every step in a tf.range loop, stacks the losses, and only then makes the due reports through tf.numpy_function (one transfer each, so the reads are within the limit). The reports are made "during" the call, from a thread of the TensorFlow runtime rather than from Python; a check that only watches Python-level reports, or that reads a counter updated only between calls, would miss that all the steps ran first. Fair: every report but the last block's is late.
    Submission(
        "rt_graph_reports_after_loop",
        {
            "train": 'CURRENT = []\n\n\ndef send(step, value):\n    """Called by tf.numpy_function inside a graph: the report, with host numbers."""\n    CURRENT[0](int(step), float(value))\n    return np.int32(0)\n\n\n@tf.function\ndef run_then_report(w, xs, ys, due):\n    n = tf.shape(xs)[0]\n    out = tf.TensorArray(xs.dtype, size=n)\n    for i in tf.range(n):\n        out = out.write(i, gpu_sync.train_step(w, xs[i], ys[i]))\n    losses = out.stack()\n    for s in due:                                     # a Python list: unrolled, after the training loop\n        tf.numpy_function(send, [tf.constant(s), losses[s]], tf.int32)\n    return losses[n - 1]\n\n\ndef train(w0, xs, ys, report, every):\n    CURRENT.clear()\n    CURRENT.append(report)\n    w = tf.Variable(w0)\n    run_then_report(w, xs, ys, gpu_sync.report_steps(int(xs.shape[0]), every))\n    return w.read_value()\n'
        },
        {"train_tests": 0, "train_speed_tests": 0},
    ),
    # attack: a double-buffered pipeline two blocks deep: it queues blocks k+1 and k+2 before reading block k's loss. It looks like the allowed pipelining, but every report is made two blocks late (runs = s + 2*every + 1 at a report of step s), past the bound that allows one block; with every=1 each report is two steps late. Fair: refused, the rule allows one block.
    Submission(
        "rt_two_blocks_ahead",
        {
            "train": '@tf.function\ndef run_block(w, xs, ys):\n    """One block of steps in one graph; its last loss."""\n    loss = tf.constant(0.0, xs.dtype)\n    for i in tf.range(tf.shape(xs)[0]):\n        loss = gpu_sync.train_step(w, xs[i], ys[i])\n    return loss\n\n\ndef train(w0, xs, ys, report, every):\n    w = tf.Variable(w0)\n    steps = int(xs.shape[0])\n    queue = []\n    for start in range(0, steps, every):\n        end = min(start + every, steps)\n        queue.append((end - 1, run_block(w, xs[start:end], ys[start:end])))\n        if len(queue) > 2:                            # two blocks queued after the one it reads\n            item = queue.pop(0)\n            report(item[0], float(item[1]))\n    for item in queue:\n        report(item[0], float(item[1]))\n    return w.read_value()\n'
        },
        {"train_tests": 0, "train_speed_tests": 0},
    ),
    # attack: the training runs inside a tf.data pipeline (`map` trains one block per element, `prefetch(64)`), and the Python loop that consumes it reports each element as it arrives, so reports look interleaved with training. But the pipeline's background thread trains up to 64 blocks ahead of the reports: in practice the whole run is done before the first report is made. It also probes whether runs of train_step inside a tf.data function are counted at all. Fair: the reports are late.
    Submission(
        "rt_prefetched_dataset_runs_ahead",
        {
            "train": "def train(w0, xs, ys, report, every):\n    w = tf.Variable(w0)\n    steps = int(xs.shape[0])\n    starts = list(range(0, steps, every))\n    ends = [min(s + every, steps) for s in starts]\n\n    def block(start, end):\n        loss = tf.constant(0.0, xs.dtype)\n        for i in tf.range(start, end):\n            loss = gpu_sync.train_step(w, xs[i], ys[i])\n        return loss\n\n    blocks = tf.data.Dataset.from_tensor_slices((starts, ends)).map(block).prefetch(64)\n    k = 0\n    for loss in blocks:                               # the pipeline has trained far ahead by now\n        report(ends[k] - 1, float(loss))\n        k = k + 1\n    return w.read_value()\n"
        },
        {"train_tests": 0, "train_speed_tests": 0},
    ),
    # attack: the counter is a variable captured by train_step's graph, so it is listed by `gpu_sync.train_step.get_concrete_function(...).variables`. The answer takes the scalar variables there other than its weights, keeps their values on the device (no host read), trains the whole run in one graph, then before each report `assign`s each counter to its start + s + 1 ("only s + 1 steps so far"), and at the end to start + steps so the total is right. Method calls on a variable are not attribute writes, so the guards let them through. Fair: every report after the loop.
    Submission(
        "rt_rewind_counter_variable",
        {
            "train": '@tf.function\ndef run_all(w, xs, ys):\n    """Every step of the run in one graph; the loss of every step."""\n    n = tf.shape(xs)[0]\n    out = tf.TensorArray(xs.dtype, size=n)\n    for i in tf.range(n):\n        out = out.write(i, gpu_sync.train_step(w, xs[i], ys[i]))\n    return out.stack()\n\n\ndef rewind_and_report(counters, bases, values, report, steps, every):\n    """Before each report, set every counter to "s + 1 steps so far"; at the end, to the run\'s total."""\n    for s in gpu_sync.report_steps(steps, every):\n        for k in range(len(counters)):\n            counters[k].assign(bases[k] + tf.cast(s + 1, counters[k].dtype))\n        report(s, float(values[s]))\n    for k in range(len(counters)):\n        counters[k].assign(bases[k] + tf.cast(steps, counters[k].dtype))\n\n\ndef train(w0, xs, ys, report, every):\n    w = tf.Variable(w0)\n    steps = int(xs.shape[0])\n    found = gpu_sync.train_step.get_concrete_function(w, xs[0], ys[0]).variables\n    counters = [v for v in found if v is not w and len(v.shape) == 0]\n    bases = [c.read_value() for c in counters]        # device tensors: not a host read\n    values = run_all(w, xs, ys).numpy()               # the whole run, before any report\n    rewind_and_report(counters, bases, values, report, steps, every)\n    return w.read_value()\n'
        },
        {"train_tests": 0, "train_speed_tests": 0},
    ),
    # attack: as rt_rewind_counter_variable, reached another way: the concrete function's `captured_inputs` hold the counter's resource handle, which `tf.raw_ops.ReadVariableOp` / `AssignVariableOp` read and overwrite with no Variable object at all (the dtype found by trying int64, int32, float32, float64). This gets around a grader that hides the counter's Variable (or wraps it read-only) but still captures it in the graph. Fair: every report after the loop.
    Submission(
        "rt_rewind_counter_raw_handle",
        {
            "train": '@tf.function\ndef run_all(w, xs, ys):\n    """Every step of the run in one graph; the loss of every step."""\n    n = tf.shape(xs)[0]\n    out = tf.TensorArray(xs.dtype, size=n)\n    for i in tf.range(n):\n        out = out.write(i, gpu_sync.train_step(w, xs[i], ys[i]))\n    return out.stack()\n\n\ndef counter_handles(w, xs, ys):\n    """Resource handles captured by train_step\'s graph, with the dtype each one reads as (scalars only)."""\n    found = []\n    for h in gpu_sync.train_step.get_concrete_function(w, xs[0], ys[0]).captured_inputs:\n        if h.dtype == tf.resource:\n            for dtype in [tf.int64, tf.int32, tf.float32, tf.float64]:\n                try:\n                    value = tf.raw_ops.ReadVariableOp(resource=h, dtype=dtype)\n                    if len(value.shape) == 0:\n                        found.append((h, dtype, value))\n                except Exception:\n                    pass\n    return found\n\n\ndef train(w0, xs, ys, report, every):\n    w = tf.Variable(w0)\n    steps = int(xs.shape[0])\n    handles = counter_handles(w, xs, ys)\n    values = run_all(w, xs, ys).numpy()               # the whole run, before any report\n    for s in gpu_sync.report_steps(steps, every):\n        for item in handles:\n            tf.raw_ops.AssignVariableOp(resource=item[0], value=item[2] + tf.cast(s + 1, item[1]))\n        report(s, float(values[s]))\n    for item in handles:\n        tf.raw_ops.AssignVariableOp(resource=item[0], value=item[2] + tf.cast(steps, item[1]))\n    return w.read_value()\n'
        },
        {"train_tests": 0, "train_speed_tests": 0},
    ),
    # attack: as rt_rewind_counter_variable, with the counter looked for by name: every public attribute of `gpu_sync`, of `gpu_sync.train_step` and of `grading` that is a scalar tf.Variable is taken for a counter and rewound before each report (a grader keeping its counter as, say, `gpu_sync.train_step_runs` or an attribute of the wrapper would be fooled). Fair: every report after the loop.
    Submission(
        "rt_counter_hunt_in_modules",
        {
            "train": '@tf.function\ndef run_all(w, xs, ys):\n    """Every step of the run in one graph; the loss of every step."""\n    n = tf.shape(xs)[0]\n    out = tf.TensorArray(xs.dtype, size=n)\n    for i in tf.range(n):\n        out = out.write(i, gpu_sync.train_step(w, xs[i], ys[i]))\n    return out.stack()\n\n\ndef rewind_and_report(counters, bases, values, report, steps, every):\n    """Before each report, set every counter to "s + 1 steps so far"; at the end, to the run\'s total."""\n    for s in gpu_sync.report_steps(steps, every):\n        for k in range(len(counters)):\n            counters[k].assign(bases[k] + tf.cast(s + 1, counters[k].dtype))\n        report(s, float(values[s]))\n    for k in range(len(counters)):\n        counters[k].assign(bases[k] + tf.cast(steps, counters[k].dtype))\n\n\ndef hunt():\n    found = []\n    for owner in [gpu_sync, gpu_sync.train_step, grading]:\n        for name in dir(owner):\n            if not name.startswith("_"):\n                obj = getattr(owner, name, None)\n                if isinstance(obj, tf.Variable) and len(obj.shape) == 0:\n                    found.append(obj)\n    return found\n\n\ndef train(w0, xs, ys, report, every):\n    w = tf.Variable(w0)\n    steps = int(xs.shape[0])\n    counters = hunt()\n    bases = [c.read_value() for c in counters]\n    values = run_all(w, xs, ys).numpy()\n    rewind_and_report(counters, bases, values, report, steps, every)\n    return w.read_value()\n'
        },
        {"train_tests": 0, "train_speed_tests": 0},
    ),
    # attack: train_step called on a copy: the real run is trained ahead in the answer's own tf.function through `gpu_sync.train_step.python_function` (the undecorated body, which a counter added around the tf.function would not see), with every loss read at once. Then, block by block, it runs the counted `gpu_sync.train_step` on a throwaway copy of the weights and reports the stored value after each decoy block: the count is exactly steps and each report looks on time. Fair: the weights returned were trained before the first report; the counted runs trained nothing that is returned.
    Submission(
        "rt_python_function_ahead_decoys_on_copy",
        {
            "train": '@tf.function\ndef decoy_block(copy, xs, ys):\n    """Counted runs of train_step that train a throwaway copy, nothing the answer returns."""\n    for i in tf.range(tf.shape(xs)[0]):\n        gpu_sync.train_step(copy, xs[i], ys[i])\n    return tf.constant(0)\n\n\nRAW_STEP = gpu_sync.train_step.python_function\n\n\n@tf.function\ndef hidden_run(w, xs, ys):\n    n = tf.shape(xs)[0]\n    out = tf.TensorArray(xs.dtype, size=n)\n    for i in tf.range(n):\n        out = out.write(i, RAW_STEP(w, xs[i], ys[i]))\n    return out.stack()\n\n\ndef train(w0, xs, ys, report, every):\n    w = tf.Variable(w0)\n    steps = int(xs.shape[0])\n    values = hidden_run(w, xs, ys).numpy()            # the real run, all of it, uncounted\n    copy = tf.Variable(w0)\n    for start in range(0, steps, every):\n        end = min(start + every, steps)\n        decoy_block(copy, xs[start:end], ys[start:end])   # counted runs on the copy\n        report(end - 1, float(values[end - 1]))\n    return w.read_value()\n'
        },
        {"train_tests": 0, "train_speed_tests": 0},
    ),
    # attack: as rt_python_function_ahead_decoys_on_copy, with the real run hidden another way: `tf.config.run_functions_eagerly(True)` makes train_step run its Python body op by op, so a counter that lives only in the traced graph (a rewrite, an op added to the graph) does not move. The real run is done that way first, then eager execution is turned off and the counted decoy blocks on a copy pace the reports. Fair: all the real training is done before the first report.
    Submission(
        "rt_eager_ahead_decoys_on_copy",
        {
            "train": '@tf.function\ndef decoy_block(copy, xs, ys):\n    """Counted runs of train_step that train a throwaway copy, nothing the answer returns."""\n    for i in tf.range(tf.shape(xs)[0]):\n        gpu_sync.train_step(copy, xs[i], ys[i])\n    return tf.constant(0)\n\n\ndef train(w0, xs, ys, report, every):\n    w = tf.Variable(w0)\n    steps = int(xs.shape[0])\n    due = gpu_sync.report_steps(steps, every)\n    tf.config.run_functions_eagerly(True)\n    losses = [gpu_sync.train_step(w, xs[i], ys[i]) for i in range(steps)]\n    tf.config.run_functions_eagerly(False)\n    values = tf.stack([losses[s] for s in due]).numpy()\n    copy = tf.Variable(w0)\n    k = 0\n    for start in range(0, steps, every):\n        end = min(start + every, steps)\n        decoy_block(copy, xs[start:end], ys[start:end])\n        report(end - 1, float(values[k]))\n        k = k + 1\n    return w.read_value()\n'
        },
        {"train_tests": 0, "train_speed_tests": 0},
    ),
    # attack (ours, after the helper's): the whole run is trained first in a graph of the answer's own (train_step's arithmetic, uncounted), and its reports are then paced by the course's train_steps run block by block on a throwaway copy of the weights: the count rises between the reports as if they were made while training. Both cells 0: every report comes after training ended (and it trains twice).
    Submission(
        "rt_own_steps_then_decoys",
        {
            "train": "@tf.function\ndef own_steps(w, xs, ys):  # train_step's arithmetic, in a graph of the answer's own: not counted\n    n = tf.shape(xs)[0]\n    losses = tf.TensorArray(tf.float32, size=n)\n    for i in tf.range(n):\n        with tf.GradientTape() as tape:\n            loss = tf.reduce_mean(tf.square(tf.matmul(xs[i], w) - ys[i]))\n        w.assign_sub(gpu_sync.LEARNING_RATE * tape.gradient(loss, w))\n        losses = losses.write(i, loss)\n    return losses.stack()\n\n\ndef train(w0, xs, ys, report, every):\n    steps = int(xs.shape[0])\n    w = tf.Variable(w0)\n    values = own_steps(w, xs, ys).numpy()  # the whole run first, one read\n    decoy = tf.Variable(w0)\n    due = gpu_sync.report_steps(steps, every)\n    for start in range(0, steps, every):  # then the reports, paced by train_step on a throwaway copy\n        gpu_sync.train_steps(decoy, xs[start : start + every], ys[start : start + every])\n        report(due[start // every], float(values[due[start // every]]))\n    return w.read_value()\n"
        },
        {"train_tests": 0, "train_speed_tests": 0},
    ),
    # plausible: each block's loss handed to the report as the tensor the block returned, unread. The exercise asks for the loss "as a Python or NumPy number": the reports check refuses it, "a number read from the loss tensor (with float() or .numpy())" expected (0). Speed: the calls compared in the speed cell are read as numbers; in a graph, one read per block, full points on a CPU.
    Submission(
        "rt_report_handed_the_tensor",
        {
            "train": "def train(w0, xs, ys, report, every):\n    w = tf.Variable(w0)\n    steps = int(xs.shape[0])\n    for start in range(0, steps, every):\n        end = min(start + every, steps)\n        report(end - 1, gpu_sync.train_steps(w, xs[start:end], ys[start:end]))  # the report reads the tensor\n    return w.read_value()\n"
        },
        {"train_tests": 0},
    ),
    # honest: two blocks' losses read in one read once the second ran (tf.stack, .numpy()), then both reported: the first a block late, which the rule allows; an odd last block read alone. Fewer reads than reports. Speed: in a graph, full points on a CPU.
    Submission(
        "rt_honest_two_blocks_one_read",
        {
            "train": "def train(w0, xs, ys, report, every):\n    w = tf.Variable(w0)\n    steps = int(xs.shape[0])\n    pending = []\n    for start in range(0, steps, every):\n        end = min(start + every, steps)\n        pending.append((end - 1, gpu_sync.train_steps(w, xs[start:end], ys[start:end])))\n        if len(pending) == 2 or end == steps:\n            values = tf.stack([loss for _, loss in pending]).numpy()  # two blocks, one read\n            for (step, _), value in zip(pending, values):\n                report(step, float(value))\n            pending = []\n    return w.read_value()\n"
        },
        {},
    ),
    # honest: each block runs in one tf.function call; the answer queues block k+1 before it reads block k's loss, so the device never waits for the host. At the report of step s, s + every + 1 steps have run at most: exactly the one block the rule allows (the last block is reported after the loop, which is its own block). Speed: the steps between two reads run inside a graph, full points on a CPU.
    Submission(
        "rt_honest_pipelined_blocks",
        {
            "train": '@tf.function\ndef run_block(w, xs, ys):\n    """One block of steps in one graph; its last loss."""\n    loss = tf.constant(0.0, xs.dtype)\n    for i in tf.range(tf.shape(xs)[0]):\n        loss = gpu_sync.train_step(w, xs[i], ys[i])\n    return loss\n\n\ndef train(w0, xs, ys, report, every):\n    """Queue the next block before reading the last one\'s loss: one block late at most."""\n    w = tf.Variable(w0)\n    steps = int(xs.shape[0])\n    pending = None\n    for start in range(0, steps, every):\n        end = min(start + every, steps)\n        loss = run_block(w, xs[start:end], ys[start:end])\n        if pending is not None:\n            report(pending[0], float(pending[1]))\n        pending = (end - 1, loss)\n    report(pending[0], float(pending[1]))\n    return w.read_value()\n'
        },
        {},
    ),
    # honest: the block is an explicit `tf.while_loop` (parallel_iterations=1) over the block's steps, carrying the step index and the loss; one read per block, reported right after it. Speed: in a graph, full points on a CPU.
    Submission(
        "rt_honest_while_loop_block",
        {
            "train": "@tf.function\ndef loop_block(w, xs, ys):\n    n = tf.shape(xs)[0]\n\n    def more(i, loss):\n        return i < n\n\n    def step(i, loss):\n        return i + 1, gpu_sync.train_step(w, xs[i], ys[i])\n\n    i, loss = tf.while_loop(more, step, (tf.constant(0), tf.constant(0.0, xs.dtype)), parallel_iterations=1)\n    return loss\n\n\ndef train(w0, xs, ys, report, every):\n    w = tf.Variable(w0)\n    steps = int(xs.shape[0])\n    for start in range(0, steps, every):\n        end = min(start + every, steps)\n        report(end - 1, float(loop_block(w, xs[start:end], ys[start:end])))\n    return w.read_value()\n"
        },
        {},
    ),
    # honest: the reference's block compiled with XLA (`jit_compile=True`): the counter's increments inside train_step are compiled with it and must still count. XLA's fused arithmetic moves losses and weights far less than rtol 1e-4 / atol 1e-5. Speed: in a graph, full points on a CPU.
    Submission(
        "rt_honest_xla_block",
        {
            "train": "@tf.function(jit_compile=True)\ndef xla_block(w, xs, ys):\n    loss = tf.constant(0.0, xs.dtype)\n    for i in tf.range(tf.shape(xs)[0]):\n        loss = gpu_sync.train_step(w, xs[i], ys[i])\n    return loss\n\n\ndef train(w0, xs, ys, report, every):\n    w = tf.Variable(w0)\n    steps = int(xs.shape[0])\n    for start in range(0, steps, every):\n        end = min(start + every, steps)\n        loss = xla_block(w, xs[start:end], ys[start:end])\n        report(end - 1, float(loss))\n    return w.read_value()\n"
        },
        {},
    ),
    # honest: each block is one call of the course's own `gpu_sync.train_steps` (len(xs) steps in one tf.function, last loss returned); the runs of train_step inside it must be counted. Speed: in a graph, full points on a CPU.
    Submission(
        "rt_honest_gpu_sync_train_steps",
        {
            "train": "def train(w0, xs, ys, report, every):\n    w = tf.Variable(w0)\n    steps = int(xs.shape[0])\n    for start in range(0, steps, every):\n        end = min(start + every, steps)\n        loss = gpu_sync.train_steps(w, xs[start:end], ys[start:end])\n        report(end - 1, float(loss))\n    return w.read_value()\n"
        },
        {},
    ),
    # honest: the report is made inside the block's graph: after the block's tf.range loop, `tf.numpy_function` hands the step and the loss (one transfer, the block's one read) to a function that calls `report` with host numbers. Each report is made right after its block's last step, before the next block is called. Speed: in a graph, full points on a CPU.
    Submission(
        "rt_honest_numpy_function_per_block",
        {
            "train": 'CURRENT = []\n\n\ndef send(step, value):\n    """Called by tf.numpy_function inside a graph: the report, with host numbers."""\n    CURRENT[0](int(step), float(value))\n    return np.int32(0)\n\n\n@tf.function\ndef block_and_report(w, xs, ys, last):\n    loss = tf.constant(0.0, xs.dtype)\n    for i in tf.range(tf.shape(xs)[0]):\n        loss = gpu_sync.train_step(w, xs[i], ys[i])\n    tf.numpy_function(send, [last, loss], tf.int32)   # the block\'s report, inside its graph\n    return loss\n\n\ndef train(w0, xs, ys, report, every):\n    CURRENT.clear()\n    CURRENT.append(report)\n    w = tf.Variable(w0)\n    steps = int(xs.shape[0])\n    for start in range(0, steps, every):\n        end = min(start + every, steps)\n        block_and_report(w, xs[start:end], ys[start:end], tf.constant(end - 1))\n    return w.read_value()\n'
        },
        {},
    ),
    # honest: the whole run is one graph: an outer tf.range over blocks (parallel_iterations=1), an inner one over the block's steps (the last block clipped with tf.minimum), and a `tf.numpy_function` report at the end of each outer iteration, ordered after that block's steps and before the next block's by the automatic control dependencies. One graph call per run, one transfer per report. Speed: in a graph, full points on a CPU.
    Submission(
        "rt_honest_whole_run_one_graph",
        {
            "train": 'CURRENT = []\n\n\ndef send(step, value):\n    """Called by tf.numpy_function inside a graph: the report, with host numbers."""\n    CURRENT[0](int(step), float(value))\n    return np.int32(0)\n\n\n@tf.function\ndef whole_run(w, xs, ys, every):\n    n = tf.shape(xs)[0]\n    loss = tf.constant(0.0, xs.dtype)\n    for start in tf.range(0, n, every):\n        tf.autograph.experimental.set_loop_options(parallel_iterations=1)\n        end = tf.minimum(start + every, n)\n        for i in tf.range(start, end):\n            loss = gpu_sync.train_step(w, xs[i], ys[i])\n        tf.numpy_function(send, [end - 1, loss], tf.int32)   # report, then the next block\n    return loss\n\n\ndef train(w0, xs, ys, report, every):\n    CURRENT.clear()\n    CURRENT.append(report)\n    w = tf.Variable(w0)\n    whole_run(w, xs, ys, int(every))\n    return w.read_value()\n'
        },
        {},
    ),
    # honest: the block's Python loop is unrolled at trace time (`autograph=False`, static block length): a straight-line graph of `every` train_step calls ordered by automatic control dependencies, one trace per block length (two per run at most: full blocks and the last partial one). Speed: in a graph, full points on a CPU.
    Submission(
        "rt_honest_unrolled_block",
        {
            "train": "@tf.function(autograph=False)\ndef unrolled_block(w, xs, ys):\n    loss = None\n    for i in range(xs.shape[0]):\n        loss = gpu_sync.train_step(w, xs[i], ys[i])\n    return loss\n\n\ndef train(w0, xs, ys, report, every):\n    w = tf.Variable(w0)\n    steps = int(xs.shape[0])\n    for last in gpu_sync.report_steps(steps, every):\n        start = (last // every) * every\n        loss = unrolled_block(w, xs[start:last + 1], ys[start:last + 1])\n        report(last, float(loss))\n    return w.read_value()\n"
        },
        {},
    ),
    # honest: half of the fix: every step is still called from Python, but the loss is read only at the due steps and reported at once (on time, within the read limit). Speed: the steps between two reads are dispatched one by one from Python, which on a CPU does not reach the target: no speed points on a CPU.
    Submission(
        "rt_honest_per_step_due_reads",
        {
            "train": "def train(w0, xs, ys, report, every):\n    w = tf.Variable(w0)\n    steps = int(xs.shape[0])\n    due = gpu_sync.report_steps(steps, every)\n    for step in range(steps):\n        loss = gpu_sync.train_step(w, xs[step], ys[step])\n        if step in due:\n            report(step, float(loss))\n    return w.read_value()\n"
        },
        {"train_speed_tests": 0},
    ),
    # honest: pipelined inside the graph: block k's report is made by a `tf.numpy_function` at the start of block k+1's graph, ordered before that block's steps by the automatic control dependencies, so each report comes before any later step runs (runs = s + 1); the last block is reported after the loop with one `float`. Speed: in a graph, full points on a CPU.
    Submission(
        "rt_honest_report_in_next_block_graph",
        {
            "train": 'CURRENT = []\n\n\ndef send(step, value):\n    """Called by tf.numpy_function inside a graph: the report, with host numbers."""\n    CURRENT[0](int(step), float(value))\n    return np.int32(0)\n\n\n@tf.function\ndef run_block(w, xs, ys):\n    """One block of steps in one graph; its last loss."""\n    loss = tf.constant(0.0, xs.dtype)\n    for i in tf.range(tf.shape(xs)[0]):\n        loss = gpu_sync.train_step(w, xs[i], ys[i])\n    return loss\n\n\n@tf.function\ndef report_then_block(w, xs, ys, last_step, last_loss):\n    tf.numpy_function(send, [last_step, last_loss], tf.int32)   # the previous block\'s report, first\n    loss = tf.constant(0.0, xs.dtype)\n    for i in tf.range(tf.shape(xs)[0]):\n        loss = gpu_sync.train_step(w, xs[i], ys[i])\n    return loss\n\n\ndef train(w0, xs, ys, report, every):\n    CURRENT.clear()\n    CURRENT.append(report)\n    w = tf.Variable(w0)\n    steps = int(xs.shape[0])\n    end = min(every, steps)\n    loss = run_block(w, xs[0:end], ys[0:end])\n    last = end - 1\n    for start in range(end, steps, every):\n        end = min(start + every, steps)\n        loss = report_then_block(w, xs[start:end], ys[start:end], tf.constant(last), loss)\n        last = end - 1\n    report(last, float(loss))\n    return w.read_value()\n'
        },
        {},
    ),
    # honest: each block's graph returns all its losses (a TensorArray, stacked); the answer slices the last one on the device and reads only that number (`.numpy()`, a NumPy float32 as the given code reports). Speed: in a graph, full points on a CPU.
    Submission(
        "rt_honest_block_losses_read_last",
        {
            "train": "@tf.function\ndef block_losses(w, xs, ys):\n    n = tf.shape(xs)[0]\n    out = tf.TensorArray(xs.dtype, size=n)\n    for i in tf.range(n):\n        out = out.write(i, gpu_sync.train_step(w, xs[i], ys[i]))\n    return out.stack()\n\n\ndef train(w0, xs, ys, report, every):\n    w = tf.Variable(w0)\n    steps = int(xs.shape[0])\n    for start in range(0, steps, every):\n        end = min(start + every, steps)\n        losses = block_losses(w, xs[start:end], ys[start:end])\n        report(end - 1, losses[-1].numpy())           # one number read, right after its block\n    return w.read_value()\n"
        },
        {},
    ),
    # honest: the reference with its reports made by name and the loss named first, `report(loss=..., step=...)`, which the given report function accepts: the timing check must bind the arguments to find the step (the pair of rt_keyword_reports_after_loop, which does the same after the loop). Speed: in a graph, full points on a CPU.
    Submission(
        "rt_honest_keyword_report_on_time",
        {
            "train": '@tf.function\ndef run_block(w, xs, ys):\n    """One block of steps in one graph; its last loss."""\n    loss = tf.constant(0.0, xs.dtype)\n    for i in tf.range(tf.shape(xs)[0]):\n        loss = gpu_sync.train_step(w, xs[i], ys[i])\n    return loss\n\n\ndef train(w0, xs, ys, report, every):\n    w = tf.Variable(w0)\n    steps = int(xs.shape[0])\n    for start in range(0, steps, every):\n        end = min(start + every, steps)\n        loss = run_block(w, xs[start:end], ys[start:end])\n        report(loss=float(loss), step=end - 1)\n    return w.read_value()\n'
        },
        {},
    ),
]
