"""Chapter 5's count of training steps attacked by an outsider (issue 47, 2026-11-30, second round): answers that reach the course's step counter, or train without it, through routes the first round did not close (unlisted graph and tape attributes, concrete and atomic functions, raw function calls, pruning, checkpoints, registries, patched reads), and honest loops that must keep their points."""

from tests.grading.submission import Submission

REPORTS_COUNTER_ATTACKED: list[Submission] = [
    # attack: traces (never runs) a tf.function that calls train_step, keeps its FuncGraph from
    # tf.compat.v1.get_default_graph(), and reads `variable_captures` (a FuncGraph property that is
    # not on the blocked list; it returns the graph's variables, the counter among them). It then
    # trains the whole run in one graph, reads all losses once, rewinds the counter by `steps` with
    # assign_sub and replays it one block before each report: every report sees runs == step + 1
    # although training ended before the first report. Reports kept for the end: 0.
    Submission(
        "rc_graph_variable_captures",
        {
            "train": """GRAPHS = []


@tf.function
def probe(w, x, y):
    GRAPHS.append(tf.compat.v1.get_default_graph())
    return gpu_sync.train_step(w, x, y)


@tf.function
def train_all(w, xs, ys, due):
    losses = tf.TensorArray(tf.float64, size=tf.shape(xs)[0])
    for i in tf.range(tf.shape(xs)[0]):
        losses = losses.write(i, tf.cast(gpu_sync.train_step(w, xs[i], ys[i]), tf.float64))
    return tf.gather(losses.stack(), due)


def due_steps(steps, every):
    due = list(range(every - 1, steps, every))
    if not due or due[-1] != steps - 1:
        due.append(steps - 1)
    return due


def train(w0, xs, ys, report, every):
    steps = xs.shape[0]
    due = due_steps(steps, every)
    probe.get_concrete_function(tf.Variable(w0), xs[0], ys[0])    # traced only: no step runs
    counter = [v for v in GRAPHS[-1].variable_captures if v.dtype == tf.int64][0]
    w = tf.Variable(w0)
    values = train_all(w, xs, ys, tf.constant(due)).numpy()         # the whole run, one read
    counter.assign_sub(steps)                                         # rewind the course's count
    done = 0
    for k in range(len(due)):
        counter.assign_add(due[k] + 1 - done)                         # replay it, one block per report
        done = due[k] + 1
        report(due[k], values[k])
    return w.read_value()
"""
        },
        {"train_tests": 0, "train_speed_tests": 0},
    ),
    # attack: runs train_step once on a throwaway copy under tf.GradientTape; a tf.function call
    # under a tape marks every trainable variable its graph captured as accessed, so
    # tape.watched_variables() (public, not blocked) hands back the course's int64 counter. After
    # training everything in one graph it rewinds and replays the count with
    # tf.raw_ops.AssignAddVariableOp on counter.handle (no assign method is called), taking back
    # the probe's extra run too. Reports kept for the end: 0.
    Submission(
        "rc_tape_watched_counter",
        {
            "train": """@tf.function
def train_all(w, xs, ys, due):
    losses = tf.TensorArray(tf.float64, size=tf.shape(xs)[0])
    for i in tf.range(tf.shape(xs)[0]):
        losses = losses.write(i, tf.cast(gpu_sync.train_step(w, xs[i], ys[i]), tf.float64))
    return tf.gather(losses.stack(), due)


def due_steps(steps, every):
    due = list(range(every - 1, steps, every))
    if not due or due[-1] != steps - 1:
        due.append(steps - 1)
    return due


def bump(counter, amount):
    tf.raw_ops.AssignAddVariableOp(resource=counter.handle, value=tf.constant(amount, tf.int64))


def train(w0, xs, ys, report, every):
    steps = xs.shape[0]
    due = due_steps(steps, every)
    scratch = tf.Variable(w0)
    with tf.GradientTape() as tape:
        gpu_sync.train_step(scratch, xs[0], ys[0])                   # one counted run, thrown away
    counter = [v for v in tape.watched_variables() if v.dtype == tf.int64][0]
    w = tf.Variable(w0)
    values = train_all(w, xs, ys, tf.constant(due)).numpy()
    bump(counter, -(steps + 1))                                       # forget the probe and the run
    done = 0
    for k in range(len(due)):
        bump(counter, due[k] + 1 - done)
        done = due[k] + 1
        report(due[k], values[k])
    return w.read_value()
"""
        },
        {"train_tests": 0, "train_speed_tests": 0},
    ),
    # attack: gets the counter from the graph of a tf.data map function (traced by
    # Dataset.map, never iterated, so nothing runs) via `variable_captures`, then never calls a
    # method of the counter that writes: it snapshots the count with tf.train.Checkpoint into the
    # in-memory ram:// file system after each block (blocks queued back to back, no read), reads
    # all losses once at the end, and restores the snapshot of block k just before report k, so
    # each report sees the count that was true when its block finished. Reports kept for the end: 0.
    Submission(
        "rc_checkpoint_ram_rewind",
        {
            "train": """GRAPHS = []


@tf.function
def train_block(w, xs, ys):
    loss = tf.constant(0.0)
    for i in tf.range(tf.shape(xs)[0]):
        loss = gpu_sync.train_step(w, xs[i], ys[i])
    return loss


def due_steps(steps, every):
    due = list(range(every - 1, steps, every))
    if not due or due[-1] != steps - 1:
        due.append(steps - 1)
    return due


def find_counter(w0, xs, ys):
    scratch = tf.Variable(w0)

    def probe(i):
        GRAPHS.append(tf.compat.v1.get_default_graph())
        return gpu_sync.train_step(scratch, xs[0], ys[0])

    tf.data.Dataset.range(1).map(probe)                              # traced by tf.data, never run
    return [v for v in GRAPHS[-1].variable_captures if v.dtype == tf.int64][0]


def train(w0, xs, ys, report, every):
    steps = xs.shape[0]
    due = due_steps(steps, every)
    ckpt = tf.train.Checkpoint(count=find_counter(w0, xs, ys))
    w = tf.Variable(w0)
    losses = []
    start = 0
    for k in range(len(due)):
        losses.append(train_block(w, xs[start:due[k] + 1], ys[start:due[k] + 1]))
        start = due[k] + 1
        ckpt.write("ram://rc_counter/" + str(k))                     # the count as it is now
    values = tf.stack(losses).numpy()                                 # one read, after the run
    for k in range(len(due)):
        ckpt.read("ram://rc_counter/" + str(k))                      # the count as it was then
        report(due[k], values[k])
    return w.read_value()
"""
        },
        {"train_tests": 0, "train_speed_tests": 0},
    ),
    # attack: traces its own one-step wrapper around train_step, reads the wrapper's capture
    # signature from `function_def` (not blocked) and swaps every captured resource for a
    # throwaway int64 variable with ConcreteFunction.set_external_captures (a setter, not a read
    # of `captured_inputs`). The real weights are trained by train_step's own body while the
    # course's counter stays still; the counted runs are then made on a throwaway copy, `every`
    # before each report. Not "each step is gpu_sync.train_step, run once": 0.
    Submission(
        "rc_set_external_captures",
        {
            "train": """@tf.function
def one_step(w, x, y):
    return gpu_sync.train_step(w, x, y)


def due_steps(steps, every):
    due = list(range(every - 1, steps, every))
    if not due or due[-1] != steps - 1:
        due.append(steps - 1)
    return due


def substitutes(arg_defs, fake):
    out = []
    for arg in arg_defs:
        dtype = tf.as_dtype(arg.type)
        if dtype == tf.resource:
            out.append(fake.handle)
        else:
            out.append(tf.constant(gpu_sync.LEARNING_RATE, dtype))
    return out


def train(w0, xs, ys, report, every):
    steps = xs.shape[0]
    due = due_steps(steps, every)
    w = tf.Variable(w0)
    step = one_step.get_concrete_function(w, xs[0], ys[0])
    fake = tf.Variable(tf.constant(0, tf.int64))
    step.set_external_captures(substitutes(step.function_def.signature.input_arg[3:], fake))
    losses = []
    for i in range(steps):
        loss = step(w, xs[i], ys[i])                                  # counts into `fake`
        if i in due:
            losses.append(loss)
    values = tf.stack(losses).numpy()
    scratch = tf.Variable(w0)
    done = 0
    for k in range(len(due)):
        for i in range(done, due[k] + 1):
            gpu_sync.train_step(scratch, xs[i], ys[i])               # the counted runs, for show
        done = due[k] + 1
        report(due[k], values[k])
    return w.read_value()
"""
        },
        {"train_tests": 0, "train_speed_tests": 0},
    ),
    # attack: walks from its wrapper's ConcreteFunction to `inference_fn.children` (AtomicFunction
    # objects, not on the blocked list) to reach the body that train_step runs, and calls it with
    # AtomicFunction.call_flat, passing the real weights and a throwaway int64 variable where the
    # course's counter goes. The real run is trained uncounted; the counted runs are made on a
    # throwaway copy just before each report. Not train_step run once per step: 0.
    Submission(
        "rc_atomic_children_call_flat",
        {
            "train": """@tf.function
def one_step(w, x, y):
    return gpu_sync.train_step(w, x, y)


def due_steps(steps, every):
    due = list(range(every - 1, steps, every))
    if not due or due[-1] != steps - 1:
        due.append(steps - 1)
    return due


def substitutes(arg_defs, fake):
    out = []
    for arg in arg_defs:
        dtype = tf.as_dtype(arg.type)
        if dtype == tf.resource:
            out.append(fake.handle)
        else:
            out.append(tf.constant(gpu_sync.LEARNING_RATE, dtype))
    return out


def train(w0, xs, ys, report, every):
    steps = xs.shape[0]
    due = due_steps(steps, every)
    scratch = tf.Variable(w0)
    wrapper = one_step.get_concrete_function(scratch, xs[0], ys[0])
    body = [f for f in wrapper.inference_fn.children
            if len(f.cached_definition.signature.input_arg) > 3][0]
    fake = tf.Variable(tf.constant(0, tf.int64))
    extra = substitutes(body.cached_definition.signature.input_arg[3:], fake)
    w = tf.Variable(w0)
    losses = []
    for i in range(steps):
        loss = body.call_flat(w.handle, xs[i], ys[i], *extra)[0]     # train_step's body, uncounted
        if i in due:
            losses.append(loss)
    values = tf.stack(losses).numpy()
    done = 0
    for k in range(len(due)):
        for i in range(done, due[k] + 1):
            gpu_sync.train_step(scratch, xs[i], ys[i])
        done = due[k] + 1
        report(due[k], values[k])
    return w.read_value()
"""
        },
        {"train_tests": 0, "train_speed_tests": 0},
    ),
    # attack: reads the name, input and output types of the call op that train_step adds, from its
    # wrapper's `function_def` node_def (a proto, not blocked), then calls that function by name
    # with tf.raw_ops.StatefulPartitionedCall inside its own graph loop, feeding a throwaway int64
    # variable in the counter's slot. The whole run trains fast and uncounted; the counted runs
    # are made on a throwaway copy between the reports. Not train_step run once per step: 0.
    Submission(
        "rc_raw_call_by_name",
        {
            "train": """CALL = {}


@tf.function
def one_step(w, x, y):
    return gpu_sync.train_step(w, x, y)


@tf.function
def uncounted_all(w, xs, ys, fake, due):
    losses = tf.TensorArray(tf.float64, size=tf.shape(xs)[0])
    for i in tf.range(tf.shape(xs)[0]):
        args = [w.handle, xs[i], ys[i]]
        for dtype in CALL["tin"][3:]:
            if dtype == tf.resource:
                args.append(fake.handle)
            else:
                args.append(tf.constant(gpu_sync.LEARNING_RATE, dtype))
        out = tf.raw_ops.StatefulPartitionedCall(args=args, Tout=CALL["tout"], f=CALL["f"])
        losses = losses.write(i, tf.cast(out[0], tf.float64))
    return tf.gather(losses.stack(), due)


def due_steps(steps, every):
    due = list(range(every - 1, steps, every))
    if not due or due[-1] != steps - 1:
        due.append(steps - 1)
    return due


def train(w0, xs, ys, report, every):
    steps = xs.shape[0]
    due = due_steps(steps, every)
    scratch = tf.Variable(w0)
    wrapper = one_step.get_concrete_function(scratch, xs[0], ys[0])
    node = [n for n in wrapper.function_def.node_def
            if n.op in ("StatefulPartitionedCall", "PartitionedCall")][0]
    CALL["f"] = node.attr["f"].func.name
    CALL["tin"] = [tf.as_dtype(t) for t in node.attr["Tin"].list.type]
    CALL["tout"] = [tf.as_dtype(t) for t in node.attr["Tout"].list.type]
    fake = tf.Variable(tf.constant(0, tf.int64))
    w = tf.Variable(w0)
    values = uncounted_all(w, xs, ys, fake, tf.constant(due)).numpy()
    done = 0
    for k in range(len(due)):
        for i in range(done, due[k] + 1):
            gpu_sync.train_step(scratch, xs[i], ys[i])
        done = due[k] + 1
        report(due[k], values[k])
    return w.read_value()
"""
        },
        {"train_tests": 0, "train_speed_tests": 0},
    ),
    # attack: wraps train_step with tf.compat.v1.wrap_function (no automatic control dependencies)
    # and prunes the graph to the loss, fed from the placeholders it saw while tracing: any counter
    # op that the loss does not depend on is cut away, so the real run trains without counting;
    # the counted runs are then made on a throwaway copy between the reports. Not train_step run
    # once per step, reports kept for the end: 0.
    Submission(
        "rc_wrap_function_prune",
        {
            "train": """SEEN = {}


def due_steps(steps, every):
    due = list(range(every - 1, steps, every))
    if not due or due[-1] != steps - 1:
        due.append(steps - 1)
    return due


def train(w0, xs, ys, report, every):
    steps = xs.shape[0]
    due = due_steps(steps, every)
    w = tf.Variable(w0)

    def body(x, y):
        loss = gpu_sync.train_step(w, x, y)
        SEEN["x"] = x
        SEEN["y"] = y
        SEEN["loss"] = loss
        return loss

    wrapped = tf.compat.v1.wrap_function(body, [tf.TensorSpec(xs.shape[1:], xs.dtype),
                                                tf.TensorSpec(ys.shape[1:], ys.dtype)])
    step = wrapped.prune(feeds=[SEEN["x"], SEEN["y"]], fetches=SEEN["loss"])
    losses = []
    for i in range(steps):
        loss = step(xs[i], ys[i])
        if i in due:
            losses.append(loss)
    values = tf.stack(losses).numpy()
    scratch = tf.Variable(w0)
    done = 0
    for k in range(len(due)):
        for i in range(done, due[k] + 1):
            gpu_sync.train_step(scratch, xs[i], ys[i])
        done = due[k] + 1
        report(due[k], values[k])
    return w.read_value()
"""
        },
        {"train_tests": 0, "train_speed_tests": 0},
    ),
    # attack: looks the counter up in TensorFlow's global registries, eagerly and inside a traced
    # graph that calls train_step: tf.compat.v1 variable collections (get_collection is a module
    # function, not the blocked Graph method), the v1 global step and tf.summary's default step.
    # With it, it trains everything first and replays the count with tf.compat.v1.assign_sub /
    # assign_add before each report. Reports kept for the end: 0.
    Submission(
        "rc_registry_lookups",
        {
            "train": """FOUND = []


def lookups():
    found = []
    for getter in (tf.compat.v1.global_variables, tf.compat.v1.local_variables,
                   tf.compat.v1.trainable_variables, tf.compat.v1.model_variables,
                   tf.compat.v1.moving_average_variables):
        try:
            found.extend(getter())
        except Exception:
            pass
    for key in (tf.compat.v1.GraphKeys.GLOBAL_VARIABLES, tf.compat.v1.GraphKeys.LOCAL_VARIABLES,
                tf.compat.v1.GraphKeys.GLOBAL_STEP, tf.compat.v1.GraphKeys.METRIC_VARIABLES):
        try:
            found.extend(tf.compat.v1.get_collection(key))
        except Exception:
            pass
    for getter in (tf.compat.v1.train.get_global_step, tf.summary.experimental.get_step):
        try:
            found.append(getter())
        except Exception:
            pass
    return found


@tf.function
def probe(w, x, y):
    loss = gpu_sync.train_step(w, x, y)
    FOUND.extend(lookups())
    return loss


@tf.function
def train_all(w, xs, ys, due):
    losses = tf.TensorArray(tf.float64, size=tf.shape(xs)[0])
    for i in tf.range(tf.shape(xs)[0]):
        losses = losses.write(i, tf.cast(gpu_sync.train_step(w, xs[i], ys[i]), tf.float64))
    return tf.gather(losses.stack(), due)


def due_steps(steps, every):
    due = list(range(every - 1, steps, every))
    if not due or due[-1] != steps - 1:
        due.append(steps - 1)
    return due


def train(w0, xs, ys, report, every):
    steps = xs.shape[0]
    due = due_steps(steps, every)
    FOUND.extend(lookups())
    probe.get_concrete_function(tf.Variable(w0), xs[0], ys[0])      # traced only
    counter = [v for v in FOUND if isinstance(v, tf.Variable) and v.dtype == tf.int64][0]
    w = tf.Variable(w0)
    values = train_all(w, xs, ys, tf.constant(due)).numpy()
    tf.compat.v1.assign_sub(counter, steps)
    done = 0
    for k in range(len(due)):
        tf.compat.v1.assign_add(counter, due[k] + 1 - done)
        done = due[k] + 1
        report(due[k], values[k])
    return w.read_value()
"""
        },
        {"train_tests": 0, "train_speed_tests": 0},
    ),
    # attack: scans the public attributes of the course's objects it was given (gpu_sync,
    # grading, train_step, steps_run, train_steps), one level deep, for an int64 tf.Variable or a
    # tf.Module holding one (Module.variables is not blocked), then trains everything first and
    # rewinds the count with counter.assign(counter - steps), replaying it block by block before
    # the reports. Reports kept for the end: 0.
    Submission(
        "rc_scan_course_objects",
        {
            "train": """@tf.function
def train_all(w, xs, ys, due):
    losses = tf.TensorArray(tf.float64, size=tf.shape(xs)[0])
    for i in tf.range(tf.shape(xs)[0]):
        losses = losses.write(i, tf.cast(gpu_sync.train_step(w, xs[i], ys[i]), tf.float64))
    return tf.gather(losses.stack(), due)


def due_steps(steps, every):
    due = list(range(every - 1, steps, every))
    if not due or due[-1] != steps - 1:
        due.append(steps - 1)
    return due


def scan(root, depth, found):
    for name in dir(root):
        if name.startswith("_"):
            continue
        try:
            value = getattr(root, name)
        except Exception:
            continue
        if isinstance(value, tf.Variable):
            found.append(value)
        elif isinstance(value, tf.Module):
            found.extend(value.variables)
        elif depth > 0 and not isinstance(value, (int, float, str, bytes, type(gpu_sync))):
            scan(value, depth - 1, found)
    return found


def train(w0, xs, ys, report, every):
    steps = xs.shape[0]
    due = due_steps(steps, every)
    found = []
    for root in (gpu_sync, grading, gpu_sync.train_step, gpu_sync.steps_run, gpu_sync.train_steps):
        scan(root, 1, found)
    counter = [v for v in found if v.dtype == tf.int64][0]
    w = tf.Variable(w0)
    values = train_all(w, xs, ys, tf.constant(due)).numpy()
    counter.assign(counter - steps)
    done = 0
    for k in range(len(due)):
        counter.assign(counter + (due[k] + 1 - done))
        done = due[k] + 1
        report(due[k], values[k])
    return w.read_value()
"""
        },
        {"train_tests": 0, "train_speed_tests": 0},
    ),
    # attack: leaves the counter alone and makes its reads lie instead: it replaces, on
    # TensorFlow's own classes (the variable class and the eager tensor class, neither a module
    # nor a course object), the public read methods numpy / read_value / value by wrappers that
    # subtract a lag from int64 values. It trains everything first, then sets the lag to
    # steps - (s + 1) before the report of step s and to 0 after the last one, so the subject's
    # read of the counter at each report shows a run that is still going. Reports kept for the
    # end (and the reads of the grader falsified): 0.
    Submission(
        "rc_patch_variable_reads",
        {
            "train": """LAG = [0]


@tf.function
def train_all(w, xs, ys, due):
    losses = tf.TensorArray(tf.float64, size=tf.shape(xs)[0])
    for i in tf.range(tf.shape(xs)[0]):
        losses = losses.write(i, tf.cast(gpu_sync.train_step(w, xs[i], ys[i]), tf.float64))
    return tf.gather(losses.stack(), due)


def due_steps(steps, every):
    due = list(range(every - 1, steps, every))
    if not due or due[-1] != steps - 1:
        due.append(steps - 1)
    return due


def lying(original):
    def read(self, *args, **kwargs):
        value = original(self, *args, **kwargs)
        if LAG[0] and self.dtype == tf.int64:
            return value - LAG[0]
        return value
    return read


def train(w0, xs, ys, report, every):
    steps = xs.shape[0]
    due = due_steps(steps, every)
    w = tf.Variable(w0)
    values = train_all(w, xs, ys, tf.constant(due)).numpy()
    patched = []
    for cls, names in ((type(w), ("numpy", "read_value", "value")),
                       (type(tf.constant(0, tf.int64)), ("numpy",))):
        for name in names:
            original = getattr(cls, name)
            patched.append((cls, name, original))
            setattr(cls, name, lying(original))
    for k in range(len(due)):
        LAG[0] = steps - (due[k] + 1)
        report(due[k], values[k])
    LAG[0] = 0
    for cls, name, original in patched:
        setattr(cls, name, original)
    return w.read_value()
"""
        },
        {"train_tests": 0, "train_speed_tests": 0},
    ),
    # attack: trains the real run with gpu_sync.train_steps, one call per block, all blocks queued
    # before any read (if train_steps does not go through train_step, or counts once per call,
    # the counter barely moves), reads the block losses once, and makes the counted train_step
    # runs on a throwaway copy between the reports. Not train_step run once per step, reports
    # kept for the end: 0.
    Submission(
        "rc_train_steps_uncounted",
        {
            "train": """def due_steps(steps, every):
    due = list(range(every - 1, steps, every))
    if not due or due[-1] != steps - 1:
        due.append(steps - 1)
    return due


def train(w0, xs, ys, report, every):
    steps = xs.shape[0]
    due = due_steps(steps, every)
    w = tf.Variable(w0)
    losses = []
    start = 0
    for s in due:
        out = gpu_sync.train_steps(w, xs[start:s + 1], ys[start:s + 1])
        losses.append(tf.reshape(out, [-1])[-1])                    # the block's last loss
        start = s + 1
    values = tf.stack(losses).numpy()
    scratch = tf.Variable(w0)
    done = 0
    for k in range(len(due)):
        for i in range(done, due[k] + 1):
            gpu_sync.train_step(scratch, xs[i], ys[i])
        done = due[k] + 1
        report(due[k], values[k])
    return w.read_value()
"""
        },
        {"train_tests": 0, "train_speed_tests": 0},
    ),
    # attack: trains the real weights uncounted through its wrapper's `inference_fn.call_flat`
    # (the wrapper's own AtomicFunction, with a throwaway int64 variable in the captured counter's
    # slot), then pays the count with real train_step runs on the REAL weights fed all-zero
    # batches (for a linear least-squares step the gradient is zero, so the weights do not move):
    # a check that the counted runs touched the returned variable is satisfied. Reports kept for
    # the end, the steps counted are not the steps trained: 0.
    Submission(
        "rc_wrapper_call_flat_zero_batches",
        {
            "train": """@tf.function
def one_step(w, x, y):
    return gpu_sync.train_step(w, x, y)


def due_steps(steps, every):
    due = list(range(every - 1, steps, every))
    if not due or due[-1] != steps - 1:
        due.append(steps - 1)
    return due


def train(w0, xs, ys, report, every):
    steps = xs.shape[0]
    due = due_steps(steps, every)
    w = tf.Variable(w0)
    wrapper = one_step.get_concrete_function(w, xs[0], ys[0])
    arg_defs = wrapper.inference_fn.cached_definition.signature.input_arg
    fake = tf.Variable(tf.constant(0, tf.int64))
    extra = []
    for arg in arg_defs[3:]:
        dtype = tf.as_dtype(arg.type)
        extra.append(fake.handle if dtype == tf.resource else tf.constant(gpu_sync.LEARNING_RATE, dtype))
    losses = []
    for i in range(steps):
        loss = wrapper.inference_fn.call_flat(w.handle, xs[i], ys[i], *extra)[0]
        if i in due:
            losses.append(loss)
    values = tf.stack(losses).numpy()
    zero_x = tf.zeros_like(xs[0])
    done = 0
    for k in range(len(due)):
        for i in range(done, due[k] + 1):
            gpu_sync.train_step(w, zero_x, ys[i])                    # counted, moves nothing
        done = due[k] + 1
        report(due[k], values[k])
    return w.read_value()
"""
        },
        {"train_tests": 0, "train_speed_tests": 0},
    ),
    # attack: all in ONE graph, so it looks like the fast in-graph answer: a GradientTape inside
    # the tf.function records the training loop, tape.watched_variables() (called while tracing)
    # gives the counter, and after the loop the graph itself rewinds the count with
    # tf.raw_ops.AssignAddVariableOp and, before each report, adds the block back and calls the
    # report through tf.py_function (one .numpy() per report). Every report comes after the whole
    # run: 0.
    Submission(
        "rc_graph_tape_rewind_py_function",
        {
            "train": """REPORT = {}


def due_steps(steps, every):
    due = list(range(every - 1, steps, every))
    if not due or due[-1] != steps - 1:
        due.append(steps - 1)
    return due


def sender(step):
    def send(value):
        REPORT["fn"](step, value.numpy())
        return []
    return send


@tf.function
def train_and_report(w, xs, ys, due):
    steps = tf.shape(xs)[0]
    losses = tf.TensorArray(tf.float64, size=steps)
    with tf.GradientTape() as tape:
        for i in tf.range(steps):
            losses = losses.write(i, tf.cast(gpu_sync.train_step(w, xs[i], ys[i]), tf.float64))
    counter = [v for v in tape.watched_variables() if v.dtype == tf.int64][0]
    values = losses.stack()
    tf.raw_ops.AssignAddVariableOp(resource=counter.handle, value=-tf.cast(steps, tf.int64))
    done = 0
    for s in due:
        tf.raw_ops.AssignAddVariableOp(resource=counter.handle,
                                       value=tf.constant(s + 1 - done, tf.int64))
        done = s + 1
        tf.py_function(sender(s), [values[s]], [])
    return tf.constant(0)


def train(w0, xs, ys, report, every):
    REPORT["fn"] = report
    w = tf.Variable(w0)
    train_and_report(w, xs, ys, due_steps(xs.shape[0], every))
    return w.read_value()
"""
        },
        {"train_tests": 0, "train_speed_tests": 0},
    ),
    # honest: the reference's shape: one tf.function per block of `every` steps, train_step once
    # per step inside it, one float() of the block's last loss per report (full points: the steps
    # between two reads run in a graph)
    Submission(
        "rc_honest_blocks_float",
        {
            "train": """def train(w0, xs, ys, report, every):
    w = tf.Variable(w0)
    steps = xs.shape[0]
    for start in range(0, steps, every):
        stop = min(start + every, steps)
        loss = train_block(w, xs[start:stop], ys[start:stop])
        report(stop - 1, float(loss))
    return w.read_value()


@tf.function
def train_block(w, xs, ys):
    loss = tf.constant(0.0)
    for i in tf.range(tf.shape(xs)[0]):
        loss = gpu_sync.train_step(w, xs[i], ys[i])
    return loss
"""
        },
        {},
    ),
    # honest: pipelined by one block, as the rule allows: it starts block k+1 before it reads block
    # k's last loss, so each report comes at most one block late (runs <= s + every + 1), and the
    # last block is reported right after the loop (full points: graph blocks, one read per report)
    Submission(
        "rc_honest_pipelined",
        {
            "train": """def train(w0, xs, ys, report, every):
    w = tf.Variable(w0)
    steps = xs.shape[0]
    pending = None
    for start in range(0, steps, every):
        stop = min(start + every, steps)
        loss = train_block(w, xs[start:stop], ys[start:stop])
        if pending is not None:
            report(pending[0], pending[1].numpy())
        pending = (stop - 1, loss)
    report(pending[0], pending[1].numpy())
    return w.read_value()


@tf.function
def train_block(w, xs, ys):
    loss = tf.constant(0.0)
    for i in tf.range(tf.shape(xs)[0]):
        loss = gpu_sync.train_step(w, xs[i], ys[i])
    return loss
"""
        },
        {},
    ),
    # honest: an explicit tf.while_loop per block, the loss read with np.asarray once per block
    # (full points: graph blocks, one read per report)
    Submission(
        "rc_honest_while_loop_asarray",
        {
            "train": """@tf.function
def train_block(w, xs, ys):
    n = tf.shape(xs)[0]

    def body(i, loss):
        return i + 1, gpu_sync.train_step(w, xs[i], ys[i])

    return tf.while_loop(lambda i, loss: i < n, body, [tf.constant(0), tf.zeros([], xs.dtype)])[1]


def train(w0, xs, ys, report, every):
    w = tf.Variable(w0)
    steps = xs.shape[0]
    start = 0
    while start < steps:
        stop = min(start + every, steps)
        report(stop - 1, np.asarray(train_block(w, xs[start:stop], ys[start:stop])))
        start = stop
    return w.read_value()
"""
        },
        {},
    ),
    # honest: one graph for the whole run that reports from inside the loop through tf.py_function
    # at the end of each block (one .numpy() per report, made while the run goes on) (full points:
    # the steps run in a graph, only the reports leave it)
    Submission(
        "rc_honest_py_function_in_loop",
        {
            "train": """REPORT = {}


def send(pair):
    step_and_loss = pair.numpy()                                     # the one read of this report
    REPORT["fn"](int(step_and_loss[0]), step_and_loss[1])
    return []


@tf.function
def train_all(w, xs, ys, every):
    steps = tf.shape(xs)[0]
    for i in tf.range(steps):
        loss = gpu_sync.train_step(w, xs[i], ys[i])
        if (i + 1) % every == 0 or i == steps - 1:
            tf.py_function(send, [tf.stack([tf.cast(i, tf.float64), tf.cast(loss, tf.float64)])], [])
    return tf.constant(0)


def train(w0, xs, ys, report, every):
    REPORT["fn"] = report
    w = tf.Variable(w0)
    train_all(w, xs, ys, tf.constant(every))
    return w.read_value()
"""
        },
        {},
    ),
    # honest: eager steps, one .numpy() at the end of each block (train_tests in full; no speed
    # points: the steps between two reads run eagerly, one dispatch each)
    Submission(
        "rc_honest_eager_blocks",
        {
            "train": """def train(w0, xs, ys, report, every):
    w = tf.Variable(w0)
    steps = xs.shape[0]
    for step in range(steps):
        loss = gpu_sync.train_step(w, xs[step], ys[step])
        if (step + 1) % every == 0 or step == steps - 1:
            report(step, loss.numpy())
    return w.read_value()
"""
        },
        {"train_speed_tests": 0},
    ),
]
