"""Chapter 5's rule "report while it trains" on the speed check's timed calls, attacked by an outsider: a helper in a
fresh context, told how the exercise is graded but not shown the grader's code. It read the learner's notebook, the
course library the notebook imports as ``gpu_sync``, the case format, and the earlier outsiders' cases
(reports_on_time_attacked, work_tally_attacked), and was told in words what train_tests checks (its hidden calls, the
marks, the run count and the sums, the host reads, each report's runs against about one block) and what the speed check
checks (``assert_speedup`` with ``calls_back=gpu_sync.reports_due`` and ``work=gpu_sync.work_done``: on every compared
timed call the runs and the weighted sum of what they were given, and, new, the runs queued at each call of the report
function, read without a wait; the k-th report of the answer may not have been made with more runs queued than
train_unfixed had at its (k+1)-th due report).

The attacks do not repeat the earlier rounds (calls told apart by their order, placeholder or duplicate reports,
infinite or NaN steps, keyword reports, counters rewound, decoy runs on a copy, reports after the loop from a graph, a
prefetched tf.data pipeline, two blocks queued ahead). They try:
- values that are not there when the report is made: 0-d NumPy arrays and views into one buffer, filled by one read
  after the loop or inside the next block's graph; a variable handed as the value (an object whose ``__float__``
  looks its value up later was tried too, and dropped: RestrictedPython's compiler refuses a method of that name);
- the matching of reports by position: an extra report ahead of the due ones, or a report of every step, so that the
  k-th report is measured against a later due report of the reference than its own step's;
- the "queued" count fooled or escaped: a training thread paced by ``gpu_sync.steps_run()`` (the grading's own read,
  not counted), a worker thread that reports, asynchronous eager execution with the whole run queued, reports made in
  the next call, outside the call's tally; reports inside one graph made stateless, so that nothing but a later
  block's loss orders them;
- the bound's exactness: one step past one block on every call, and two blocks late only on the calls that the
  course's counter shows to be the interleaved timed ones (a tell the earlier rounds did not use).
Each attack's comment says why a fair grader gives it nothing (the variable handed as the value keeps the speed
points, as rt_report_handed_the_tensor does). The honest answers are loops a learner may write: the
report made at the top of the next iteration, block ends from NumPy (NumPy integer steps), the steps left over after
the full blocks run one by one, a generator of blocks, and the loss read with ``np.asarray`` (a 0-d array holding the
value read at the call). Expected points are a fair grader's; the attack gated on the timed calls takes the honest
branch in every call of train_tests, so only the speed cell's record shows what it does."""

from tests.grading.submission import Submission

REPORTS_TIMED_CALLS_ATTACKED: list[Submission] = [
    # attack: each report is made before its block is queued (no run of that block yet: never late by any count), its
    # value an empty 0-d NumPy array; after the loop one read of every block's last loss fills the arrays in
    # (`ndarray.fill`, a method call, so the sandbox's write guard has nothing to stop). A recorder that keeps the
    # object and turns it into a number when the call ends sees right values, made "on time", with one host read in
    # all. Fair: no value existed when any report was made (the training had not even run); every report is a promise
    # kept after the loop: nothing in either cell.
    Submission(
        "tc5_zero_d_holders_filled_after_loop",
        {
            "train": '''\
@tf.function
def run_block(w, xs, ys):
    """One block of steps in one graph; its last loss."""
    loss = tf.constant(0.0, xs.dtype)
    for i in tf.range(tf.shape(xs)[0]):
        loss = gpu_sync.train_step(w, xs[i], ys[i])
    return loss


def train(w0, xs, ys, report, every):
    """Same training as ``train_unfixed``, reporting the loss only every ``every`` steps."""
    w = tf.Variable(w0)
    steps = int(xs.shape[0])
    holders = []
    losses = []
    for start in range(0, steps, every):
        end = min(start + every, steps)
        holder = np.zeros((), np.float32)
        report(end - 1, holder)                      # before any step of its block has run
        holders.append(holder)
        losses.append(run_block(w, xs[start:end], ys[start:end]))
    values = tf.stack(losses).numpy()                # the one read, after the loop
    for k in range(len(holders)):
        holders[k].fill(values[k])                   # each report's value, filled in after training ended
    return w.read_value()
'''
        },
        {"train_tests": 0, "train_speed_tests": 0},
    ),
    # attack: one NumPy buffer for all the due losses; each report, made right after its block is queued (runs = step
    # + 1), is handed `buffer[k, ...]`, a 0-d *view* into it (still 0). After the loop one read and `np.copyto` fill
    # the buffer, and with it every value already reported. Unlike tc5_zero_d_holders_filled_after_loop the reported
    # objects are never touched again: a recorder that copies only "arrays it owns", or checks that the value is not
    # written through the reported object, still sees the change. Fair: the values were not known when the reports
    # were made: nothing.
    Submission(
        "tc5_views_into_one_buffer",
        {
            "train": '''\
@tf.function
def run_block(w, xs, ys):
    """One block of steps in one graph; its last loss."""
    loss = tf.constant(0.0, xs.dtype)
    for i in tf.range(tf.shape(xs)[0]):
        loss = gpu_sync.train_step(w, xs[i], ys[i])
    return loss


def train(w0, xs, ys, report, every):
    """Same training as ``train_unfixed``, reporting the loss only every ``every`` steps."""
    w = tf.Variable(w0)
    steps = int(xs.shape[0])
    due = gpu_sync.report_steps(steps, every)
    buffer = np.zeros(len(due), np.float32)
    losses = []
    for k in range(len(due)):
        start = k * every
        losses.append(run_block(w, xs[start:due[k] + 1], ys[start:due[k] + 1]))
        report(due[k], buffer[k, ...])               # a 0-d view into the buffer: on time, and still 0
    np.copyto(buffer, tf.stack(losses).numpy())      # one read after the loop: every view now holds its loss
    return w.read_value()
'''
        },
        {"train_tests": 0, "train_speed_tests": 0},
    ),
    # attack: the subtle form of the holders: each block is reported as soon as it is queued, with an empty 0-d array,
    # and its value is written in by a `tf.numpy_function` at the start of the *next* block's graph, so each value
    # arrives within the one block of lateness the rule allows, and without a single `.numpy()` but the last block's.
    # A recorder that converts the value when the next report comes, or at the end of the call, sees every value right
    # and every report on time. Fair: the rule allows the *report* to come a block late, not the report to come first
    # and its value later; a report function that logs or checks the value at once (what a report is for) gets 0:
    # nothing.
    Submission(
        "tc5_holder_filled_by_next_block",
        {
            "train": '''\
HOLDERS = []


def fill(k, value):
    """Called by tf.numpy_function inside the next block's graph: the loss, into the report already made."""
    if int(k) >= 0:
        HOLDERS[int(k)].fill(value)
    return np.int32(0)


@tf.function
def fill_then_block(w, xs, ys, k, previous):
    tf.numpy_function(fill, [k, previous], tf.int32)   # the previous block's loss, one block late
    loss = tf.constant(0.0, xs.dtype)
    for i in tf.range(tf.shape(xs)[0]):
        loss = gpu_sync.train_step(w, xs[i], ys[i])
    return loss


def train(w0, xs, ys, report, every):
    """Same training as ``train_unfixed``, reporting the loss only every ``every`` steps."""
    HOLDERS.clear()
    w = tf.Variable(w0)
    steps = int(xs.shape[0])
    loss = tf.constant(0.0)
    k = -1
    for start in range(0, steps, every):
        end = min(start + every, steps)
        loss = fill_then_block(w, xs[start:end], ys[start:end], tf.constant(k), loss)
        HOLDERS.append(np.zeros((), np.float32))
        report(end - 1, HOLDERS[-1])                  # made now; its value comes with the next block
        k = k + 1
    HOLDERS[-1].fill(loss.numpy())                    # the last block's value: the only read
    return w.read_value()
'''
        },
        {"train_tests": 0, "train_speed_tests": 0},
    ),
    # attack: reports inside one graph that wait for a later block: the whole run is one tf.function (blocks unrolled
    # while tracing, a tf.range loop each), and block k's report is a `tf.numpy_function` placed right after block
    # k + 2 in the code and given block k + 2's loss as an input it ignores, with `stateful=False`: the automatic
    # control dependencies leave a stateless op out of the chain of train_step runs, so nothing orders it but its
    # inputs; it runs once block k + 2 has ended, alongside the next block. It looks like the accepted in-graph
    # reports (rt_honest_whole_run_one_graph), one transfer per report, runs, sums and values right. A grader that
    # takes reports from inside a graph as ordered with its steps misses it. Fair: every report but the last two is
    # made two blocks late or more: nothing.
    Submission(
        "tc5_stateless_graph_reports_wait_two_blocks",
        {
            "train": '''\
CURRENT = []


def send(step, value, later):
    """Called by tf.numpy_function inside the graph: the report, with host numbers (``later`` only orders it)."""
    CURRENT[0](int(step), float(value))
    return np.int32(0)


@tf.function
def whole_run(w, xs, ys, due):
    """Every block in one graph (unrolled while tracing); block k's report waits for block k + 2's loss."""
    losses = []
    sent = []
    start = 0
    for end in [s + 1 for s in due]:
        loss = tf.constant(0.0, xs.dtype)
        for i in tf.range(start, end):
            loss = gpu_sync.train_step(w, xs[i], ys[i])
        losses.append(loss)
        start = end
        k = len(losses) - 3
        if k >= 0:
            sent.append(tf.numpy_function(send, [due[k], losses[k], loss], tf.int32, stateful=False))
    for k in range(max(len(losses) - 2, 0), len(losses)):
        sent.append(tf.numpy_function(send, [due[k], losses[k], losses[-1]], tf.int32, stateful=False))
    return tf.add_n(sent)


def train(w0, xs, ys, report, every):
    """Same training as ``train_unfixed``, reporting the loss only every ``every`` steps."""
    CURRENT.clear()
    CURRENT.append(report)
    w = tf.Variable(w0)
    whole_run(w, xs, ys, gpu_sync.report_steps(int(xs.shape[0]), every))
    return w.read_value()
'''
        },
        {"train_tests": 0, "train_speed_tests": 0},
    ),
    # attack: nothing is read by the answer: each block's graph assigns its last loss to one tf.Variable, and every
    # report is handed that variable. A ResourceVariable is not a `tf.Tensor` (isinstance is False), so a check that
    # refuses tensors as values may take it for data and convert it later, when it holds the last block's loss. The
    # pair of rt_report_handed_the_tensor. Fair: train_tests refuses a value that is not a Python or NumPy number (0).
    # Speed: a recorder that takes the value at the call (the only meaningful reading of a report) reads the right
    # loss, on time, one read per block, in a graph: full points on a CPU, as for the tensor.
    Submission(
        "tc5_variable_handed_as_value",
        {
            "train": '''\
@tf.function
def run_block_into(w, xs, ys, last):
    """One block of steps in one graph; its last loss, also kept in ``last``."""
    loss = tf.constant(0.0, xs.dtype)
    for i in tf.range(tf.shape(xs)[0]):
        loss = gpu_sync.train_step(w, xs[i], ys[i])
    last.assign(loss)
    return loss


def train(w0, xs, ys, report, every):
    """Same training as ``train_unfixed``, reporting the loss only every ``every`` steps."""
    w = tf.Variable(w0)
    last = tf.Variable(0.0)
    steps = int(xs.shape[0])
    for start in range(0, steps, every):
        end = min(start + every, steps)
        run_block_into(w, xs[start:end], ys[start:end], last)
        report(end - 1, last)                        # a variable, not a tensor, and not read
    return w.read_value()
'''
        },
        {"train_tests": 0},
    ),
    # attack: the positions shifted by one: the answer also reports the first step's loss (a "starting loss", read with
    # block 0's so it costs no read) ahead of the due reports, and keeps two blocks queued ahead of each later read.
    # Block k's report is then the answer's (k+1)-th: measured by position against the reference's (k+2)-th due
    # report, two blocks late passes; only the last two reports come after the loop. Its values for the due steps are
    # right; a check that drops the reports `reports_due` does not keep but still counts positions over every call
    # back sees nothing wrong. Fair: an extra report, and every report but the first two blocks' two blocks late:
    # nothing (train_tests compares the whole list of reports).
    Submission(
        "tc5_extra_first_report_two_blocks_late",
        {
            "train": '''\
@tf.function
def run_block(w, xs, ys):
    """One block of steps in one graph; the losses of its first and last steps."""
    first = gpu_sync.train_step(w, xs[0], ys[0])
    loss = first
    for i in tf.range(1, tf.shape(xs)[0]):
        loss = gpu_sync.train_step(w, xs[i], ys[i])
    return tf.stack([first, loss])


def train(w0, xs, ys, report, every):
    """Reports the starting loss too, and keeps the device two blocks ahead of the reads."""
    w = tf.Variable(w0)
    steps = int(xs.shape[0])
    queued = []
    started = False
    for start in range(0, steps, every):
        end = min(start + every, steps)
        queued.append((end - 1, run_block(w, xs[start:end], ys[start:end])))
        if len(queued) == 3 or (not started and len(queued) == 2):
            step, losses = queued.pop(0)
            values = losses.numpy()
            if not started:
                report(0, values[0])                 # the starting loss: one report more than due
                started = True
            report(step, values[1])
    for step, losses in queued:
        report(step, losses.numpy()[1])
    return w.read_value()
'''
        },
        {"train_tests": 0, "train_speed_tests": 0},
    ),
    # attack: positions outrun: the answer reports every step's loss, not only the due ones ("more reports are
    # better"): the first block's `every` losses right after it (one read), then the whole rest of the run in one graph
    # and all its losses after the loop (a second read). The k-th report has the reference's (k+1)-th due report as its
    # bound, and for k past the number of blocks there is none left but the run's end: by position, every report is
    # "on time" though nine tenths of the run were trained before the second block's report. Runs, sums and the due
    # values are right, and two reads are within the limit. Fair: reports that are not the due ones, and the due ones
    # after the loop: nothing.
    Submission(
        "tc5_every_step_reported_positions_outrun",
        {
            "train": '''\
@tf.function
def block_losses(w, xs, ys):
    """Steps in one graph; the loss of every step."""
    n = tf.shape(xs)[0]
    out = tf.TensorArray(xs.dtype, size=n)
    for i in tf.range(n):
        out = out.write(i, gpu_sync.train_step(w, xs[i], ys[i]))
    return out.stack()


def train(w0, xs, ys, report, every):
    """Reports the loss of every step: the first block's while training, the rest after it."""
    w = tf.Variable(w0)
    steps = int(xs.shape[0])
    first_end = min(every, steps)
    first = block_losses(w, xs[:first_end], ys[:first_end]).numpy()
    for step in range(first_end):
        report(step, first[step])
    rest = block_losses(w, xs[first_end:], ys[first_end:]).numpy()   # the whole rest of the run, one read
    for step in range(first_end, steps):
        report(step, rest[step - first_end])
    return w.read_value()
'''
        },
        {"train_tests": 0, "train_speed_tests": 0},
    ),
    # attack: the "queued" count escaped through a thread: the whole run is one graph call on a thread of its own,
    # each step's loss kept in a variable; the calling thread spins on `gpu_sync.steps_run()` (the course's counter,
    # read by the grading's own uncounted read) until the due step has run, then reads that one loss (one counted read
    # per report) and reports. A counter read "without a wait" from the reporting thread sees only the runs executed
    # so far, one or two past the step: every report looks on time, the runs, sums and values are right, and the host
    # reads counted are exactly one per report. Fair: the whole run was asked for before the first report (on a GPU
    # it is all queued), and thousands of reads of a device value (each `steps_run()` waits for the device) paced the
    # reports, uncounted only because the grading's function excuses itself: nothing.
    Submission(
        "tc5_thread_run_paced_by_steps_run",
        {
            "train": '''\
import threading


@tf.function
def whole_run(w, xs, ys, losses):
    """Every step in one graph; each step's loss kept in ``losses`` as it goes."""
    for i in tf.range(tf.shape(xs)[0]):
        loss = gpu_sync.train_step(w, xs[i], ys[i])
        losses.scatter_nd_update(tf.reshape(i, [1, 1]), tf.reshape(loss, [1]))
    return tf.constant(0)


def train(w0, xs, ys, report, every):
    """The whole run on a thread; this thread reports each due step as soon as the course's counter passes it."""
    w = tf.Variable(w0)
    steps = int(xs.shape[0])
    losses = tf.Variable(tf.zeros([steps]))
    base = gpu_sync.steps_run()
    worker = threading.Thread(target=whole_run, args=(w, xs, ys, losses))
    worker.start()
    for step in gpu_sync.report_steps(steps, every):
        while gpu_sync.steps_run() - base < step + 1:   # not a counted read
            pass
        report(step, losses[step].numpy())               # one counted read per report
    worker.join()
    return w.read_value()
'''
        },
        {"train_tests": 0, "train_speed_tests": 0},
    ),
    # attack: reporting handed to a worker thread "so the training loop never waits for a read": the loop queues the
    # blocks and hands each (step, loss) to the worker once two more blocks are queued; the worker reads it (one read
    # per report, on its own thread) and reports. Every report is at least two blocks late, deterministically, and is
    # made from a thread that is not the one that called `train`: a recorder that notes runs only for reports on the
    # calling thread, or keeps per-thread state, may note nothing. Fair: two blocks late: nothing.
    Submission(
        "tc5_worker_thread_reports_two_blocks_late",
        {
            "train": '''\
import queue
import threading


@tf.function
def run_block(w, xs, ys):
    """One block of steps in one graph; its last loss."""
    loss = tf.constant(0.0, xs.dtype)
    for i in tf.range(tf.shape(xs)[0]):
        loss = gpu_sync.train_step(w, xs[i], ys[i])
    return loss


def reporter(items, report):
    """A worker thread: reads each handed loss and reports it; None ends it."""
    while True:
        item = items.get()
        if item is None:
            return
        report(item[0], float(item[1]))


def train(w0, xs, ys, report, every):
    """Same training as ``train_unfixed``; the reports are made by a worker thread."""
    w = tf.Variable(w0)
    steps = int(xs.shape[0])
    items = queue.Queue()
    worker = threading.Thread(target=reporter, args=(items, report))
    worker.start()
    held = []
    for start in range(0, steps, every):
        end = min(start + every, steps)
        held.append((end - 1, run_block(w, xs[start:end], ys[start:end])))
        if len(held) > 2:
            items.put(held.pop(0))                   # handed over two blocks after its own
    for item in held:
        items.put(item)
    items.put(None)
    worker.join()
    return w.read_value()
'''
        },
        {"train_tests": 0, "train_speed_tests": 0},
    ),
    # attack: asynchronous eager execution, which section 1 shows on a CPU: the answer turns it on, queues every block
    # (each call returns at once), then reads and reports each block's loss as the queue reaches it, and turns it off
    # again. The reports come while the executor is still training, a block apart in wall-clock time, but every run
    # of the whole call was queued before the first read: what a GPU does with the same code. A count of runs
    # *executed* at each report (a read that waits, or one from another executor) sees each report on time; the count
    # of runs *queued* sees the whole run. Fair: the reports were kept for after the loop that queued everything:
    # nothing.
    Submission(
        "tc5_async_eager_whole_run_queued",
        {
            "train": '''\
@tf.function
def run_block(w, xs, ys):
    """One block of steps in one graph; its last loss."""
    loss = tf.constant(0.0, xs.dtype)
    for i in tf.range(tf.shape(xs)[0]):
        loss = gpu_sync.train_step(w, xs[i], ys[i])
    return loss


def train(w0, xs, ys, report, every):
    """Every block queued first (asynchronous eager), then each loss read as the queue reaches it."""
    tf.config.experimental.set_synchronous_execution(False)
    try:
        w = tf.Variable(w0)
        steps = int(xs.shape[0])
        queued = []
        for start in range(0, steps, every):
            end = min(start + every, steps)
            queued.append((end - 1, run_block(w, xs[start:end], ys[start:end])))
        for step, loss in queued:
            report(step, float(loss))                # waits for this block only; the rest is still queued
        return w.read_value()
    finally:
        tf.config.experimental.set_synchronous_execution(True)
'''
        },
        {"train_tests": 0, "train_speed_tests": 0},
    ),
    # attack: reports made outside their call: each call trains the whole run in one graph, reads the due losses once
    # and keeps (report function, step, value) for later; the next call of `train` makes them first, with the
    # previous call's report function. In the speed check that is during the next timed call of the answer, after the
    # tally of the call the reports belong to has ended (so no runs are noted for them at all), and the last call's
    # reports are never made. Fair: no report is made during its own call: nothing.
    Submission(
        "tc5_reports_deferred_to_next_call",
        {
            "train": '''\
PENDING = []


@tf.function
def run_all(w, xs, ys):
    """Every step of the run in one graph; the loss of every step."""
    n = tf.shape(xs)[0]
    out = tf.TensorArray(xs.dtype, size=n)
    for i in tf.range(n):
        out = out.write(i, gpu_sync.train_step(w, xs[i], ys[i]))
    return out.stack()


def flush():
    """The previous call's reports, made now."""
    while PENDING:
        report, step, value = PENDING.pop(0)
        report(step, value)


def train(w0, xs, ys, report, every):
    """Same training as ``train_unfixed``; its reports are made when ``train`` is called next."""
    flush()
    w = tf.Variable(w0)
    steps = int(xs.shape[0])
    due = gpu_sync.report_steps(steps, every)
    values = tf.gather(run_all(w, xs, ys), due).numpy()   # the whole run, one read
    for k in range(len(due)):
        PENDING.append((report, due[k], values[k]))
    return w.read_value()
'''
        },
        {"train_tests": 0, "train_speed_tests": 0},
    ),
    # attack: the bound's exactness, on every call (no tell): block k+1 *and the first step of block k+2* are run
    # before block k's loss is read, so each report but the last two is made with exactly one run more than the
    # reference had at its next due report (with every=1, two steps past its own). Runs, sums, values and the one read
    # per report are right. A bound with a step of slack ("about one block"), or one that compares with the next
    # report's step instead of the runs the reference had then, lets it through. Fair: more than one block past its
    # step: nothing.
    Submission(
        "tc5_one_step_past_the_bound",
        {
            "train": '''\
@tf.function
def run_steps(w, xs, ys):
    """Some steps in one graph; the last one's loss."""
    loss = tf.constant(0.0, xs.dtype)
    for i in tf.range(tf.shape(xs)[0]):
        loss = gpu_sync.train_step(w, xs[i], ys[i])
    return loss


def train(w0, xs, ys, report, every):
    """Before each read: the next block, and one step more."""
    w = tf.Variable(w0)
    steps = int(xs.shape[0])
    due = gpu_sync.report_steps(steps, every)
    ran = 0
    loss_of = {}                                     # a due step -> its loss tensor
    for k in range(len(due)):
        target = steps if k + 1 >= len(due) else min(due[k + 1] + 2, steps)
        for d in due:
            if ran <= d < target:
                loss_of[d] = run_steps(w, xs[ran:d + 1], ys[ran:d + 1])
                ran = d + 1
        if ran < target:
            run_steps(w, xs[ran:target], ys[ran:target])   # one step into the block after next
            ran = target
        report(due[k], float(loss_of[due[k]]))
    return w.read_value()
'''
        },
        {"train_tests": 0, "train_speed_tests": 0},
    ),
    # attack: two blocks late on the timed calls only, told apart by a tell the earlier rounds did not use: the
    # speed check runs train_unfixed once between two calls of the answer on inputs of one size, so the course's
    # counter (`gpu_sync.steps_run()`, a read the grading does not count) has moved by exactly `steps` since the
    # answer's last call of that size ended; in train_tests every size's first call has no last call, and the prints
    # check follows its size's call with nothing run in between. There the answer is the reference loop, on time;
    # on the interleaved timed calls it keeps three blocks queued (each report two blocks late), runs, sums and values
    # still right. Only the new bound on the timed calls can see it. Fair: it reports late where it thinks the clock
    # is running, and does not do what the exercise asks in every call: nothing (its train_tests calls all take the
    # honest branch). Graded, it got full points: the judge runs train_unfixed in a process of its own, so the count
    # never moved between the answer's calls and the tell never fired (honest wherever graded, as
    # wt5_report_repr_skip). The exercise now withholds gpu_sync.steps_run, the checks' count, from the answer.
    Submission(
        "tc5_two_blocks_late_when_counter_says_timed",
        {
            "train": '''\
SINCE = {}


def timed(steps, every):
    """Whether train_unfixed ran exactly once, on this size, since this answer's last call of this size ended."""
    last = SINCE.get((steps, every))
    return last is not None and gpu_sync.steps_run() - last == steps


@tf.function
def run_block(w, xs, ys):
    """One block of steps in one graph; its last loss."""
    loss = tf.constant(0.0, xs.dtype)
    for i in tf.range(tf.shape(xs)[0]):
        loss = gpu_sync.train_step(w, xs[i], ys[i])
    return loss


def train(w0, xs, ys, report, every):
    """Same training as ``train_unfixed``, reporting the loss only every ``every`` steps."""
    w = tf.Variable(w0)
    steps = int(xs.shape[0])
    lag = 3 if timed(steps, every) else 1            # blocks queued before a read: 3 when timed, else the reference
    queued = []
    for start in range(0, steps, every):
        end = min(start + every, steps)
        queued.append((end - 1, run_block(w, xs[start:end], ys[start:end])))
        if len(queued) >= lag:
            step, loss = queued.pop(0)
            report(step, float(loss))
    for step, loss in queued:
        report(step, float(loss))
    SINCE[(steps, every)] = gpu_sync.steps_run()
    return w.read_value()
'''
        },
        {"train_tests": 0, "train_speed_tests": 0},
    ),
    # honest: each block's loss is reported at the top of the next iteration, before the next block is queued (the
    # last one after the loop): the report of step s is made with exactly s + 1 runs, as the reference's. One read per
    # block, the steps between two reads in a graph: full points on a CPU.
    Submission(
        "tc5_honest_report_before_next_block",
        {
            "train": '''\
@tf.function
def run_block(w, xs, ys):
    """One block of steps in one graph; its last loss."""
    loss = tf.constant(0.0, xs.dtype)
    for i in tf.range(tf.shape(xs)[0]):
        loss = gpu_sync.train_step(w, xs[i], ys[i])
    return loss


def train(w0, xs, ys, report, every):
    """Same training as ``train_unfixed``, reporting the loss only every ``every`` steps."""
    w = tf.Variable(w0)
    steps = int(xs.shape[0])
    last = None
    for start in range(0, steps, every):
        if last is not None:
            report(last[0], float(last[1]))          # the previous block, before this one is queued
        end = min(start + every, steps)
        last = (end - 1, run_block(w, xs[start:end], ys[start:end]))
    report(last[0], float(last[1]))
    return w.read_value()
'''
        },
        {},
    ),
    # honest: block ends computed with NumPy (`np.arange`, clipped to the steps), each block one call of the course's
    # `gpu_sync.train_steps`, reported right after it with `.numpy()`: the steps reported are NumPy integers (np.int64),
    # equal to the due steps. A timing check that binds the step must take any integer, not only `int`, as the
    # earlier rounds' refusal of inf and NaN steps must not turn into a refusal of NumPy integers. Full points on a CPU.
    Submission(
        "tc5_honest_numpy_integer_steps",
        {
            "train": '''\
def train(w0, xs, ys, report, every):
    """Same training as ``train_unfixed``, reporting the loss only every ``every`` steps."""
    w = tf.Variable(w0)
    steps = xs.shape[0]
    ends = np.minimum(np.arange(every, steps + every, every), steps)   # each block's end, as NumPy integers
    start = 0
    for end in ends:
        loss = gpu_sync.train_steps(w, xs[start:end], ys[start:end])
        report(end - 1, loss.numpy())
        start = end
    return w.read_value()
'''
        },
        {},
    ),
    # honest: the full blocks run in a graph, each reported right after it; the steps left over when `every` does not
    # divide the steps (203 every 20, 45 every 7) run one by one with `gpu_sync.train_step` and are reported once,
    # after the last of them. The last block handled differently, on time, one read per report. The timed calls
    # (200 every 20) have no steps left over: full points on a CPU.
    Submission(
        "tc5_honest_leftover_steps_one_by_one",
        {
            "train": '''\
@tf.function
def full_block(w, xs, ys):
    """One block of steps in one graph; its last loss."""
    loss = tf.constant(0.0, xs.dtype)
    for i in tf.range(tf.shape(xs)[0]):
        loss = gpu_sync.train_step(w, xs[i], ys[i])
    return loss


def train(w0, xs, ys, report, every):
    """Full blocks in a graph; the few steps left over (fewer than every) one by one, read once at the end."""
    w = tf.Variable(w0)
    steps = int(xs.shape[0])
    full = steps - steps % every
    for start in range(0, full, every):
        loss = full_block(w, xs[start:start + every], ys[start:start + every])
        report(start + every - 1, float(loss))
    if full < steps:
        for step in range(full, steps):
            loss = gpu_sync.train_step(w, xs[step], ys[step])
        report(steps - 1, float(loss))
    return w.read_value()
'''
        },
        {},
    ),
    # honest: a generator of blocks: each item trains one block (when the loop asks for it) and yields its last step
    # and loss, which the loop reports before asking for the next. Lazy, but each report comes with s + 1 runs.
    # Full points on a CPU.
    Submission(
        "tc5_honest_generator_of_blocks",
        {
            "train": '''\
@tf.function
def run_block(w, xs, ys):
    """One block of steps in one graph; its last loss."""
    loss = tf.constant(0.0, xs.dtype)
    for i in tf.range(tf.shape(xs)[0]):
        loss = gpu_sync.train_step(w, xs[i], ys[i])
    return loss


def blocks(w, xs, ys, every):
    """Each block's last step and loss, one block trained per item asked for."""
    steps = int(xs.shape[0])
    for start in range(0, steps, every):
        end = min(start + every, steps)
        yield end - 1, run_block(w, xs[start:end], ys[start:end])


def train(w0, xs, ys, report, every):
    """Same training as ``train_unfixed``, reporting the loss only every ``every`` steps."""
    w = tf.Variable(w0)
    for step, loss in blocks(w, xs, ys, every):
        report(step, float(loss))
    return w.read_value()
'''
        },
        {},
    ),
    # honest: the loss read with `np.asarray(loss)` (section 2 lists it as a read), which hands the report a 0-d NumPy
    # array already holding the value, right after its block. The pair of tc5_zero_d_holders_filled_after_loop: a
    # grader closes that hole by taking the value at the call (a copy of the 0-d array), not by refusing NumPy arrays
    # holding a value read on time. One read per block, in a graph: full points on a CPU.
    Submission(
        "tc5_honest_asarray_read",
        {
            "train": '''\
@tf.function
def run_block(w, xs, ys):
    """One block of steps in one graph; its last loss."""
    loss = tf.constant(0.0, xs.dtype)
    for i in tf.range(tf.shape(xs)[0]):
        loss = gpu_sync.train_step(w, xs[i], ys[i])
    return loss


def train(w0, xs, ys, report, every):
    """Same training as ``train_unfixed``, reporting the loss only every ``every`` steps."""
    w = tf.Variable(w0)
    steps = int(xs.shape[0])
    for start in range(0, steps, every):
        end = min(start + every, steps)
        loss = run_block(w, xs[start:end], ys[start:end])
        report(end - 1, np.asarray(loss))            # one read: the value, as a NumPy array of shape ()
    return w.read_value()
'''
        },
        {},
    ),
]
