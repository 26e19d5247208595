"""Round-trip cases of chapter 3 (03_keras_fit): the unfixed code, plausible wrong answers, and
attempts to fool the checks, each with the points a fair grader gives.

Exercise 1: classifier_tests (2, accuracy), classifier_output_tests (1, probabilities and a loss
that agrees). Exercise 2: predict_fast_tests (2, results and runs of the model),
predict_fast_speed_tests (1). Exercise 3: fixed_step_tests (2, weights and History),
fixed_step_sync_tests (2, compiled step without host reads, nothing printed),
fixed_step_speed_tests (2).

Memoizing: every timed call gets new inputs (``make_inputs``) and every result is compared,
so a cache keyed on the inputs' content can only answer by computing (a correct answer); a
cache keyed on something coarser (the request's size) is listed for exercise 2. Exercise 3's
``train`` builds a new model and compiles it for every call, so a step has nothing to reuse.
"""

from tests.grading.submission import Submission

# --- Exercise 1: output activation, loss and labels -------------------------------------

_MODEL = """def make_model():
    model = keras.Sequential([
        keras.Input((keras_fit.FEATURES,)),
        keras.layers.Dense(32, activation="relu"),
        keras.layers.Dense(keras_fit.CLASSES{activation}),
    ])
    model.compile(optimizer=keras.optimizers.Adam(0.01), loss={loss}, metrics=["accuracy"])
    return model
"""


def _model(activation: str | None, loss: str) -> str:
    return _MODEL.format(activation=f", activation={activation!r}" if activation else "", loss=loss)


_UNIFORM = """def make_model():
    model = keras.Sequential([
        keras.Input((keras_fit.FEATURES,)),
        keras.layers.Dense(32, activation="relu"),
        keras.layers.Dense(keras_fit.CLASSES, activation="softmax", kernel_initializer="zeros", trainable=False),
    ])
    model.compile(optimizer=keras.optimizers.Adam(0.01), loss=keras.losses.SparseCategoricalCrossentropy())
    return model
"""

SUBMISSIONS = [
    # Concept checks: the from_logits trap for probabilities; the three others right.
    Submission(
        "concepts_from_logits_trap",
        {
            "concepts": 'loss_for_integer_labels = "c"\ntrain_step_python_runs = "c"\n'
            'steps_per_execution = "a"\ngradient_tape = "d"'
        },
        {"concepts_loss_for_integer_labels": 0},
    ),
    Submission(
        "classifier_unfixed",
        {"make_model": _model(None, "keras.losses.SparseCategoricalCrossentropy()")},
        {"classifier_tests": 0, "classifier_output_tests": 0},
    ),
    # Keras 3 trains a sigmoid output through its logits (_keras_logits), so the accuracy is reached;
    # predict() then returns one sigmoid per class, rows not summing to 1.
    Submission(
        "sigmoid_output_with_sparse_labels",
        {"make_model": _model("sigmoid", "keras.losses.SparseCategoricalCrossentropy()")},
        {"classifier_output_tests": 0},
    ),
    # from_logits=True on a softmax output: Keras repairs it and warns; the check flags the warning.
    Submission(
        "from_logits_true_on_softmax_output",
        {"make_model": _model("softmax", "keras.losses.SparseCategoricalCrossentropy(from_logits=True)")},
        {"classifier_output_tests": 0},
    ),
    # Logits with from_logits=True: trains well, but predict() returns logits, not probabilities.
    Submission(
        "logits_with_from_logits_true",
        {"make_model": _model(None, "keras.losses.SparseCategoricalCrossentropy(from_logits=True)")},
        {"classifier_output_tests": 0},
    ),
    # The categorical loss with integer labels: a shape error when training.
    Submission(
        "categorical_loss_with_integer_labels",
        {"make_model": _model("softmax", "keras.losses.CategoricalCrossentropy()")},
        {"classifier_tests": 0, "classifier_output_tests": 0},
    ),
    # Fooling the output check: valid, uniform probabilities from an untrained output layer.
    Submission(
        "uniform_probabilities", {"make_model": _UNIFORM}, {"classifier_tests": 0, "classifier_output_tests": 0}
    ),
]

# --- Exercise 2: predictions without the per-sample loop --------------------------------

_PREDICT_UNFIXED = """def predict_fast(model, x):
    return np.concatenate([model.predict(x[i:i + 1], verbose=0) for i in range(len(x))])
"""

_PREDICT_BATCH_SIZE_1 = """def predict_fast(model, x):
    return model.predict(x, batch_size=1, verbose=0)        # one call, but one run per sample
"""

_PREDICT_SLICES = """def predict_fast(model, x):
    return np.concatenate([model.predict(x[i:i + 8], verbose=0) for i in range(0, len(x), 8)])
"""

_CALL_PER_SAMPLE = """def predict_fast(model, x):
    return np.concatenate([model(x[i:i + 1], training=False).numpy() for i in range(len(x))])
"""

_PREDICT_ONCE = """def predict_fast(model, x):
    return model.predict(x, verbose=0)
"""

_NUMPY_REIMPLEMENTATION = """def predict_fast(model, x):
    (w1, b1), (w2, b2) = model.layers[0].get_weights(), model.layers[1].get_weights()
    logits = np.maximum(x @ w1 + b1, 0) @ w2 + b2
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    return (e / e.sum(axis=1, keepdims=True)).astype(np.float32)
"""

_COUNTER_SWITCHED_OFF = """def predict_fast(model, x):
    model.layers[-1].call = lambda inputs: inputs           # stop the run counter
    return model(x, training=False).numpy()
"""

_BASELINE_SLOWED = """import time

def _slow_predict(x, **kwargs):
    time.sleep(0.05)
    return keras.Sequential.predict(PREDICTOR, x, **kwargs)

PREDICTOR.predict = _slow_predict                           # slows predict_unfixed only

def predict_fast(model, x):
    return np.concatenate([model(x[i:i + 1], training=False).numpy() for i in range(len(x))])
"""

_EXPECTED_PATCHED = """def _agreeing_predict(self, x, **kwargs):
    return np.full((len(x), keras_fit.CLASSES), 1 / keras_fit.CLASSES, np.float32)

keras.Model.predict = _agreeing_predict            # the check's expected values would be this answer's

def predict_fast(model, x):
    return np.full((len(x), keras_fit.CLASSES), 1 / keras_fit.CLASSES, np.float32)
"""

_MEMOIZED_BY_SIZE = """_answers = {}

def predict_fast(model, x):
    key = (id(model), len(x))                               # the same size: the same answer
    if key not in _answers:
        _answers[key] = model(x, training=False).numpy()
    return _answers[key]
"""

_SKIP_WORK = """def predict_fast(model, x):
    return np.full((len(x), keras_fit.CLASSES), 1 / keras_fit.CLASSES, np.float32)   # valid probabilities, no model
"""

SUBMISSIONS += [
    Submission(
        "predict_unfixed", {"predict_fast": _PREDICT_UNFIXED}, {"predict_fast_tests": 0, "predict_fast_speed_tests": 0}
    ),
    # One predict() call: faster than the loop (speed point), but the model runs once per sample.
    Submission("predict_batch_size_1", {"predict_fast": _PREDICT_BATCH_SIZE_1}, {"predict_fast_tests": 0}),
    # predict() in a Python loop over slices of 8: fine for 8 samples, 5 runs for 40 (hidden).
    Submission("predict_in_a_loop_over_slices", {"predict_fast": _PREDICT_SLICES}, {"predict_fast_tests": 0}),
    Submission("model_call_per_sample", {"predict_fast": _CALL_PER_SAMPLE}, {"predict_fast_tests": 0}),
    # One batched predict(): a correct fast path (the target is set below its ratio).
    Submission("predict_once", {"predict_fast": _PREDICT_ONCE}),
    # Reaching the value by another path: right numbers, fast, but the model never runs.
    Submission("numpy_reimplementation", {"predict_fast": _NUMPY_REIMPLEMENTATION}, {"predict_fast_tests": 0}),
    # Memoizing by request size: right for the first request of each size, stale afterwards.
    Submission(
        "memoized_by_request_size",
        {"predict_fast": _MEMOIZED_BY_SIZE},
        {"predict_fast_tests": 0, "predict_fast_speed_tests": 0},
    ),
    # Skipping the work: uniform probabilities without running the model.
    Submission(
        "uniform_answer_without_the_model",
        {"predict_fast": _SKIP_WORK},
        {"predict_fast_tests": 0, "predict_fast_speed_tests": 0},
    ),
    # Patching what the check reads: Keras's predict(), which computes the expected probabilities, made to agree
    # with a wrong answer. The static screen flags the assignment (an imported module's attribute), so the exercise
    # scores 0 before it runs (no worker is started for it in the round trip's log).
    Submission(
        "expected_values_patched_to_agree",
        {"predict_fast": _EXPECTED_PATCHED},
        {"predict_fast_tests": 0, "predict_fast_speed_tests": 0},
    ),
    # Switching the counter off: the counter refuses to be read.
    # The course's run counter switched off: the answer runs restricted, and its write to the course's own layer is
    # refused, so the answer raises and both checks fail (the speed check's points went to it before).
    Submission(
        "run_counter_switched_off",
        {"predict_fast": _COUNTER_SWITCHED_OFF},
        {"predict_fast_tests": 0, "predict_fast_speed_tests": 0},
    ),
    # Slowing the baseline through the given model object: caught by assert_keras_pristine(models=...).
    Submission(
        "baseline_slowed_on_the_model",
        {"predict_fast": _BASELINE_SLOWED},
        {"predict_fast_tests": 0, "predict_fast_speed_tests": 0},
    ),
]

# --- Exercise 3: the incident's train_step ----------------------------------------------

_STEP = """class FixedModel(keras.Sequential):
{init}
    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            y_pred = self(x, training=True)
            loss = self.compute_loss(x=x, y=y, y_pred=y_pred)
        gradients = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(gradients, self.trainable_variables))
{report}

def compile_fixed(model):
    model.compile(optimizer=keras.optimizers.SGD(0.05),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True){options})
"""

_TRACKER = """    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.loss_tracker = keras.metrics.Mean(name="loss")
"""
_REPORT_TRACKER = """        self.loss_tracker.update_state(loss)
        return {"loss": self.loss_tracker.result()}"""


def _step(report: str, *, init: str = "", options: str = "") -> str:
    return _STEP.format(init=init, report=report, options=options)


_DEFAULT_STEP_WITH_SPE = """class FixedModel(keras.Sequential):
    pass                                   # Keras's own train_step updates its loss tracker

def compile_fixed(model):
    model.compile(optimizer=keras.optimizers.SGD(0.05),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True), steps_per_execution=8)
"""

_SKIP_UPDATE = _step(_REPORT_TRACKER, init=_TRACKER).replace(
    "        self.optimizer.apply_gradients(zip(gradients, self.trainable_variables))\n", ""
)

_FIT_SLOWED_FOR_EAGER_MODELS = (
    _step(_REPORT_TRACKER, init=_TRACKER)
    + """
import time
_fit = keras.Model.fit

def _fit_slowed(self, *args, **kwargs):
    if self.run_eagerly:
        time.sleep(0.5)                    # only the unfixed, eager baseline pays
    return _fit(self, *args, **kwargs)

keras.Model.fit = _fit_slowed
"""
)

SUBMISSIONS += [
    Submission(
        "train_step_unfixed",
        {
            "fixed_step": _step(
                """        print("loss", loss.numpy())
        return {"loss": loss}""",
                options=", run_eagerly=True",
            )
        },
        {"fixed_step_tests": 0, "fixed_step_sync_tests": 0, "fixed_step_speed_tests": 0},
    ),
    # The metric fix, but still run_eagerly=True: right results, every step eager and slow.
    Submission(
        "metric_but_run_eagerly",
        {"fixed_step": _step(_REPORT_TRACKER, init=_TRACKER, options=", run_eagerly=True")},
        {"fixed_step_sync_tests": 0, "fixed_step_speed_tests": 0},
    ),
    # tf.print on every step when the exercise asks for no printing.
    Submission(
        "tf_print_every_step",
        {
            "fixed_step": _step(
                """        tf.print("loss", loss)
        self.loss_tracker.update_state(loss)
        return {"loss": self.loss_tracker.result()}""",
                init=_TRACKER,
            )
        },
        {"fixed_step_tests": 0, "fixed_step_sync_tests": 0, "fixed_step_speed_tests": 0},
    ),
    # Red team: tf.print on every step, traced into the step only where nothing captures the output (sys.stdout
    # is then not a StringIO): quiet in every check of the worker, caught by the grading process reading
    # the worker's real output while it calls train once more.
    Submission(
        "red3_tf_print_only_while_not_captured",
        {
            "fixed_step": "import sys\n\n"
            + _step(
                """        if type(sys.stdout).__name__ != "StringIO":
            tf.print("loss", loss)
        self.loss_tracker.update_state(loss)
        return {"loss": self.loss_tracker.result()}""",
                init=_TRACKER,
            )
        },
        {"fixed_step_tests": 0, "fixed_step_sync_tests": 0, "fixed_step_speed_tests": 0},
    ),
    # Python print without .numpy(): prints once per trace, a symbolic tensor, not the loss.
    Submission(
        "python_print_in_compiled_step",
        {
            "fixed_step": _step(
                """        print("loss", loss)
        self.loss_tracker.update_state(loss)
        return {"loss": self.loss_tracker.result()}""",
                init=_TRACKER,
            )
        },
        {"fixed_step_tests": 0, "fixed_step_sync_tests": 0, "fixed_step_speed_tests": 0},
    ),
    # Compiled and quiet, but returns the step's loss without a metric: History reports 0.
    Submission(
        "loss_returned_without_metric",
        {"fixed_step": _step("""        return {"loss": loss}""")},
        {"fixed_step_tests": 0},
    ),
    # A host read hidden in a Python callback inside the compiled step, printing nothing: the
    # results and the speed are right, the sync check counts the callback.
    Submission(
        "py_function_reads_the_loss",
        {
            "fixed_step": "seen_losses = []\n\n"
            + _step(
                """        tf.py_function(lambda value: seen_losses.append(float(value)), [loss], [])
        self.loss_tracker.update_state(loss)
        return {"loss": self.loss_tracker.result()}""",
                init=_TRACKER,
            )
        },
        {"fixed_step_sync_tests": 0},
    ),
    # Skipping work: a compiled, quiet step that never updates the weights (fast, and wrong).
    Submission(
        "step_without_the_update", {"fixed_step": _SKIP_UPDATE}, {"fixed_step_tests": 0, "fixed_step_speed_tests": 0}
    ),
    # Correct alternative: Keras's own step, N steps per call.
    Submission("default_train_step_with_steps_per_execution", {"fixed_step": _DEFAULT_STEP_WITH_SPE}),
    # Slowing the eager baseline by patching keras.Model.fit: the grading environment was modified.
    Submission(
        "keras_fit_patched_to_slow_the_baseline",
        {"fixed_step": _FIT_SLOWED_FOR_EAGER_MODELS},
        {"fixed_step_tests": 0, "fixed_step_sync_tests": 0, "fixed_step_speed_tests": 0},
    ),
]
