"""Round-trip cases for chapter 2: the unfixed code and plausible wrong answers must fail."""

from tests.grading.submission import Submission

_PREDICT_BODY = """
    for _ in range(steps):
        x = tf.tanh(tf.matmul(x, W_refine))
    return x
"""

_STEP_BODY = """
    with tf.GradientTape() as tape:
        loss = eg.mlp_loss(params, x, y)
    grads = tape.gradient(loss, params)
    for p, g in zip(params, grads):
        p.assign_sub(lr * g)
    return loss
"""

SUBMISSIONS = [
    # Concept checks: one wrong letter; the three right ones score.
    Submission(
        "concepts_one_wrong",
        {
            "concepts": 'python_int_argument = "a"\nprint_in_function = "d"\ngraph_on_large_ops = "a"\nfunction_in_loop = "c"'
        },
        {"concepts_python_int_argument": 0},
    ),
    # Honest: every letter right, assigned in one statement (the visible check records each; issue 47's red team saw
    # the grading process score it 0).
    Submission(
        "concepts: the four letters in one tuple assignment (honest)",
        {
            "concepts": 'python_int_argument, print_in_function, graph_on_large_ops, function_in_loop = "b", "d", "a", '
            '"c"'
        },
    ),
    # Exercise 1: predict must trace once.
    Submission(
        name="predict: the unfixed tf.function (Python int steps)",
        edits={"predict": "@tf.function\ndef predict(x, steps):" + _PREDICT_BODY},
        expected={"predict_tests": 0.0},
    ),
    Submission(
        name="predict: reduce_retracing=True alone",
        edits={"predict": "@tf.function(reduce_retracing=True)\ndef predict(x, steps):" + _PREDICT_BODY},
        expected={"predict_tests": 0.0},
    ),
    Submission(
        name="predict: eager, no tf.function",
        edits={"predict": "def predict(x, steps):" + _PREDICT_BODY},
        expected={"predict_tests": 0.0},
    ),
    Submission(
        name="predict: a new tf.function created on every call",
        edits={
            "predict": "def _predict(x, steps):"
            + _PREDICT_BODY
            + "\n\ndef predict(x, steps):\n    return tf.function(_predict)(x, tf.constant(steps))\n"
        },
        expected={"predict_tests": 0.0},
    ),
    Submission(
        name="predict: input_signature with a fixed batch size",
        edits={
            "predict": "@tf.function(input_signature=[tf.TensorSpec([32, D], tf.float32), tf.TensorSpec([], tf.int32)])\n"
            "def predict(x, steps):\n    for _ in tf.range(steps):\n        x = tf.tanh(tf.matmul(x, W_refine))\n"
            "    return x\n"
        },
        expected={"predict_tests": 0.0},
    ),
    # Exercise 2: total_logged must log on every call.
    Submission(
        name="total_logged: Python print (runs only while tracing)",
        edits={
            "total_logged": "@tf.function\ndef total_logged(x):\n    total = tf.reduce_sum(x)\n"
            '    print("total:", total)\n    return total\n'
        },
        expected={"total_logged_tests": 0.0},
    ),
    Submission(
        name="total_logged: print of .numpy() inside the graph",
        edits={
            "total_logged": "@tf.function\ndef total_logged(x):\n    total = tf.reduce_sum(x)\n"
            '    print("total:", total.numpy())\n    return total\n'
        },
        expected={"total_logged_tests": 0.0},
    ),
    Submission(
        name="total_logged: tf.print of the input instead of the total",
        edits={
            "total_logged": '@tf.function\ndef total_logged(x):\n    tf.print("total:", x)\n'
            "    return tf.reduce_sum(x)\n"
        },
        expected={"total_logged_tests": 0.0},
    ),
    Submission(
        name="total_logged: eager, no tf.function",
        edits={
            "total_logged": "def total_logged(x):\n    total = tf.reduce_sum(x)\n"
            '    print("total:", total.numpy())\n    return total\n'
        },
        expected={"total_logged_tests": 0.0},
    ),
    # Exercise 3: train_step must trace once, with the same trained weights.
    Submission(
        name="train: the unfixed loop (Python float learning rate)",
        edits={
            "train": "@tf.function\ndef train_step(params, x, y, lr):"
            + _STEP_BODY
            + "\n\ndef train(initial, x, y, lr0, steps):\n    params = [tf.Variable(w) for w in initial]\n"
            "    for step in range(steps):\n        train_step(params, x, y, lr0 * 0.9 ** step)\n"
            "    return [p.read_value() for p in params]\n"
        },
        expected={"train_tests": 0.0},
    ),
    Submission(
        name="train: reduce_retracing=True alone",
        edits={
            "train": "@tf.function(reduce_retracing=True)\ndef train_step(params, x, y, lr):"
            + _STEP_BODY
            + "\n\ndef train(initial, x, y, lr0, steps):\n    params = [tf.Variable(w) for w in initial]\n"
            "    for step in range(steps):\n        train_step(params, x, y, lr0 * 0.9 ** step)\n"
            "    return [p.read_value() for p in params]\n"
        },
        expected={"train_tests": 0.0},
    ),
    Submission(
        name="train: a new tf.function created inside the loop",
        edits={
            "train": "def train_step(params, x, y, lr):"
            + _STEP_BODY
            + "\n\ndef train(initial, x, y, lr0, steps):\n    params = [tf.Variable(w) for w in initial]\n"
            "    for step in range(steps):\n        tf.function(train_step)(params, x, y, tf.constant(lr0 * 0.9 ** step))\n"
            "    return [p.read_value() for p in params]\n"
        },
        expected={"train_tests": 0.0},
    ),
    Submission(
        name="train: the tf.function re-wrapped inside the loop",
        edits={
            "train": "@tf.function\ndef train_step(params, x, y, lr):"
            + _STEP_BODY
            + "\n\ndef train(initial, x, y, lr0, steps):\n    params = [tf.Variable(w) for w in initial]\n"
            "    for step in range(steps):\n        tf.function(train_step)(params, x, y, tf.constant(lr0 * 0.9 ** step))\n"
            "    return [p.read_value() for p in params]\n"
        },
        expected={"train_tests": 0.0},
    ),
    Submission(
        name="train: a tensor learning rate without the schedule",
        edits={
            "train": "@tf.function\ndef train_step(params, x, y, lr):"
            + _STEP_BODY
            + "\n\ndef train(initial, x, y, lr0, steps):\n    params = [tf.Variable(w) for w in initial]\n"
            "    lr = tf.constant(lr0)\n    for step in range(steps):\n        train_step(params, x, y, lr)\n"
            "    return [p.read_value() for p in params]\n"
        },
        expected={"train_tests": 0.0},
    ),
]


# An honest answer whose test cell was renamed: nbgrader puts the instructor's cell back, full points.
SUBMISSIONS += [
    Submission("total_logged_tests_renamed", metadata_edits={"total_logged_tests": {"grade_id": "my_tests"}}),
]
