"""Round-trip cases of chapter 5 (05_gpu_sync): the unfixed loop and the plausible wrong answers."""

from tests.grading.submission import Submission

_UNFIXED = '''def train(w0, xs, ys, report, every):
    w = tf.Variable(w0)
    for step in range(xs.shape[0]):
        loss = gpu_sync.train_step(w, xs[step], ys[step])
        report(step, loss.numpy())
    return w.read_value()
'''

_FLOAT_EVERY_STEP = '''def train(w0, xs, ys, report, every):
    w = tf.Variable(w0)
    steps = xs.shape[0]
    for step in range(steps):
        loss = float(gpu_sync.train_step(w, xs[step], ys[step]))   # float() is a sync point too
        if (step + 1) % every == 0 or step == steps - 1:
            report(step, loss)
    return w.read_value()
'''

_NUMPY_IN_TF_FUNCTION = '''@tf.function
def train_block(w, xs, ys, report, start):
    for i in tf.range(tf.shape(xs)[0]):
        loss = gpu_sync.train_step(w, xs[i], ys[i])
    report(start + xs.shape[0] - 1, loss.numpy())   # no value while tracing

def train(w0, xs, ys, report, every):
    w = tf.Variable(w0)
    for start in range(0, xs.shape[0], every):
        train_block(w, xs[start:start + every], ys[start:start + every], report, start)
    return w.read_value()
'''

_TF_PRINT_EVERY_STEP = '''@tf.function
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
'''

_READ_EVERY_N_IN_PYTHON = '''def train(w0, xs, ys, report, every):
    w = tf.Variable(w0)
    steps = xs.shape[0]
    for step in range(steps):
        loss = gpu_sync.train_step(w, xs[step], ys[step])
        if (step + 1) % every == 0 or step == steps - 1:
            report(step, loss.numpy())
    return w.read_value()
'''

SUBMISSIONS = [
    Submission(name="unfixed", edits={"train": _UNFIXED},
               expected={"train_tests": 0.0, "train_speed_tests": 0.0}),
    Submission(name="float_instead_of_numpy", edits={"train": _FLOAT_EVERY_STEP},
               expected={"train_tests": 0.0, "train_speed_tests": 0.0}),
    Submission(name="numpy_inside_tf_function", edits={"train": _NUMPY_IN_TF_FUNCTION},
               expected={"train_tests": 0.0, "train_speed_tests": 0.0}),
    # Prints on every step: fails the printing checks of both cells. (Its timed speed depends on
    # where the output goes: about 10.7x with output to a file in a plain Python process, about
    # 1.1x in nbgrader's kernel on the CI machine; the speed cell checks printing first.)
    Submission(name="tf_print_every_step", edits={"train": _TF_PRINT_EVERY_STEP},
               expected={"train_tests": 0.0, "train_speed_tests": 0.0}),
    # Syncs only every N steps but keeps the Python loop: structurally right (full points),
    # too slow on a CPU (about 1.0x; the CPU target needs the in-graph loop).
    Submission(name="reads_every_n_in_python_loop", edits={"train": _READ_EVERY_N_IN_PYTHON},
               expected={"train_speed_tests": 0.0}),
]

# Exercise 2 (the slowdown).
_EPOCHS_UNFIXED = '''def train_epochs(w0, xs, ys, epochs, on_epoch_end):
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
'''

# Moves the tf.function out of the loop and relaxes shapes: the list still grows, so it still retraces.
_EPOCHS_REDUCE_RETRACING = '''@tf.function(reduce_retracing=True)
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
'''

# No retracing any more, but the mean of the last epoch only: wrong results.
_EPOCHS_EPOCH_MEAN = '''def train_epochs(w0, xs, ys, epochs, on_epoch_end):
    w = tf.Variable(w0)
    running = []
    for epoch in range(epochs):
        total = tf.constant(0.0)
        for i in range(xs.shape[0]):
            total += gpu_sync.train_step(w, xs[i], ys[i])
        running.append(total / xs.shape[0])
        on_epoch_end(epoch)
    return w.read_value(), tf.stack(running)
'''

SUBMISSIONS += [
    Submission(name="epochs_unfixed", edits={"train_epochs": _EPOCHS_UNFIXED},
               expected={"train_epochs_tests": 0.0}),
    Submission(name="epochs_reduce_retracing", edits={"train_epochs": _EPOCHS_REDUCE_RETRACING},
               expected={"train_epochs_tests": 0.0}),
    Submission(name="epochs_mean_of_each_epoch", edits={"train_epochs": _EPOCHS_EPOCH_MEAN},
               expected={"train_epochs_tests": 0.0}),
]
