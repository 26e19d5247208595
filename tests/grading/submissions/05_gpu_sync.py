"""Round-trip cases of chapter 5 (05_gpu_sync): the unfixed loop and the plausible wrong answers."""

from tests.grading import attacks
from tests.grading.submission import Submission

_UNFIXED = """def train(w0, xs, ys, report, every):
    w = tf.Variable(w0)
    for step in range(xs.shape[0]):
        loss = gpu_sync.train_step(w, xs[step], ys[step])
        report(step, loss.numpy())
    return w.read_value()
"""

_FLOAT_EVERY_STEP = """def train(w0, xs, ys, report, every):
    w = tf.Variable(w0)
    steps = xs.shape[0]
    for step in range(steps):
        loss = float(gpu_sync.train_step(w, xs[step], ys[step]))   # float() is a sync point too
        if (step + 1) % every == 0 or step == steps - 1:
            report(step, loss)
    return w.read_value()
"""

_NUMPY_IN_TF_FUNCTION = """@tf.function
def train_block(w, xs, ys, report, start):
    for i in tf.range(tf.shape(xs)[0]):
        loss = gpu_sync.train_step(w, xs[i], ys[i])
    report(start + xs.shape[0] - 1, loss.numpy())   # no value while tracing

def train(w0, xs, ys, report, every):
    w = tf.Variable(w0)
    for start in range(0, xs.shape[0], every):
        train_block(w, xs[start:start + every], ys[start:start + every], report, start)
    return w.read_value()
"""

_TF_PRINT_EVERY_STEP = """@tf.function
def train_block(w, xs, ys):
    loss = tf.constant(0.0)
    for i in tf.range(tf.shape(xs)[0]):
        loss = gpu_sync.train_step(w, xs[i], ys[i])
        tf.print("loss", loss)                       # a line on every step
    return loss

def train(w0, xs, ys, report, every):
    w = tf.Variable(w0)
    steps = xs.shape[0]
    for start in range(0, steps, every):
        loss = train_block(w, xs[start:start + every], ys[start:start + every])
        report(min(start + every, steps) - 1, float(loss))
    return w.read_value()
"""

_READ_EVERY_N_IN_PYTHON = """def train(w0, xs, ys, report, every):
    w = tf.Variable(w0)
    steps = xs.shape[0]
    for step in range(steps):
        loss = gpu_sync.train_step(w, xs[step], ys[step])
        if (step + 1) % every == 0 or step == steps - 1:
            report(step, loss.numpy())
    return w.read_value()
"""

SUBMISSIONS = [
    # Concept checks: some wrong letters; the right ones score.
    Submission(
        "concepts_some_wrong",
        {
            "concepts": 'after_matmul_returns = "a"\nnot_a_sync_point = "a"\nnumpy_inside_function = "b"\nmemory_growth_and_oom = "d"'
        },
        {"concepts_after_matmul_returns": 0},
    ),
    Submission(name="unfixed", edits={"train": _UNFIXED}, expected={"train_tests": 0.0, "train_speed_tests": 0.0}),
    Submission(
        name="float_instead_of_numpy",
        edits={"train": _FLOAT_EVERY_STEP},
        expected={"train_tests": 0.0, "train_speed_tests": 0.0},
    ),
    Submission(
        name="numpy_inside_tf_function",
        edits={"train": _NUMPY_IN_TF_FUNCTION},
        expected={"train_tests": 0.0, "train_speed_tests": 0.0},
    ),
    # Prints on every step: fails the printing checks of both cells. (Its timed speed depends on
    # where the output goes: about 10.7x with output to a file in a plain Python process, about
    # 1.1x in nbgrader's kernel on the CI machine; the speed cell checks printing first.)
    Submission(
        name="tf_print_every_step",
        edits={"train": _TF_PRINT_EVERY_STEP},
        expected={"train_tests": 0.0, "train_speed_tests": 0.0},
    ),
    # Syncs only every N steps but keeps the Python loop: structurally right (full points),
    # too slow on a CPU (about 1.0x; the CPU target needs the in-graph loop).
    Submission(
        name="reads_every_n_in_python_loop",
        edits={"train": _READ_EVERY_N_IN_PYTHON},
        expected={"train_speed_tests": 0.0},
    ),
]

# Exercise 2 (the slowdown).
_EPOCHS_UNFIXED = """def train_epochs(w0, xs, ys, epochs, on_epoch_end):
    @tf.function
    def mean_loss(losses):
        return tf.reduce_mean(tf.stack(losses))

    w = tf.Variable(w0)
    losses, running = [], []
    for epoch in range(epochs):
        for i in range(xs.shape[0]):
            losses.append(gpu_sync.train_step(w, xs[i], ys[i]))
            running_mean = mean_loss(losses)
        running.append(running_mean)
        on_epoch_end(epoch)
    return w.read_value(), tf.stack(running)
"""

# Moves the tf.function out of the loop and relaxes shapes: the list still grows, so it still retraces.
_EPOCHS_REDUCE_RETRACING = """@tf.function(reduce_retracing=True)
def mean_loss(losses):
    return tf.reduce_mean(tf.stack(losses))

def train_epochs(w0, xs, ys, epochs, on_epoch_end):
    w = tf.Variable(w0)
    losses, running = [], []
    for epoch in range(epochs):
        for i in range(xs.shape[0]):
            losses.append(gpu_sync.train_step(w, xs[i], ys[i]))
            running_mean = mean_loss(losses)
        running.append(running_mean)
        on_epoch_end(epoch)
    return w.read_value(), tf.stack(running)
"""

# No retracing any more, but the mean of the last epoch only: wrong results.
_EPOCHS_EPOCH_MEAN = """def train_epochs(w0, xs, ys, epochs, on_epoch_end):
    w = tf.Variable(w0)
    running = []
    for epoch in range(epochs):
        total = tf.constant(0.0)
        for i in range(xs.shape[0]):
            total += gpu_sync.train_step(w, xs[i], ys[i])
        running.append(total / xs.shape[0])
        on_epoch_end(epoch)
    return w.read_value(), tf.stack(running)
"""

SUBMISSIONS += [
    Submission(name="epochs_unfixed", edits={"train_epochs": _EPOCHS_UNFIXED}, expected={"train_epochs_tests": 0.0}),
    Submission(
        name="epochs_reduce_retracing",
        edits={"train_epochs": _EPOCHS_REDUCE_RETRACING},
        expected={"train_epochs_tests": 0.0},
    ),
    Submission(
        name="epochs_mean_of_each_epoch",
        edits={"train_epochs": _EPOCHS_EPOCH_MEAN},
        expected={"train_epochs_tests": 0.0},
    ),
]

# Exercise 3: copy the data to the device once (graded on results and copies).
_FIT_UNFIXED = """def fit(w0, x, y, batch, epochs):
    return fit_unfixed(w0, x, y, batch, epochs)
"""

_FIT_CONSTANT_PER_STEP = """def fit(w0, x, y, batch, epochs):
    w = tf.Variable(w0)
    for epoch in range(epochs):
        for start in range(0, len(x), batch):
            gpu_sync.train_step(w, tf.constant(x[start:start + batch]), tf.constant(y[start:start + batch]))
    return w.read_value()
"""

_FIT_NUMPY_ARGUMENTS = """def fit(w0, x, y, batch, epochs):
    w = tf.Variable(w0)
    for epoch in range(epochs):
        for start in range(0, len(x), batch):
            gpu_sync.train_step(w, x[start:start + batch], y[start:start + batch])   # converted on every call
    return w.read_value()
"""

_FIT_ONE_EPOCH = """def fit(w0, x, y, batch, epochs):
    xs, ys = tf.convert_to_tensor(x), tf.convert_to_tensor(y)
    w = tf.Variable(w0)
    for start in range(0, len(x), batch):                         # skips the other epochs
        gpu_sync.train_step(w, xs[start:start + batch], ys[start:start + batch])
    return w.read_value()
"""

_FIT_BATCHES_ONCE = """def fit(w0, x, y, batch, epochs):
    batches = [(tf.constant(x[s:s + batch]), tf.constant(y[s:s + batch])) for s in range(0, len(x), batch)]
    w = tf.Variable(w0)
    for epoch in range(epochs):
        for xb, yb in batches:
            gpu_sync.train_step(w, xb, yb)
    return w.read_value()
"""

_FIT_TF_DATA_CACHE = """def fit(w0, x, y, batch, epochs):
    data = tf.data.Dataset.from_tensor_slices((x, y)).batch(batch).cache().prefetch(tf.data.AUTOTUNE)
    w = tf.Variable(w0)
    for epoch in range(epochs):
        for xb, yb in data:
            gpu_sync.train_step(w, xb, yb)
    return w.read_value()
"""

SUBMISSIONS += [
    Submission("fit_unfixed", {"fit": _FIT_UNFIXED}, {"fit_tests": 0}),
    Submission("fit_tf_constant_every_step", {"fit": _FIT_CONSTANT_PER_STEP}, {"fit_tests": 0}),
    Submission("fit_numpy_arguments_to_the_step", {"fit": _FIT_NUMPY_ARGUMENTS}, {"fit_tests": 0}),
    Submission("fit_one_epoch_only", {"fit": _FIT_ONE_EPOCH}, {"fit_tests": 0}),
    # tf.data's cache() keeps the batches in host memory: every epoch the iterator delivers
    # them again and each is copied to the device again, so the rows are not copied once.
    Submission("fit_tf_data_cache", {"fit": _FIT_TF_DATA_CACHE}, {"fit_tests": 0}),
    # Correct alternative: each batch copied once: full marks.
    Submission("fit_batches_copied_once", {"fit": _FIT_BATCHES_ONCE}),
]


# Reaching outside the notebook (issue 7, class 3; tests/grading/attacks.py): wrong answers
# that try to get their points another way score 0, and the course stays intact.
SUBMISSIONS += [
    Submission(
        "epochs_unfixed_overwrites_the_course",
        {"train_epochs": attacks.overwrites_the_course(_EPOCHS_UNFIXED)},
        {"train_epochs_tests": 0.0},
        kernel=True,
    ),
    Submission(
        "epochs_unfixed_fetches_the_answer",
        {"train_epochs": attacks.fetches_the_answer("train_epochs", _EPOCHS_UNFIXED)},
        {"train_epochs_tests": 0.0},
        kernel=True,
    ),
    Submission(
        "epochs_unfixed_spawns_a_shell",
        {"train_epochs": attacks.spawns_a_shell(_EPOCHS_UNFIXED)},
        {"train_epochs_tests": 0.0},
        kernel=True,
    ),
    # The right answer after reserving 12 GiB: over the sandbox's memory limit (8 GiB) the
    # allocation fails (MemoryError), the answer is never defined, and the kernel lives on for
    # the next exercises. (np.empty touches no page: without the limit it would cost nothing.)
    Submission(
        "train_needs_12_gib",
        {
            "train": "import numpy as np\nscratch = np.empty(12 * 2**30, np.uint8)\n"
            + attacks.reference_source("05_gpu_sync", "train")
        },
        {"train_tests": 0.0, "train_speed_tests": 0.0},
        kernel=True,
    ),
]

# Exercise 4, the leak: its memory is read by the grading process, from outside the answer's process.
_LEAK_UNFIXED = """def train_best(w0, xs, ys, epochs, on_epoch_end):
    w = tf.Variable(w0)
    history = []
    for epoch in range(epochs):
        losses = [gpu_sync.train_step(w, xs[i], ys[i]) for i in range(xs.shape[0])]
        history.append({"loss": float(tf.reduce_mean(losses)), "weights": w.numpy()})
        on_epoch_end(epoch)
    best = min(history, key=lambda h: h["loss"])
    return best["weights"], [h["loss"] for h in history]
"""

# Honest: the best weights kept in a variable of their own, assigned when an epoch is the best so far.
_LEAK_BEST_IN_A_VARIABLE = """def train_best(w0, xs, ys, epochs, on_epoch_end):
    w, best = tf.Variable(w0), tf.Variable(w0)
    losses = []
    for epoch in range(epochs):
        epoch_losses = [gpu_sync.train_step(w, xs[i], ys[i]) for i in range(xs.shape[0])]
        losses.append(float(tf.reduce_mean(epoch_losses)))
        if losses.index(min(losses)) == epoch:
            best.assign(w)
        on_epoch_end(epoch)
    return best.read_value(), losses
"""

# Wrong: flat, but the last epoch's weights are not the best where the loss rises again (the hidden check).
_LEAK_LAST_WEIGHTS = """def train_best(w0, xs, ys, epochs, on_epoch_end):
    w = tf.Variable(w0)
    losses = []
    for epoch in range(epochs):
        losses.append(float(tf.reduce_mean([gpu_sync.train_step(w, xs[i], ys[i]) for i in range(xs.shape[0])])))
        on_epoch_end(epoch)
    return w.numpy(), losses
"""

# Attack: the leak kept, hidden by memory the answer cell sets aside (100 MB) and frees as the history grows.
_LEAK_HIDDEN_BY_BALLAST = """import numpy as np
_ballast = [np.ones(2_100_000) for _ in range(6)]

""" + _LEAK_UNFIXED.replace(
    "        on_epoch_end(epoch)\n", "        if _ballast:\n            _ballast.pop()\n        on_epoch_end(epoch)\n"
)

SUBMISSIONS += [
    Submission(name="leak_unfixed", edits={"train_best": _LEAK_UNFIXED}, expected={"leak_tests": 0.0}),
    Submission(name="leak_best_in_a_variable", edits={"train_best": _LEAK_BEST_IN_A_VARIABLE}),
    Submission(
        name="leak_returns_the_last_weights", edits={"train_best": _LEAK_LAST_WEIGHTS}, expected={"leak_tests": 0.0}
    ),
    Submission(
        name="leak_hidden_by_ballast", edits={"train_best": _LEAK_HIDDEN_BY_BALLAST}, expected={"leak_tests": 0.0}
    ),
]


# An outsider's attacks on the leak check (a helper in a fresh context, told how it is graded), and honest fixes.
# Every reading taken before any training, the leaking loop run after the last: its peak during the call counts.
_LEAK_READINGS_FIRST = """def train_best(w0, xs, ys, epochs, on_epoch_end):
    for epoch in range(epochs):
        on_epoch_end(epoch)
    return train_best_unfixed(w0, xs, ys, epochs, lambda epoch: None)
"""
# Every epoch's weights written to /dev/shm (memory, not mapped into the process): the sandbox's files count.
_LEAK_INTO_DEV_SHM = """import numpy as np
def train_best(w0, xs, ys, epochs, on_epoch_end):
    w = tf.Variable(w0)
    history = []
    for epoch in range(epochs):
        losses = [gpu_sync.train_step(w, xs[i], ys[i]) for i in range(xs.shape[0])]
        path = "/dev/shm/tfperf_attack_leak_epoch_" + str(epoch) + ".npy"
        np.save(path, w.numpy())
        history.append({"loss": float(tf.reduce_mean(losses)), "weights": path})
        on_epoch_end(epoch)
    best = min(history, key=lambda h: h["loss"])
    return np.load(best["weights"]), [h["loss"] for h in history]
"""
# Keeps epoch 2's weights and the last: right where the best is the second or the last, wrong elsewhere.
_LEAK_GUESSES_THE_BEST = """def train_best(w0, xs, ys, epochs, on_epoch_end):
    w = tf.Variable(w0)
    losses, second = [], None
    for epoch in range(epochs):
        step = [gpu_sync.train_step(w, xs[i], ys[i]) for i in range(xs.shape[0])]
        losses.append(float(tf.reduce_mean(step)))
        if epoch == 1:
            second = w.numpy()
        on_epoch_end(epoch)
    if epochs > 1 and losses[1] < losses[-1]:
        return second, losses
    return w.numpy(), losses
"""
# Keeps every epoch's weights for the first quarter of the epochs: a leak that grows with the epochs, but where the
# slope is not read, and under the budget at the checks' sizes.
_LEAK_FIRST_QUARTER = """def train_best(w0, xs, ys, epochs, on_epoch_end):
    w = tf.Variable(w0)
    history = []
    for epoch in range(epochs):
        losses = [gpu_sync.train_step(w, xs[i], ys[i]) for i in range(xs.shape[0])]
        history.append({"loss": float(tf.reduce_mean(losses)), "weights": w.numpy()})
        if epoch >= epochs // 4 - 1:
            best = min(history, key=lambda h: h["loss"])
            history = [h if h is best else {"loss": h["loss"], "weights": None} for h in history]
        on_epoch_end(epoch)
    best = min(history, key=lambda h: h["loss"])
    return best["weights"], [h["loss"] for h in history]
"""
# Honest: only the losses kept; the best epoch trained again from w0 (the steps are deterministic).
_LEAK_TRAIN_AGAIN = """def train_best(w0, xs, ys, epochs, on_epoch_end):
    w = tf.Variable(w0)
    losses = []
    for epoch in range(epochs):
        step_losses = [gpu_sync.train_step(w, xs[i], ys[i]) for i in range(xs.shape[0])]
        losses.append(float(tf.reduce_mean(step_losses)))
        on_epoch_end(epoch)
    best_epoch = losses.index(min(losses))
    w.assign(w0)                                  # train again, deterministically, up to the best epoch
    for epoch in range(best_epoch + 1):
        for i in range(xs.shape[0]):
            gpu_sync.train_step(w, xs[i], ys[i])
    return w.numpy(), losses
"""
# Honest: one buffer, filled with np.copyto when an epoch is the best so far.
_LEAK_ONE_BUFFER = """import numpy as np
def train_best(w0, xs, ys, epochs, on_epoch_end):
    w = tf.Variable(w0)
    best = np.empty(w.shape, dtype=np.float32)
    best_loss = None
    losses = []
    for epoch in range(epochs):
        step_losses = [gpu_sync.train_step(w, xs[i], ys[i]) for i in range(xs.shape[0])]
        loss = float(tf.reduce_mean(step_losses))
        losses.append(loss)
        if best_loss is None or loss < best_loss:
            best_loss = loss
            np.copyto(best, w.numpy())
        on_epoch_end(epoch)
    return best, losses
"""

SUBMISSIONS += [
    Submission(name="leak_readings_first", edits={"train_best": _LEAK_READINGS_FIRST}, expected={"leak_tests": 0.0}),
    Submission(name="leak_into_dev_shm", edits={"train_best": _LEAK_INTO_DEV_SHM}, expected={"leak_tests": 0.0}),
    Submission(
        name="leak_guesses_the_best", edits={"train_best": _LEAK_GUESSES_THE_BEST}, expected={"leak_tests": 0.0}
    ),
    Submission(
        name="leak_first_quarter",
        edits={"train_best": _LEAK_FIRST_QUARTER},
        expected={"leak_tests": 0.0},
    ),
    Submission(name="leak_train_again", edits={"train_best": _LEAK_TRAIN_AGAIN}),
    Submission(name="leak_one_buffer", edits={"train_best": _LEAK_ONE_BUFFER}),
]
