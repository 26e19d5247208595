"""Red team, chapter 5: answers that avoid the syncs, copies and slowdown only on paper.

Classes of the grading-integrity issue: (1) remembering, (2) changing what the grader reads,
(4) fooling a counter, (5) the wrong idea.
"""

from tests.grading.submission import Submission

_TRAIN = """
@tf.function
def train_block(w, xs, ys):
    loss = tf.constant(0.0)
    for i in tf.range(tf.shape(xs)[0]):
        loss = gpu_sync.train_step(w, xs[i], ys[i])
    return loss

def _train(w0, xs, ys, report, every):
    w = tf.Variable(w0)
    steps = xs.shape[0]
    for start in range(0, steps, every):
        loss = train_block(w, xs[start:start + every], ys[start:start + every])
        report(min(start + every, steps) - 1, float(loss))
    return w.read_value()
"""

_EPOCHS_OK = """
def _train_epochs(w0, xs, ys, epochs, on_epoch_end):
    w = tf.Variable(w0)
    total, count, running = tf.constant(0.0), 0, []
    for epoch in range(epochs):
        for i in range(xs.shape[0]):
            total += gpu_sync.train_step(w, xs[i], ys[i])
            count += 1
        running.append(total / count)
        on_epoch_end(epoch)
    return w.read_value(), tf.stack(running)
"""


def _counted_calls(branch: str) -> dict[str, str]:
    """``train`` that counts its calls of each number of steps (``n`` steps, the ``k``-th such call) and runs
    ``branch`` (code indented for the function's body) before it trains right."""
    return {
        "train": _TRAIN
        + f"""
_seen = {{}}
def train(w0, xs, ys, report, every):
    n = int(xs.shape[0])
    _seen[n] = _seen.get(n, 0) + 1
    k = _seen[n]
    {branch}
    return _train(w0, xs, ys, report, every)
"""
    }


def _beyond_checked_sizes(refusal: str, when: str = "n > 203") -> dict[str, str]:
    """``train`` right on runs of up to 203 steps (the largest train_tests makes) and ``refusal`` on longer ones (or
    where ``when`` holds)."""
    return _counted_calls(f"if {when}:\n        {refusal}")


RED_TEAM = [
    # (1) Remembers the weights per problem size: wrong on new data of a size seen before. The speed check's new
    #     data on every timed call exposes it, and so does train_tests: its prints check calls the visible result
    #     check's size again, unmarked, and compares the weights (0 there too: a function wrong on some inputs).
    Submission(
        "red1_train_memo_by_size",
        {
            "train": _TRAIN
            + """
_memo = {}
def train(w0, xs, ys, report, every):
    key = (tuple(xs.shape), every)
    if key not in _memo:
        _memo[key] = _train(w0, xs, ys, report, every)
    return _memo[key]
"""
        },
        {"train_tests": 0, "train_speed_tests": 0},
    ),
    # (1) Trains right on the sizes the correctness cell calls and raises on longer runs (more than 203 steps: as
    #     though it had learned the hidden checks' sizes), so only the speed cell's hidden timed calls (240 steps)
    #     fail and every call of train_tests passes. Fair: a function that refuses the exercise's own
    #     inputs does not train as train_unfixed does; a call that raised while timed is held against train_tests
    #     as a wrong result is (0 in both cells).
    Submission(
        "red1_train_raises_beyond_checked_sizes",
        _beyond_checked_sizes('raise ValueError("more steps than this loop was written for")'),
        {"train_tests": 0, "train_speed_tests": 0},
    ),
    # (1) The same, with the longer runs refused otherwise: returning None (not the weights; on a timed call it fails
    #     where the grading process reads the result, not in the call), or raising NotImplementedError (which the
    #     checks read as "not written yet"). A reviewer expected both to keep train_tests's points where a plain
    #     exception no longer did; the second did (3.0), the first was already refused by the judge's results check
    #     of the untimed calls. Fair: 0 in both cells, as above.
    Submission(
        "red1_train_returns_none_beyond_checked_sizes",
        _beyond_checked_sizes("return None"),
        {"train_tests": 0, "train_speed_tests": 0},
    ),
    Submission(
        "red1_train_not_implemented_beyond_checked_sizes",
        _beyond_checked_sizes('raise NotImplementedError("longer runs")'),
        {"train_tests": 0, "train_speed_tests": 0},
    ),
    # (1) The same, its longer runs never returning, but only from the third on: the judge's two untimed calls of the
    #     speed check (240 steps) return, so only the grading process's timed calls hang, and the check is stopped at
    #     the cell's time limit after every call of train_tests returned. (Hanging from the first long call, it
    #     stops the judge while it runs the speed cell, and every judged cell of the exercise is lost: 0 already.)
    #     Fair: a function that never returns on the exercise's own inputs does not train; a timed call that
    #     outlasts a whole cell's limit is held against train_tests as a wrong result (0 in both cells). Graded alone
    #     with a short cell limit.
    Submission(
        "red1_train_hangs_on_the_timed_calls",
        _counted_calls("while n == 240 and k > 2:\n        pass"),
        {"train_tests": 0, "train_speed_tests": 0},
        hangs=True,
    ),
    # (1) Trains right, and on the speed cell's 180-step call only (a size no other check makes) reports each
    #     loss as text. That call's reports are compared where the cell reads them; the answer's function is wrong
    #     on a call, which is held against train_tests as any wrong call is. Fair: 0 in both cells.
    Submission(
        "red1_train_reports_text_on_the_speed_cells_call",
        _beyond_checked_sizes(
            "return _train(w0, xs, ys, lambda step, loss: report(step, str(loss)), every)", when="n == 180"
        ),
        {"train_tests": 0, "train_speed_tests": 0},
    ),
    # (1) The same text, in a NumPy array of no dimensions: float() reads it, exactly (a float's text gives it back),
    #     so it passed check_reports's values once the 180-step reports came as sent. Found by a reviewer. Fair: 0.
    Submission(
        "red1_train_reports_text_array_on_the_speed_cells_call",
        _beyond_checked_sizes(
            "return _train(w0, xs, ys, lambda step, loss: report(step, np.array(str(loss))), every)",
            when="n == 180",
        ),
        {"train_tests": 0, "train_speed_tests": 0},
    ),
    # (1) Found by a reviewer: on the speed cell's own sizes (180 steps, judged; 240, timed) returns a string too large
    #     for the grading process to read (a header over its 64 MiB), so the subject is stopped rather than found
    #     wrong, on the judge's call. Fair: a function that does not return the weights on the exercise's inputs is
    #     wrong; a call the grading process cannot read is held as a wrong result (0 in both cells).
    Submission(
        "red1_train_oversized_result_on_the_speed_cells_sizes",
        _beyond_checked_sizes('return "0" * 80_000_000', when="n in (180, 240)"),
        {"train_tests": 0, "train_speed_tests": 0},
    ),
    # (1) The same on the grading process's timed calls only: right on the judge's calls, the third long call on
    #     returns the oversized string, which fails where the grading process asks for a timed call's result. Fair:
    #     0 in both cells.
    Submission(
        "red1_train_oversized_result_on_the_timed_calls",
        _counted_calls(
            'if n == 240 and k > 2:\n        _train(w0, xs, ys, report, every)\n        return "0" * 80_000_000'
        ),
        {"train_tests": 0, "train_speed_tests": 0},
    ),
    # Round 2 of the review of the rule "right on every call" (a helper in a fresh context, code only): answers that
    # tell the grading process's timed calls (240 steps, from the third on: the judge makes two) or the speed cell's
    # other calls apart by counting the calls of each size, and one honest answer.
    # (1) Reports each loss in a list on the timed calls only: the timed calls compared the numbers flattened, so
    #     the list passed where check_reports refuses it. Fair: 0 in both cells.
    Submission(
        "red1_train_list_reports_on_the_timed_calls",
        _counted_calls(
            "if n == 240 and k > 2:\n"
            "        return _train(w0, xs, ys, lambda step, loss: report(step, [float(loss)]), every)"
        ),
        {"train_tests": 0, "train_speed_tests": 0},
    ),
    # (1) An extra report of an array of six million numbers on the timed calls: its calls back, read after the
    #     clock, were too large to send. Fair: 0 in both cells.
    Submission(
        "red1_train_huge_report_on_the_timed_calls",
        _counted_calls("if n == 240 and k > 2:\n        report(0, np.random.default_rng(0).random(6_000_000))"),
        {"train_tests": 0, "train_speed_tests": 0},
    ),
    # (1) An extra report of text on the timed calls: reading its calls back raised in the subject, and that error
    #     escaped the speed check, stopping the grading of the whole notebook. Fair: 0 in both cells.
    Submission(
        "red1_train_text_report_on_the_timed_calls",
        _counted_calls('if n == 240 and k > 2:\n        report(0, np.array("x"))'),
        {"train_tests": 0, "train_speed_tests": 0},
    ),
    # (1) Prints on the speed cell's first call (200 steps, its prints check), so the cell fails there, before any
    #     call of 240 steps, on which it raises. Fair: 0 in both cells (wrong on the exercise's inputs).
    Submission(
        "red1_train_prints_then_raises_beyond_checked_sizes",
        _counted_calls(
            'if n > 203:\n        raise ValueError("more steps than this loop was written for")\n'
            '    if n == 200:\n        print("training", n, "steps")'
        ),
        {"train_tests": 0, "train_speed_tests": 0},
    ),
    # (1) Ten host reads and no training on the speed cell's judged 180-step call (its read count fails first),
    #     raising on the longer runs. Fair: 0 in both cells.
    Submission(
        "red1_train_reads_on_the_speed_cells_call_then_raises",
        _counted_calls(
            'if n > 203:\n        raise ValueError("more steps than this loop was written for")\n'
            "    if n == 180:\n        for i in range(10):\n            float(tf.reduce_sum(xs[i]))\n"
            "        return w0"
        ),
        {"train_tests": 0, "train_speed_tests": 0},
    ),
    # (1) Wrong where the reviewer read that nothing is compared: the first call of the trial's probe of the sample
    #     size (untrained), and the prints checks' calls (no reports). Fair: 0 in both cells.
    Submission(
        "red1_train_wrong_on_uncompared_calls",
        _counted_calls(
            "if (n == 240 and k == 5) or (n == 200 and k == 7):\n        return w0\n"
            "    if n in (60, 200) and k == 2:\n"
            "        return _train(w0, xs, ys, lambda step, loss: None, every)"
        ),
        {"train_tests": 0, "train_speed_tests": 0},
        gap="the calls of the trial's probe of its sample size and the prints checks' reports are not compared: 3 + 2",
    ),
    # Honest: one variable made once and returned itself, its value set from w0 at every call. The timed calls'
    # results were read after the sample's calls, all the last one's weights by then; now read as each call returns.
    Submission(
        "hi5_honest_reused_variable",
        {
            "train": _TRAIN
            + """
_weights = []

def train(w0, xs, ys, report, every):
    if not _weights:
        _weights.append(tf.Variable(w0))
    w = _weights[0]
    w.assign(w0)
    steps = xs.shape[0]
    for start in range(0, steps, every):
        loss = train_block(w, xs[start:start + every], ys[start:start + every])
        report(min(start + every, steps) - 1, float(loss))
    return w
"""
        },
        {},
    ),
    # (2) Slows the baseline by wrapping the library's training step while it is called from the unfixed loop;
    #     the checks refuse the changed library from then on, in every exercise.
    Submission(
        "red2_slows_the_library_step",
        {
            "train": _TRAIN
            + """
import time, traceback
_step = gpu_sync.train_step
def _slow_step(*args):
    if any(f.name == "train_unfixed" for f in traceback.extract_stack(limit=4)):
        time.sleep(0.002)
    return _step(*args)
vars(gpu_sync)["train_step"] = _slow_step      # past the module's refusal of `gpu_sync.train_step = ...`
def train(w0, xs, ys, report, every):
    return _train(w0, xs, ys, report, every)
"""
        },
        # Graded outside the kernel, each exercise in a process of its own: the patch reaches the checks of its
        # own exercise only (the kernel-wide path also zeroed train_epochs and fit, whose answers are right).
        {"train_tests": 0, "train_speed_tests": 0},
    ),
    # (4) Switches the host-sync counter off from inside the answer, then reads every step.
    Submission(
        "red4_switches_the_counter_off",
        {
            "train": """
from tfperf.measure import host_syncs
def train(w0, xs, ys, report, every):
    host_syncs._patches._restore()
    w = tf.Variable(w0)
    for step in range(xs.shape[0]):
        loss = gpu_sync.train_step(w, xs[step], ys[step])
        if (step + 1) % every == 0 or step == xs.shape[0] - 1:
            report(step, loss.numpy())
        else:
            loss.numpy()
    return w.read_value()
"""
        },
        {"train_tests": 0, "train_speed_tests": 0},
    ),
    # (3) Quiet only while a check captures its output (sys.stdout is then a StringIO): every check in the
    #     worker sees nothing; the grading process calls train again with nothing captured, reads the line
    #     from the worker's real output, and fails both cells that allow no printing.
    Submission(
        "red3_quiet_only_while_captured",
        {
            "train": _TRAIN
            + """
import sys
def train(w0, xs, ys, report, every):
    if type(sys.stdout).__name__ != "StringIO":
        print("training", xs.shape[0], "steps")
    return _train(w0, xs, ys, report, every)
"""
        },
        {"train_tests": 0, "train_speed_tests": 0},
    ),
    # (4, 5) Does every epoch's work before the first epoch ends, then calls the callback in a row.
    Submission(
        "red5_epochs_all_work_first",
        {
            "train_epochs": """
def train_epochs(w0, xs, ys, epochs, on_epoch_end):
    w = tf.Variable(w0)
    total, count, running = tf.constant(0.0), 0, []
    for epoch in range(epochs):
        for i in range(xs.shape[0]):
            total += gpu_sync.train_step(w, xs[i], ys[i])
            count += 1
        running.append(total / count)
    for epoch in range(epochs):
        on_epoch_end(epoch)
    return w.read_value(), tf.stack(running)
"""
        },
        {"train_epochs_tests": 0},
    ),
    # (5) No tf.function, so no retracing, but the running mean still stacks every loss so far.
    Submission(
        "red5_epochs_eager_growing_mean",
        {
            "train_epochs": """
def train_epochs(w0, xs, ys, epochs, on_epoch_end):
    w = tf.Variable(w0)
    losses, running = [], []
    for epoch in range(epochs):
        for i in range(xs.shape[0]):
            losses.append(gpu_sync.train_step(w, xs[i], ys[i]))
            running_mean = tf.reduce_mean(tf.stack(losses))
        running.append(running_mean)
        on_epoch_end(epoch)
    return w.read_value(), tf.stack(running)
"""
        },
        {"train_epochs_tests": 0},
    ),
    # (2) Patches NumPy's comparison so that any result passes, with a wrong answer.
    Submission(
        "red2_patches_numpy_allclose",
        {
            "train_epochs": _EPOCHS_OK
            + """
import numpy
numpy.allclose = lambda *args, **kwargs: True
def train_epochs(w0, xs, ys, epochs, on_epoch_end):
    w, running = _train_epochs(w0, xs, ys, epochs, on_epoch_end)
    return w * 0.0, running
"""
        },
        # Its own exercise only (graded outside the kernel; the kernel-wide path also zeroed fit).
        {"train_epochs_tests": 0},
    ),
    # (4) Copies every batch of every epoch through a Python list: still an upload per batch.
    Submission(
        "red4_fit_uploads_through_lists",
        {
            "fit": """
def fit(w0, x, y, batch, epochs):
    w = tf.Variable(w0)
    for epoch in range(epochs):
        for start in range(0, len(x), batch):
            xb = tf.constant(x[start:start + batch].tolist())
            yb = tf.constant(y[start:start + batch].tolist())
            gpu_sync.train_step(w, xb, yb)
    return w.read_value()
"""
        },
        {"fit_tests": 0},
    ),
    # (4) Replays a generator through tf.data every epoch: every batch is delivered (copied) again.
    Submission(
        "red4_fit_generator_every_epoch",
        {
            "fit": """
def fit(w0, x, y, batch, epochs):
    def batches():
        for start in range(0, len(x), batch):
            yield x[start:start + batch], y[start:start + batch]
    spec = (tf.TensorSpec([None, x.shape[1]], tf.float32), tf.TensorSpec([None, y.shape[1]], tf.float32))
    data = tf.data.Dataset.from_generator(batches, output_signature=spec)
    w = tf.Variable(w0)
    for epoch in range(epochs):
        for xb, yb in data:
            gpu_sync.train_step(w, xb, yb)
    return w.read_value()
"""
        },
        {"fit_tests": 0},
    ),
]
