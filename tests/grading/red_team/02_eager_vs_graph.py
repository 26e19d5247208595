"""Red team, chapter 2: answers that avoid retracing without making the work one traced graph.

Classes of the grading-integrity issue: (1) remembering, (2) changing what the grader reads,
(4) fooling a counter, (5) the wrong idea.
"""

from tests.grading.submission import Submission

_STEP = """
@tf.function
def train_step(params, x, y, lr):
    with tf.GradientTape() as tape:
        loss = eg.mlp_loss(params, x, y)
    grads = tape.gradient(loss, params)
    for p, g in zip(params, grads):
        p.assign_sub(lr * g)
    return loss
"""

_TRAIN = (
    _STEP
    + """
def train(initial, x, y, lr0, steps):
    params = [tf.Variable(w) for w in initial]
    for step in range(steps):
        train_step(params, x, y, tf.constant(lr0 * 0.9 ** step, tf.float32))
    return [p.read_value() for p in params]
"""
)

_EAGER_STEP = """
def eager_step(params, x, y, lr):
    with tf.GradientTape() as tape:
        loss = eg.mlp_loss(params, x, y)
    grads = tape.gradient(loss, params)
    for p, g in zip(params, grads):
        p.assign_sub(lr * g)
    return loss
"""

RED_TEAM = [
    # (1) Remembers trained weights per learning rate, computing them with the unfixed loop.
    Submission(
        "red1_train_memo_by_learning_rate",
        {
            "train": _STEP
            + """
_memo = {}
def train(initial, x, y, lr0, steps):
    if (lr0, steps) not in _memo:
        _memo[(lr0, steps)] = train_unfixed(initial, x, y, lr0, steps)
    return _memo[(lr0, steps)]
"""
        },
        {"train_tests": 0},
    ),
    # (4, 5) Traces train_step once, then trains eagerly: no retracing, but the step is not a graph.
    Submission(
        "red5_train_eager_after_one_trace",
        {
            "train": _STEP
            + _EAGER_STEP
            + """
train_step([tf.Variable(w) for w in INITIAL], X_TRAIN, Y_TRAIN, tf.constant(0.1))
def train(initial, x, y, lr0, steps):
    params = [tf.Variable(w) for w in initial]
    for step in range(steps):
        eager_step(params, x, y, lr0 * 0.9 ** step)
    return [p.read_value() for p in params]
"""
        },
        {"train_tests": 0},
    ),
    # (5) Runs the graph for the first step only, then eagerly.
    Submission(
        "red5_train_graph_for_the_first_step_only",
        {
            "train": _STEP
            + _EAGER_STEP
            + """
def train(initial, x, y, lr0, steps):
    params = [tf.Variable(w) for w in initial]
    for step in range(steps):
        lr = tf.constant(lr0 * 0.9 ** step, tf.float32)
        (train_step if step == 0 else eager_step)(params, x, y, lr)
    return [p.read_value() for p in params]
"""
        },
        {"train_tests": 0},
    ),
    # (2) Makes every tf.function run eagerly: the baseline then never retraces.
    Submission(
        "red2_run_functions_eagerly",
        {
            "train": _TRAIN
            + """
tf.config.run_functions_eagerly(True)
"""
        },
        {"train_tests": 0},
    ),
    # (2) Leaves a thread running beside the timing.
    Submission(
        "red2_background_thread",
        {
            "train": _TRAIN
            + """
import threading, time
threading.Thread(target=time.sleep, args=(3600,), name="helper", daemon=True).start()
"""
        },
        {"train_tests": 0},
    ),
    # (2) Replaces the given baseline with a slower one.
    Submission(
        "red2_redefines_the_baseline",
        {
            "train": _TRAIN
            + """
import time
_given_train_unfixed = train_unfixed
def train_unfixed(*args):
    time.sleep(0.2)
    return _given_train_unfixed(*args)
"""
        },
        {"train_tests": 0},
    ),
    # (4) A plain function that fakes a tf.function's tracing count.
    Submission(
        "red4_predict_fakes_the_tracing_count",
        {
            "predict": """
class _Predict:
    def __call__(self, x, steps):
        for _ in range(steps):
            x = tf.tanh(tf.matmul(x, W_refine))
        return x

    def experimental_get_tracing_count(self):
        return 1

predict = _Predict()
"""
        },
        {"predict_tests": 0},
    ),
    # (1) Remembers traces: steps stays a Python int (one unrolled graph per step count), and the answer cell
    #     traces predict ahead for every step count a request can ask for, so no call of the checks traces
    #     and no timed call either. It earned full marks; TensorFlow's own count since predict was made (40
    #     traces) now fails it.
    Submission(
        "red1_predict_traced_ahead",
        {
            "predict": """
@tf.function(reduce_retracing=True)
def predict(x, steps):
    for _ in range(steps):
        x = tf.tanh(tf.matmul(x, W_refine))
    return x


for steps in range(1, 21):
    for batch in (1, 2):
        predict(tf.zeros([batch, D]), steps)
"""
        },
        {"predict_tests": 0},
    ),
]
