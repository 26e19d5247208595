"""Round-trip cases of chapter 6 (06_device_ceilings). Exercise 1: activation_tests (3: same results, at most a third
of the bytes), activation_speed_tests (2): the unfused step, a rewrite that still runs op by op, and an honest
alternative (other values fail check_same_as, as in every chapter). Exercise 2: mixed_tests (2: float16 compute,
float32 variables and output, loss scaling, the global policy restored), mixed_accuracy_tests (1), mixed_speed_tests
(2: the wide model's structure; its speed only where float16 matmuls pay, never on this CPU): the float32
model, per-layer dtypes without loss scaling, a float16 output, a policy left behind, an honest alternative,
a mixed model that trains badly, and two red-team answers (the width ignored; Keras's step replaced on the
model). Exercise 3: place_tests (2: the regime), place_floor_tests (1: the floor):
the eager op's cost as the overhead floor, the ridge point without the overhead floor, the sum of the floors as
the time, and an honest alternative by arithmetic intensity."""

from tests.grading.submission import Submission

_CHAIN = """    y = x * scale + shift
    return 0.5 * y * (1.0 + tf.tanh(0.7978845608 * (y + 0.044715 * y * y * y)))
"""

#: The given architecture with every layer but the softmax in mixed_float16, the global policy left at float32.
_MIXED_LAYERS = """def make_mixed_model(seed=0, width=128):
    keras.utils.set_random_seed(seed)
    model = keras.Sequential([keras.Input((FEATURES,)),
                              keras.layers.Dense(width, activation="relu", dtype="mixed_float16"),
                              keras.layers.Dense(width, activation="relu", dtype="mixed_float16"),
                              keras.layers.Dense(CLASSES, dtype="mixed_float16"),
                              keras.layers.Activation("softmax", dtype="float32")])
"""
_COMPILED = """    model.compile(optimizer={optimizer}, loss="sparse_categorical_crossentropy")
    return model
"""
_SCALED = "keras.optimizers.LossScaleOptimizer(keras.optimizers.Adam(1e-3))"

SUBMISSIONS = [
    # Concept checks: two wrong letters; the right ones score.
    Submission(
        "concepts_two_wrong",
        {
            "concepts": 'regime_of_a_constant_time = "a"\nwhat_fusion_saves = "b"\nmixed_policy_dtypes = "d"\n'
            'why_loss_scaling = "a"'
        },
        {"concepts_regime_of_a_constant_time": 0, "concepts_mixed_policy_dtypes": 0},
    ),
    # The unfixed step under a new name: a graph, op by op.
    Submission(
        "unfixed",
        {"activation": "@tf.function\ndef activation(x, scale, shift):\n" + _CHAIN},
        {"activation_tests": 0, "activation_speed_tests": 0},
    ),
    # A rewrite with TensorFlow's own GELU: shorter code, the same ops run one at a time.
    Submission(
        "builtin_gelu_op_by_op",
        {
            "activation": "@tf.function\ndef activation(x, scale, shift):\n"
            "    return tf.nn.gelu(x * scale + shift, approximate=True)\n"
        },
        {"activation_tests": 0, "activation_speed_tests": 0},
    ),
    # Honest alternative: TensorFlow's own tanh-form GELU, compiled by XLA: fused, same values.
    Submission(
        "builtin_gelu_fused",
        {
            "activation": "@tf.function(jit_compile=True)\ndef activation(x, scale, shift):\n"
            "    return tf.nn.gelu(x * scale + shift, approximate=True)\n"
        },
        {},
    ),
    # Exercise 2 unfixed: the float32 model under the new name.
    Submission(
        "mixed: the float32 model",
        {"mixed": "make_mixed_model = build_float32"},
        {"mixed_tests": 0, "mixed_accuracy_tests": 0, "mixed_speed_tests": 0},
    ),
    # Each layer given dtype="mixed_float16", the global policy left alone: the layers compute in float16, but the
    # model's own policy is float32, so compile adds no loss scaling.
    Submission(
        "mixed: per-layer dtypes, no loss scaling",
        {"mixed": _MIXED_LAYERS + _COMPILED.format(optimizer="keras.optimizers.Adam(1e-3)")},
        {"mixed_tests": 0, "mixed_accuracy_tests": 0, "mixed_speed_tests": 0},
    ),
    # Honest alternative: the same per-layer dtypes, with the optimizer wrapped in a LossScaleOptimizer by hand.
    Submission(
        "mixed: per-layer dtypes, loss scaling by hand",
        {"mixed": _MIXED_LAYERS + _COMPILED.format(optimizer=_SCALED)},
        {},
    ),
    # Honest alternative: loss scaling by hand, and the loss as a Loss object rather than its string name (issue 47's
    # red team saw it get 0 for its speed: the loss was compared by its str()).
    Submission(
        "mixed: per-layer dtypes, the loss as a Loss object",
        {
            "mixed": _MIXED_LAYERS
            + _COMPILED.format(optimizer=_SCALED).replace(
                'loss="sparse_categorical_crossentropy"', "loss=keras.losses.SparseCategoricalCrossentropy()"
            )
        },
        {},
    ),
    # The global policy set and never set back: every model built afterwards, the float32 one too, is mixed.
    Submission(
        "mixed: the global policy left at mixed_float16",
        {
            "mixed": "def make_mixed_model(seed=0, width=128):\n    keras.config.set_dtype_policy('mixed_float16')\n"
            "    keras.utils.set_random_seed(seed)\n    model = keras.Sequential(classifier_layers(width))\n"
            "    model.compile(optimizer=keras.optimizers.Adam(1e-3), loss='sparse_categorical_crossentropy')\n"
            "    return model\n"
        },
        {"mixed_tests": 0, "mixed_accuracy_tests": 0, "mixed_speed_tests": 0},
    ),
    # Right dtypes and loss scaling, compiled with an optimizer that barely moves the weights: the structure
    # scores, the accuracy on fresh samples does not, nor the wide model (not compiled as the float32 one: a
    # cheaper optimizer would make its step faster for another reason than its precision).
    Submission(
        "mixed: an optimizer that does not train",
        {"mixed": _MIXED_LAYERS + _COMPILED.format(optimizer=_SCALED.replace("Adam(1e-3)", "SGD(1e-5)"))},
        {"mixed_accuracy_tests": 0, "mixed_speed_tests": 0},
    ),
    # Red team: the width ignored. A model of 128 units is correct in every other way, and on a GPU it would be
    # far faster than the float32 model of 4096: the speed check compares it with build_float32's layers first.
    Submission(
        "mixed: the width ignored",
        {"mixed": _MIXED_LAYERS.replace("Dense(width", "Dense(128") + _COMPILED.format(optimizer=_SCALED)},
        {"mixed_speed_tests": 0},
    ),
    # Red team: Keras's training step replaced on the model object (a step that trains nothing, in no time): the
    # speed check times Keras's own train_on_batch and refuses a model that carries its own.
    Submission(
        "mixed: its own train_on_batch",
        {
            "mixed": _MIXED_LAYERS
            + "    model.compile(optimizer="
            + _SCALED
            + ", loss='sparse_categorical_crossentropy')\n"
            + "    if width > 128:\n        model.train_on_batch = lambda x, y: 0.5\n    return model\n"
        },
        {"mixed_speed_tests": 0},
    ),
    # Red team: the wide hidden layers frozen (trainable=False) when the width is large: the same layers and
    # parameters, but a step without their gradients and updates, faster for another reason than its precision.
    Submission(
        "mixed: the wide layers frozen",
        {
            "mixed": _MIXED_LAYERS
            + "    if width > 128:\n        for layer in model.layers[:2]:\n            layer.trainable = False\n"
            + _COMPILED.format(optimizer=_SCALED)
        },
        {"mixed_speed_tests": 0},
    ),
    # Exercise 3: the cost of one eager op taken for the overhead floor of a tf.function step.
    Submission(
        "place: the eager op as the overhead floor",
        {
            "place": "def place(flops, nbytes, ceilings):\n"
            "    floors = {'overhead': ceilings['eager_op'], 'memory': nbytes / ceilings['memory_bandwidth'],\n"
            "              'compute': flops / ceilings['matmul_float32']}\n"
            "    regime = max(floors, key=floors.get)\n    return regime, floors[regime]\n"
        },
        {"place_tests": 0, "place_floor_tests": 0},
    ),
    # The classic roofline only: compute- or memory-bound by the ridge point, never overhead-bound.
    Submission(
        "place: the ridge point without the overhead floor",
        {
            "place": "def place(flops, nbytes, ceilings):\n"
            "    ridge = ceilings['matmul_float32'] / ceilings['memory_bandwidth']\n"
            "    regime = 'compute' if flops / nbytes > ridge else 'memory'\n"
            "    return regime, max(flops / ceilings['matmul_float32'], nbytes / ceilings['memory_bandwidth'])\n"
        },
        {"place_tests": 0, "place_floor_tests": 0},
    ),
    # The regime right, the time the sum of the floors (as if nothing overlapped): the floor check fails.
    Submission(
        "place: the sum of the floors as the time",
        {
            "place": "def place(flops, nbytes, ceilings):\n"
            "    floors = {'overhead': ceilings['function_call'], 'memory': nbytes / ceilings['memory_bandwidth'],\n"
            "              'compute': flops / ceilings['matmul_float32']}\n"
            "    return max(floors, key=floors.get), sum(floors.values())\n"
        },
        {"place_floor_tests": 0},
    ),
    # Honest alternative: the slower of the two roofs by arithmetic intensity against the ridge, then the call.
    Submission(
        "place: by intensity and the ridge, then the call",
        {
            "place": "import math\n\n\ndef place(flops, nbytes, ceilings):\n"
            "    peak, bandwidth = ceilings['matmul_float32'], ceilings['memory_bandwidth']\n"
            "    work = max(flops / peak, nbytes / bandwidth)\n"
            "    if ceilings['function_call'] >= work:\n        return 'overhead', ceilings['function_call']\n"
            "    return ('compute' if flops / nbytes > peak / bandwidth else 'memory'), work\n"
        },
        {},
    ),
    # Honest alternative with NumPy: the names in an array, np.argmax over the floors (a np.str_ and a np.float64).
    Submission(
        "place: np.argmax over the floors",
        {
            "place": "def place(flops, nbytes, ceilings):\n"
            "    floors = np.array([ceilings['function_call'], nbytes / ceilings['memory_bandwidth'],\n"
            "                       flops / ceilings['matmul_float32']])\n"
            "    return np.array(['overhead', 'memory', 'compute'])[np.argmax(floors)], floors.max()\n"
        },
        {},
    ),
]
