"""Chapter 5's report and timing boundary attacked by an outsider (issue 47, 2026-11-30): a helper in a fresh context,
told how the exercise is graded (the judge's calls, the timed calls' report stubs and the reports compared on every
compared call) but not the code, wrote these answers, each with the points a fair grader gives (the helper's, reviewed
where the comment says so). Each cell is all or nothing: a case the helper scored 2 of 3 fails ``train_tests``; every
attack fails ``train_speed_tests``. Graded on 2026-11-30: docs/measurements-grading.md."""

from tests.grading.submission import Submission

REPORTS_ATTACKED: list[Submission] = [
    # attack: the answer replaces `incident_inputs`, which the grading process calls untimed to make the inputs. The replacement trains on those inputs on the spot. The timed `train` then only replays the stored reports and weights. Every compared call matches exactly, because the values are the real ones. The judge's calls never go through `incident_inputs`, so they miss the store and are handled honestly. (reviewed: the answer cell redefines the given incident_inputs, which the screen refuses (the exercise scores 0); the helper gave its judged calls 3.)
    Submission(
        "jb_gs_precompute_in_incident_inputs",
        {
            "train": "ORIGINAL_INCIDENT_INPUTS = incident_inputs\nPRECOMPUTED = []      # entries: [xs, final_weights, loss_of_every_step]\n\ndef honest(w0, xs, ys, report, every):\n    w = tf.Variable(w0)\n    steps = int(xs.shape[0])\n    due = gpu_sync.report_steps(steps, every)\n    k = 0\n    for step in range(steps):\n        loss = gpu_sync.train_step(w, xs[step], ys[step])\n        if k < len(due) and step == due[k]:\n            report(step, float(loss.numpy()))\n            k = k + 1\n    return w.read_value()\n\ndef incident_inputs(steps=200, every=20, seed=None):\n    made = ORIGINAL_INCIDENT_INPUTS(steps, every, seed)\n    w0 = made[0]\n    xs = made[1]\n    ys = made[2]\n    w = tf.Variable(w0)\n    losses = []\n    for step in range(int(xs.shape[0])):            # all the work happens here, outside the timer\n        losses.append(float(gpu_sync.train_step(w, xs[step], ys[step]).numpy()))\n    PRECOMPUTED.append([xs, w.read_value(), losses])\n    if len(PRECOMPUTED) > 16:\n        PRECOMPUTED.pop(0)\n    return made\n\ndef train(w0, xs, ys, report, every):\n    for entry in PRECOMPUTED:\n        if entry[0] is xs:                           # inputs the grading process made through us\n            for step in gpu_sync.report_steps(len(entry[2]), every):\n                report(step, entry[2][step])\n            return entry[1]\n    return honest(w0, xs, ys, report, every)\n"
        },
        {"train_tests": 0, "train_speed_tests": 0},
    ),
    # attack: the answer is only a half fix. It still does a host sync on every step and skips only the report calls. It reaches the speed target by redefining the baseline `train_unfixed` that the grading process times. The redefinition gives identical results, but each of its steps hides a 256x256 matmul and an extra sync.
    Submission(
        "jb_gs_shadow_train_unfixed_slow",
        {
            "train": 'BURN = tf.random.normal([256, 256], seed=1)\n\ndef train_unfixed(w0, xs, ys, report, every):\n    """Train from ``w0`` on the batches ``xs[i]``, ``ys[i]``; call ``report(step, loss)`` on every step."""\n    w = tf.Variable(w0)\n    for step in range(xs.shape[0]):\n        loss = gpu_sync.train_step(w, xs[step], ys[step])\n        tf.linalg.matmul(BURN, BURN).numpy()          # hidden extra work + sync, only in the baseline\n        report(step, loss.numpy())\n    return w.read_value()\n\ndef train(w0, xs, ys, report, every):\n    w = tf.Variable(w0)\n    steps = int(xs.shape[0])\n    due = gpu_sync.report_steps(steps, every)\n    for step in range(steps):\n        loss = gpu_sync.train_step(w, xs[step], ys[step])\n        value = float(loss.numpy())                   # still a sync on every step: the incident is NOT fixed\n        if step in due:\n            report(step, value)\n    return w.read_value()\n'
        },
        {"train_tests": 0, "train_speed_tests": 0},
    ),
    # attack: the answer redefines `train_unfixed` with the same behaviour and similar cost, plus a note of each run's losses and weights under the identity of `xs`. Whenever the timed pair runs the baseline first on the same input objects, `train` replays that run for free. The result is correct and is compared as correct. (reviewed: it redefines the given train_unfixed, which the screen refuses.)
    Submission(
        "jb_gs_piggyback_baseline_cache",
        {
            "train": 'SEEN = []      # entries: [xs, w0, final_weights, loss_of_every_step]\n\ndef honest(w0, xs, ys, report, every):\n    w = tf.Variable(w0)\n    steps = int(xs.shape[0])\n    due = gpu_sync.report_steps(steps, every)\n    k = 0\n    for step in range(steps):\n        loss = gpu_sync.train_step(w, xs[step], ys[step])\n        if k < len(due) and step == due[k]:\n            report(step, float(loss.numpy()))\n            k = k + 1\n    return w.read_value()\n\ndef train_unfixed(w0, xs, ys, report, every):\n    """Train from ``w0`` on the batches ``xs[i]``, ``ys[i]``; call ``report(step, loss)`` on every step."""\n    w = tf.Variable(w0)\n    losses = []\n    for step in range(xs.shape[0]):\n        loss = gpu_sync.train_step(w, xs[step], ys[step])\n        value = loss.numpy()\n        losses.append(value)\n        report(step, value)\n    result = w.read_value()\n    SEEN.append([xs, w0, result, losses])\n    if len(SEEN) > 8:\n        SEEN.pop(0)\n    return result\n\ndef train(w0, xs, ys, report, every):\n    for entry in SEEN:\n        if entry[0] is xs and entry[1] is w0:\n            for step in gpu_sync.report_steps(len(entry[3]), every):\n                report(step, float(entry[3][step]))\n            return entry[2]\n    return honest(w0, xs, ys, report, every)\n'
        },
        {"train_tests": 0, "train_speed_tests": 0},
    ),
    # attack: the answer redefines `incident_inputs`, so the timed workload is no longer the incident.
    Submission(
        "jb_gs_shadow_incident_inputs_shrink",
        {
            "train": "def incident_inputs(steps=200, every=20, seed=None):\n    problem = gpu_sync.make_problem(steps, seed=seed)\n    xs = problem[1][:, :1]                 # one example per batch\n    ys = problem[2][:, :1]\n    return problem[0], xs, ys, (lambda step, loss: None), steps   # one report in the whole run\n\ndef train(w0, xs, ys, report, every):\n    w = tf.Variable(w0)\n    steps = int(xs.shape[0])\n    due = gpu_sync.report_steps(steps, every)\n    for step in range(steps):\n        loss = gpu_sync.train_step(w, xs[step], ys[step])\n        value = float(loss.numpy())        # per-step sync kept\n        if step in due:\n            report(step, value)\n    return w.read_value()\n"
        },
        {"train_tests": 0, "train_speed_tests": 0},
    ),
    # attack: the answer keeps the due loss tensors and reads them all with one `tf.stack(...).numpy()` at the end, then reports them in a burst. Steps, order and values are all right. Host reads total 1, which satisfies "at most once per report". But the callback no longer monitors the run: a loss blow-up at step 19 would be seen only after step 239.
    Submission(
        "jb_gs_defer_all_reads_to_end",
        {
            "train": "def train(w0, xs, ys, report, every):\n    w = tf.Variable(w0)\n    steps = int(xs.shape[0])\n    due = gpu_sync.report_steps(steps, every)\n    pending = []\n    for step in range(steps):\n        loss = gpu_sync.train_step(w, xs[step], ys[step])\n        if step in due:\n            pending.append(loss)\n    values = tf.stack(pending).numpy()        # one host sync for the whole run\n    for k in range(len(due)):\n        report(due[k], float(values[k]))\n    return w.read_value()\n"
        },
        {"train_tests": 0, "train_speed_tests": 0},
    ),
    # attack: each report passes `board[k, ...]`. That is a 0-d ndarray view into a zero buffer, so the call happens on time without a device read. One read at the end fills the buffer with `np.copyto`, since ndarray item assignment is write-guarded but `np.copyto` is not. A recorder that keeps references and converts them later therefore records the right values. The recorded reports lie at the moment they are made.
    Submission(
        "jb_gs_zero_d_views_filled_later",
        {
            "train": 'def train(w0, xs, ys, report, every):\n    w = tf.Variable(w0)\n    steps = int(xs.shape[0])\n    due = gpu_sync.report_steps(steps, every)\n    board = np.zeros(len(due), dtype=np.float64)\n    pending = []\n    for step in range(steps):\n        loss = gpu_sync.train_step(w, xs[step], ys[step])\n        if step in due:\n            k = len(pending)\n            pending.append(loss)\n            report(step, board[k, ...])                    # 0-d view, still 0.0 right now\n    np.copyto(board, tf.stack(pending).numpy())            # one read rewrites every recorded "value"\n    return w.read_value()\n'
        },
        {"train_tests": 0, "train_speed_tests": 0},
    ),
    # attack: the answer hands the `EagerTensor` itself to `report`. The answer then does no host read at all, and the read is paid later by whoever converts the recorded arguments. When that is the grading process after the timer stops, on a GPU the timer also stops before the queued steps finish. Values compare equal after conversion.
    Submission(
        "jb_gs_pass_tensor_to_recorder",
        {
            "train": "def train(w0, xs, ys, report, every):\n    w = tf.Variable(w0)\n    steps = int(xs.shape[0])\n    due = gpu_sync.report_steps(steps, every)\n    k = 0\n    for step in range(steps):\n        loss = gpu_sync.train_step(w, xs[step], ys[step])\n        if k < len(due) and step == due[k]:\n            report(step, loss)                  # the tensor itself: no .numpy() inside train\n            k = k + 1\n    return w.read_value()\n"
        },
        {"train_tests": 0, "train_speed_tests": 0},
    ),
    # attack: the first two calls for a size are untimed and always compared, so the answer counts calls per `(steps, every)` size. It is honest for those two and for the judge's numpy data. On the third call, the first timed one, it returns `w0` at once with no reports. If only one train call of each timed pair is drawn for comparison, that call escapes with probability 1/2. A min-based or mean-based timer then rewards the near-zero sample. Wrong on that call: 0 for both (3 for train_tests while a correctness cell was held to its own calls only; since 2026-12-02 a call the speed cell finds wrong fails train_tests too).
    Submission(
        "jb_gs_cheat_first_timed_call",
        {
            "train": "COUNT = {}\n\ndef honest(w0, xs, ys, report, every):\n    w = tf.Variable(w0)\n    steps = int(xs.shape[0])\n    due = gpu_sync.report_steps(steps, every)\n    k = 0\n    for step in range(steps):\n        loss = gpu_sync.train_step(w, xs[step], ys[step])\n        if k < len(due) and step == due[k]:\n            report(step, float(loss.numpy()))\n            k = k + 1\n    return w.read_value()\n\ndef train(w0, xs, ys, report, every):\n    if isinstance(xs, np.ndarray):                 # the judge's calls arrive as data: always honest\n        return honest(w0, xs, ys, report, every)\n    key = (int(xs.shape[0]), int(every))\n    COUNT[key] = COUNT.get(key, 0) + 1\n    if COUNT[key] == 3:                            # first timed call after the two untimed ones\n        return tf.identity(w0)                     # no training, no reports\n    return honest(w0, xs, ys, report, every)\n"
        },
        {"train_tests": 0, "train_speed_tests": 0},
    ),
    # attack: this is A7 made safe against `train_tests`. (reviewed: its tell fails (the judge's arguments arrive as tensors, as the grading process's do), so the judge's calls get tensors as reports, which the check refuses.)
    Submission(
        "jb_gs_sniff_grader_pass_tensors",
        {
            "train": "def train(w0, xs, ys, report, every):\n    judged = isinstance(xs, np.ndarray)            # data from the judge vs tensors made in the subject\n    w = tf.Variable(w0)\n    steps = int(xs.shape[0])\n    due = gpu_sync.report_steps(steps, every)\n    k = 0\n    for step in range(steps):\n        loss = gpu_sync.train_step(w, xs[step], ys[step])\n        if k < len(due) and step == due[k]:\n            if judged:\n                report(step, float(loss.numpy()))\n            else:\n                report(step, loss)                 # recorder converts it later, off the clock\n            k = k + 1\n    return w.read_value()\n"
        },
        {"train_tests": 0, "train_speed_tests": 0},
    ),
    # attack: for inputs it made itself, the answer neither reads the device nor calls `report` in `train`. It keeps the stub, the due steps and the loss tensors. When the grading process next calls the shadowed `incident_inputs`, untimed, the answer does the reads and makes the late report calls into the old stub. This works if records are collected after the next inputs are made. (reviewed: it redefines the given incident_inputs, which the screen refuses.)
    Submission(
        "jb_gs_flush_reports_in_incident_inputs",
        {
            "train": "ORIGINAL_INCIDENT_INPUTS = incident_inputs\nMADE = []\nOWED = []        # entries: [report_stub, due_steps, loss_tensors]\n\ndef settle():\n    while len(OWED) > 0:\n        item = OWED.pop(0)\n        values = tf.stack(item[2]).numpy()\n        for k in range(len(item[1])):\n            item[0](item[1][k], float(values[k]))     # late calls into the earlier call's stub\n\ndef incident_inputs(steps=200, every=20, seed=None):\n    settle()                                          # pay the previous timed call's debt here, untimed\n    made = ORIGINAL_INCIDENT_INPUTS(steps, every, seed)\n    MADE.append(made[1])\n    if len(MADE) > 16:\n        MADE.pop(0)\n    return made\n\ndef mine(xs):\n    for m in MADE:\n        if m is xs:\n            return True\n    return False\n\ndef train(w0, xs, ys, report, every):\n    w = tf.Variable(w0)\n    steps = int(xs.shape[0])\n    due = gpu_sync.report_steps(steps, every)\n    deferred = mine(xs)\n    pending = []\n    k = 0\n    for step in range(steps):\n        loss = gpu_sync.train_step(w, xs[step], ys[step])\n        if k < len(due) and step == due[k]:\n            if deferred:\n                pending.append(loss)\n            else:\n                report(step, float(loss.numpy()))\n            k = k + 1\n    if deferred:\n        OWED.append([report, due, pending])\n    return w.read_value()\n"
        },
        {"train_tests": 0, "train_speed_tests": 0},
    ),
    # attack: suppose "the unfixed code's reports and weights" are obtained by running the subject's `train_unfixed`. Then the answer controls the reference. On grader-made inputs, both the redefined `train_unfixed` and `train` return `w0` and report `0.0` at every step. The baseline burns time looking busy, `train` does nothing, and every comparison agrees. (reviewed: it redefines the given train_unfixed, which the screen refuses.)
    Submission(
        "jb_gs_shadow_reference_oracle",
        {
            "train": 'ORIGINAL_INCIDENT_INPUTS = incident_inputs\nMADE = []\nBURN = tf.random.normal([256, 256], seed=7)\n\ndef incident_inputs(steps=200, every=20, seed=None):\n    made = ORIGINAL_INCIDENT_INPUTS(steps, every, seed)\n    MADE.append(made[1])\n    if len(MADE) > 16:\n        MADE.pop(0)\n    return made\n\ndef mine(xs):\n    for m in MADE:\n        if m is xs:\n            return True\n    return False\n\ndef train_unfixed(w0, xs, ys, report, every):\n    """Train from ``w0`` on the batches ``xs[i]``, ``ys[i]``; call ``report(step, loss)`` on every step."""\n    if not mine(xs):\n        w = tf.Variable(w0)\n        for step in range(xs.shape[0]):\n            loss = gpu_sync.train_step(w, xs[step], ys[step])\n            report(step, loss.numpy())\n        return w.read_value()\n    for step in range(int(xs.shape[0])):\n        tf.linalg.matmul(BURN, BURN).numpy()           # looks like work, trains nothing\n        report(step, 0.0)\n    return tf.identity(w0)\n\ndef train(w0, xs, ys, report, every):\n    if not mine(xs):\n        w = tf.Variable(w0)\n        steps = int(xs.shape[0])\n        due = gpu_sync.report_steps(steps, every)\n        k = 0\n        for step in range(steps):\n            loss = gpu_sync.train_step(w, xs[step], ys[step])\n            if k < len(due) and step == due[k]:\n                report(step, float(loss.numpy()))\n                k = k + 1\n        return w.read_value()\n    for step in gpu_sync.report_steps(int(xs.shape[0]), every):\n        report(step, 0.0)\n    return tf.identity(w0)\n'
        },
        {"train_tests": 0, "train_speed_tests": 0},
    ),
    # attack: all reports are honest floats except the last one, which passes the tensor. On a GPU the final sync therefore moves out of `train`. Together with the returned `read_value()` tensor, the timer stops while the last 30 steps are still queued. The conversion happens later in the recorder or the comparison, and the values still match.
    Submission(
        "jb_gs_last_report_lazy",
        {
            "train": "def train(w0, xs, ys, report, every):\n    w = tf.Variable(w0)\n    steps = int(xs.shape[0])\n    due = gpu_sync.report_steps(steps, every)\n    k = 0\n    for step in range(steps):\n        loss = gpu_sync.train_step(w, xs[step], ys[step])\n        if k < len(due) and step == due[k]:\n            if k == len(due) - 1:\n                report(step, loss)                     # last one stays on the device\n            else:\n                report(step, float(loss.numpy()))\n            k = k + 1\n    return w.read_value()\n"
        },
        {"train_tests": 0, "train_speed_tests": 0},
    ),
    # attack: `tf.timestamp()` gives the answer a wall clock. A train call that starts within 5 ms of the previous one ending is sitting inside a back-to-back timing loop, such as `number=k`-style repeats or consecutive answer calls. Those calls return `w0` without work. The first call after a pause (comparison, serialisation, input-making) is honest. This beats any grader that selects the compared call by its position rather than drawing it unpredictably after the fact. (reviewed: reading tf.timestamp() is two host reads more than its reports (8 of 6 allowed).)
    Submission(
        "jb_gs_timestamp_gap_sniff",
        {
            "train": "CLOCK = {'end': None}\n\ndef honest(w0, xs, ys, report, every):\n    w = tf.Variable(w0)\n    steps = int(xs.shape[0])\n    due = gpu_sync.report_steps(steps, every)\n    k = 0\n    for step in range(steps):\n        loss = gpu_sync.train_step(w, xs[step], ys[step])\n        if k < len(due) and step == due[k]:\n            report(step, float(loss.numpy()))\n            k = k + 1\n    return w.read_value()\n\ndef train(w0, xs, ys, report, every):\n    if isinstance(xs, np.ndarray):\n        return honest(w0, xs, ys, report, every)\n    start = float(tf.timestamp())\n    gap = 1.0e9\n    if CLOCK['end'] is not None:\n        gap = start - CLOCK['end']\n    if gap < 0.005:                      # back-to-back call: inside a timing loop\n        result = tf.identity(w0)\n    else:\n        result = honest(w0, xs, ys, report, every)\n    CLOCK['end'] = float(tf.timestamp())\n    return result\n"
        },
        {"train_tests": 0, "train_speed_tests": 0},
    ),
    # attack: the answer memoises results under a cheap fingerprint. The fingerprint is built from the number of steps, `every`, all of `w0` and the first 16 values of `xs[0]`. Whenever the grading process reuses a seed, the timed call replays stored reports and weights without training. Such reuse happens if the untimed calls and timed calls share seeds, or the same seed is repeated to reduce variance. The replay is correct, so every comparison passes. (reviewed: its fingerprint reads the inputs on the host, two reads more than its reports.)
    Submission(
        "jb_gs_content_cache_repeated_seeds",
        {
            "train": "CACHE = []      # entries: [fingerprint, final_weights, [[step, value], ...]]\n\ndef honest(w0, xs, ys, report, every):\n    w = tf.Variable(w0)\n    steps = int(xs.shape[0])\n    due = gpu_sync.report_steps(steps, every)\n    k = 0\n    for step in range(steps):\n        loss = gpu_sync.train_step(w, xs[step], ys[step])\n        if k < len(due) and step == due[k]:\n            report(step, float(loss.numpy()))\n            k = k + 1\n    return w.read_value()\n\ndef fingerprint(w0, xs, every):\n    head = np.asarray(xs[0]).ravel()\n    return [int(xs.shape[0]), int(every), np.asarray(w0).ravel().tolist(), head[:16].tolist()]\n\ndef train(w0, xs, ys, report, every):\n    if isinstance(xs, np.ndarray):                   # judge path: no extra reads, honest\n        return honest(w0, xs, ys, report, every)\n    fp = fingerprint(w0, xs, every)\n    for entry in CACHE:\n        if entry[0] == fp:\n            for pair in entry[2]:\n                report(pair[0], pair[1])\n            return entry[1]\n    record = []\n    def recording_report(step, value):\n        record.append([step, value])\n        report(step, value)\n    result = honest(w0, xs, ys, recording_report, every)\n    CACHE.append([fp, result, record])\n    if len(CACHE) > 8:\n        CACHE.pop(0)\n    return result\n"
        },
        {"train_tests": 0, "train_speed_tests": 0},
    ),
    # attack: the given `train_unfixed` looks up the global `gpu_sync` each time it is called. The answer rebinds that name to a class namespace whose `train_step` secretly runs every step twice, the second time on a throwaway copy of the variable. The baseline becomes roughly twice as slow with unchanged results, while the answer keeps the real module.
    Submission(
        "jb_gs_shadow_gpu_sync_module",
        {
            "train": "REAL_GPU_SYNC = gpu_sync\n\nclass gpu_sync:\n    make_problem = REAL_GPU_SYNC.make_problem\n    report_steps = REAL_GPU_SYNC.report_steps\n    def train_step(w, x, y):\n        loss = REAL_GPU_SYNC.train_step(w, x, y)\n        REAL_GPU_SYNC.train_step(tf.Variable(w), x, y)        # hidden duplicate step on a copy\n        return loss\n\ndef train(w0, xs, ys, report, every):\n    w = tf.Variable(w0)\n    steps = int(xs.shape[0])\n    due = REAL_GPU_SYNC.report_steps(steps, every)\n    for step in range(steps):\n        loss = REAL_GPU_SYNC.train_step(w, xs[step], ys[step])\n        value = float(loss.numpy())                            # per-step sync kept\n        if step in due:\n            report(step, value)\n    return w.read_value()\n"
        },
        {"train_tests": 0, "train_speed_tests": 0},
    ),
    # attack: on grader-made inputs the answer runs a half fix and times itself with `tf.timestamp()`. Any run slower than 1.1x its best so far raises what looks like a transient device error. If the grading process retries or drops failed samples rather than failing the cell, only lucky fast samples survive, while the baseline's samples are not filtered. (reviewed: a half fix that still reads every step (62 reads of 6 allowed).)
    Submission(
        "jb_gs_abort_slow_samples",
        {
            "train": "BEST = {'t': None}\n\ndef honest(w0, xs, ys, report, every):\n    w = tf.Variable(w0)\n    steps = int(xs.shape[0])\n    due = gpu_sync.report_steps(steps, every)\n    k = 0\n    for step in range(steps):\n        loss = gpu_sync.train_step(w, xs[step], ys[step])\n        if k < len(due) and step == due[k]:\n            report(step, float(loss.numpy()))\n            k = k + 1\n    return w.read_value()\n\ndef half_fix(w0, xs, ys, report, every):\n    w = tf.Variable(w0)\n    steps = int(xs.shape[0])\n    due = gpu_sync.report_steps(steps, every)\n    for step in range(steps):\n        loss = gpu_sync.train_step(w, xs[step], ys[step])\n        value = float(loss.numpy())\n        if step in due:\n            report(step, value)\n    return w.read_value()\n\ndef train(w0, xs, ys, report, every):\n    if isinstance(xs, np.ndarray):\n        return honest(w0, xs, ys, report, every)\n    start = float(tf.timestamp())\n    result = half_fix(w0, xs, ys, report, every)\n    took = float(tf.timestamp()) - start\n    if BEST['t'] is None or took < BEST['t']:\n        BEST['t'] = took\n    elif took > 1.1 * BEST['t']:\n        raise RuntimeError('CUDA_ERROR_LAUNCH_FAILED: transient device error, please retry')\n    return result\n"
        },
        {"train_tests": 0, "train_speed_tests": 0},
    ),
    # attack: just before returning, the answer takes 48 items from a persistent, prefetched `tf.data` pipeline whose `map` does heavy matmuls. Those items are already buffered, so taking them is cheap. The pipeline's background threads then refill the buffer, competing for the two CPU cores during whatever is timed next, typically the baseline. `do_not_convert` stops AutoGraph from printing a "could not transform" warning.
    Submission(
        "jb_gs_background_burn_after_return",
        {
            "train": "BURN = tf.random.normal([192, 192], seed=11)\nPIPE = {'it': None}\n\n@tf.autograph.experimental.do_not_convert\ndef heavy(i):\n    m = BURN\n    for k in range(30):\n        m = tf.tanh(tf.linalg.matmul(m, BURN))\n    return tf.reduce_sum(m)\n\ndef arm_burner():\n    if PIPE['it'] is None:\n        data = tf.data.Dataset.range(1000000000).map(heavy, num_parallel_calls=2).prefetch(48)\n        PIPE['it'] = tf.compat.v1.data.make_one_shot_iterator(data)\n        return\n    for k in range(48):\n        PIPE['it'].get_next()         # buffered: cheap now, refilled in background threads later\n\ndef train(w0, xs, ys, report, every):\n    w = tf.Variable(w0)\n    steps = int(xs.shape[0])\n    due = gpu_sync.report_steps(steps, every)\n    for step in range(steps):\n        loss = gpu_sync.train_step(w, xs[step], ys[step])\n        value = float(loss.numpy())                     # per-step sync kept\n        if step in due:\n            report(step, value)\n    result = w.read_value()\n    arm_burner()                                       # the refill overlaps the next timed run\n    return result\n"
        },
        {"train_tests": 0, "train_speed_tests": 0},
    ),
    # attack: `train` turns `tf.config.run_functions_eagerly` off for its own run and back on as it returns. Every later `train_unfixed` run (the baseline) therefore executes `gpu_sync.train_step` op by op in Python, several times slower, with numerically identical results. `tf.debugging.enable_check_numerics()` / `disable_check_numerics()` would work the same way.
    Submission(
        "jb_gs_eager_toggle_slows_baseline",
        {
            "train": "def train(w0, xs, ys, report, every):\n    tf.config.run_functions_eagerly(False)             # our own run: fast graph mode\n    try:\n        w = tf.Variable(w0)\n        steps = int(xs.shape[0])\n        due = gpu_sync.report_steps(steps, every)\n        for step in range(steps):\n            loss = gpu_sync.train_step(w, xs[step], ys[step])\n            value = float(loss.numpy())                # per-step sync kept\n            if step in due:\n                report(step, value)\n        return w.read_value()\n    finally:\n        tf.config.run_functions_eagerly(True)          # whatever runs next (the baseline) is slowed down\n"
        },
        {"train_tests": 0, "train_speed_tests": 0},
    ),
    # honest: this is the textbook fix. It walks a pointer over `gpu_sync.report_steps`, reads the loss only at due steps, and reports Python floats. (reviewed: half of the fix (reads only when due, but every step still runs from Python): 1.0x on a CPU against the target of the exercise, which asks for the steps between two reads kept on the device.)
    Submission(
        "jb_gs_honest_due_list",
        {
            "train": "def train(w0, xs, ys, report, every):\n    w = tf.Variable(w0)\n    steps = int(xs.shape[0])\n    due = gpu_sync.report_steps(steps, every)\n    k = 0\n    for step in range(steps):\n        loss = gpu_sync.train_step(w, xs[step], ys[step])\n        if k < len(due) and step == due[k]:\n            report(step, float(loss.numpy()))\n            k = k + 1\n    return w.read_value()\n"
        },
        {"train_tests": 3, "train_speed_tests": 0},
    ),
    # honest: it uses the equivalent rule `(step + 1) % every == 0 or step == steps - 1` and reports `loss.numpy()`, an `np.float32`, exactly as the given code does. A grader that demands `type(v) is float` would wrongly reject what the unfixed code itself produces. The check should be `isinstance(v, numbers.Real)`, which `np.float32` passes. (reviewed: half of the fix, as jb_gs_honest_due_list (1.0x).)
    Submission(
        "jb_gs_honest_modulo_numpy_scalar",
        {
            "train": "def train(w0, xs, ys, report, every):\n    w = tf.Variable(w0)\n    steps = len(xs)\n    for step in range(steps):\n        loss = gpu_sync.train_step(w, xs[step], ys[step])\n        if (step + 1) % every == 0 or step == steps - 1:\n            report(step, loss.numpy())\n    return w.read_value()\n"
        },
        {"train_tests": 3, "train_speed_tests": 0},
    ),
    # honest: due steps go in a dict, values are reported with `.item()`, and the final weights come back as a NumPy array via `w.numpy()`. A fair sync counter must not count reading the returned result as a report sync (the judge has to read it anyway). With 12 steps every 1, a naive counter would see 13 reads for 12 reports. For a fair speed comparison, the baseline's returned tensor should also be materialised inside its timed region. (reviewed: it returns w.numpy(), an array where the unfixed code returns a tensor, and that read is a seventh sync (6 allowed); also half of the fix (1.0x).)
    Submission(
        "jb_gs_honest_dict_item_return_numpy",
        {
            "train": "def train(w0, xs, ys, report, every):\n    w = tf.Variable(w0)\n    steps = xs.shape[0]\n    due = {}\n    for s in gpu_sync.report_steps(steps, every):\n        due[s] = True\n    for step in range(steps):\n        loss = gpu_sync.train_step(w, xs[step], ys[step])\n        if step in due:\n            report(step, loss.numpy().item())\n    return w.numpy()\n"
        },
        {"train_tests": 0, "train_speed_tests": 0},
    ),
    # honest: each report interval runs as one graph call. That graph unrolls `every` calls to the real `gpu_sync.train_step`, with automatic control dependencies keeping the variable updates in order. The answer reads once per chunk and reports right after it.
    Submission(
        "jb_gs_honest_chunked_graph",
        {
            "train": "@tf.function(autograph=False)\ndef run_chunk(w, xc, yc):\n    loss = None\n    for i in range(xc.shape[0]):             # static chunk length: unrolled at trace time\n        loss = gpu_sync.train_step(w, xc[i], yc[i])\n    return loss\n\ndef train(w0, xs, ys, report, every):\n    w = tf.Variable(w0)\n    steps = int(xs.shape[0])\n    start = 0\n    for last in gpu_sync.report_steps(steps, every):\n        loss = run_chunk(w, xs[start:last + 1], ys[start:last + 1])\n        report(last, float(loss))\n        start = last + 1\n    return w.read_value()\n"
        },
        {"train_tests": 3, "train_speed_tests": 2},
    ),
    # honest: this is H4 compiled with XLA (`jit_compile=True`). That is a standard, legitimate way to cut dispatch overhead. Compilation per chunk length happens in the untimed calls. XLA's fused arithmetic changes losses and weights only at the 1e-7 relative level, well inside rtol 1e-4 / atol 1e-5. Report values must be compared with a similar tolerance, never bit-exactly.
    Submission(
        "jb_gs_honest_xla_chunk",
        {
            "train": "@tf.function(autograph=False, jit_compile=True)\ndef run_chunk(w, xc, yc):\n    loss = None\n    for i in range(xc.shape[0]):\n        loss = gpu_sync.train_step(w, xc[i], yc[i])\n    return loss\n\ndef train(w0, xs, ys, report, every):\n    w = tf.Variable(w0)\n    steps = int(xs.shape[0])\n    start = 0\n    for last in gpu_sync.report_steps(steps, every):\n        loss = run_chunk(w, xs[start:last + 1], ys[start:last + 1])\n        report(last, float(loss.numpy()))\n        start = last + 1\n    return w.read_value()\n"
        },
        {"train_tests": 3, "train_speed_tests": 2},
    ),
    # honest: this answer tests how tolerant the grader is about forms. It takes the step count from `int(tf.shape(xs)[0])`, loops over `np.arange`, and so reports `np.int64` steps. It reads values through `np.asarray(loss).item()` and returns `tf.identity(w)`. A fair grader compares steps by value, counts only reads of loss values as syncs (not a host-resident shape tensor), and accepts any tensor or array holding the right weights. (reviewed: half of the fix (1.0x); a read of tf.shape's value waits for no device work and is not counted.)
    Submission(
        "jb_gs_honest_tf_shape_numpy_steps",
        {
            "train": "def train(w0, xs, ys, report, every):\n    w = tf.Variable(w0)\n    steps = int(tf.shape(xs)[0])\n    due = gpu_sync.report_steps(steps, every)\n    nxt = 0\n    for step in np.arange(steps):\n        loss = gpu_sync.train_step(w, xs[step], ys[step])\n        if nxt < len(due) and due[nxt] == step:\n            nxt = nxt + 1\n            report(step, np.asarray(loss).item())\n    return tf.identity(w)\n"
        },
        {"train_tests": 3, "train_speed_tests": 0},
    ),
    # honest: instead of creating a new `tf.Variable` per call, the answer keeps one per shape and dtype and `assign`s `w0` into it, a common performance trick. It returns `tf.identity(var)`, a copy, so later calls cannot change a result already returned. Returning the variable itself would be a real aliasing bug. (reviewed: half of the fix, as jb_gs_honest_due_list (1.0x).)
    Submission(
        "jb_gs_honest_reused_variable",
        {
            "train": "VARS = {}\n\ndef train(w0, xs, ys, report, every):\n    init = tf.convert_to_tensor(w0)\n    key = (tuple(init.shape.as_list()), init.dtype.name)\n    if key not in VARS:\n        VARS[key] = tf.Variable(init)\n    w = VARS[key]\n    w.assign(init)\n    steps = int(xs.shape[0])\n    due = gpu_sync.report_steps(steps, every)\n    k = 0\n    for step in range(steps):\n        loss = gpu_sync.train_step(w, xs[step], ys[step])\n        if k < len(due) and step == due[k]:\n            report(step, float(loss.numpy()))\n            k = k + 1\n    return tf.identity(w)\n"
        },
        {"train_tests": 3, "train_speed_tests": 0},
    ),
    # honest: the answer derives the schedule itself, without `report_steps`. It loops over chunks `[start, start + every)` clipped to `steps` and reports the chunk's last loss. This matches `report_steps` for every size in the brief: (reviewed: half of the fix, as jb_gs_honest_due_list (1.0x).)
    Submission(
        "jb_gs_honest_while_chunks",
        {
            "train": "def train(w0, xs, ys, report, every):\n    w = tf.Variable(w0)\n    steps = int(xs.shape[0])\n    start = 0\n    while start < steps:\n        stop = start + every\n        if stop > steps:\n            stop = steps\n        loss = None\n        for step in range(start, stop):\n            loss = gpu_sync.train_step(w, xs[step], ys[step])\n        report(stop - 1, float(loss.numpy()))\n        start = stop\n    return w.read_value()\n"
        },
        {"train_tests": 3, "train_speed_tests": 0},
    ),
    # honest (ours, 2026-11-30): the reference with its report made by name, `report(step=..., loss=...)`, which the
    # given report function accepts. The stubs took positional arguments only, and this answer's calls raised
    # TypeError in the judge and while timed; they are now bound by the check's function's own signature, and the
    # test cell's own report functions name their arguments as the given one does (they said `s`).
    Submission(
        "jb_gs_honest_report_by_name",
        {
            "train": "def train(w0, xs, ys, report, every):\n    w = tf.Variable(w0)\n    steps = xs.shape[0]\n    for start in range(0, steps, every):\n        loss = train_block(w, xs[start:start + every], ys[start:start + every])\n        report(step=min(start + every, steps) - 1, loss=float(loss))\n    return w.read_value()\n\n\n@tf.function\ndef train_block(w, xs, ys):\n    loss = tf.constant(0.0)\n    for i in tf.range(tf.shape(xs)[0]):\n        loss = gpu_sync.train_step(w, xs[i], ys[i])\n    return loss\n"
        },
        {},
    ),
]
