"""Red team, chapter 6: an answer whose bytes are read from one function while another one runs; a layer that
says it computes in another dtype than it does.

Exercise 3: the course's own placement reached through the withheld library, directly or by an alias; a regime and a
floor that compare equal to anything; the checks' made-up steps looked up.

Classes of the grading-integrity issue: (2) changing what the grader reads, (3) reaching the value by another
path."""

from tests.grading.submission import Submission

RED_TEAM = [
    # (2) A subclass of tf.function's own class, compiled by XLA, whose __call__ runs the unfixed step: XLA's
    #     module of the fused chain describes a function that never runs. The bytes are read from the object
    #     as it is called (a subclass is traced by calling it), and the speed check times what runs.
    Submission(
        "red2_fused_description_unfused_call",
        {
            "activation": """
class FusedLooking(type(activation_unfused)):
    def __call__(self, *args):
        return activation_unfused(*args)


def fused_chain(x, scale, shift):
    y = x * scale + shift
    return 0.5 * y * (1.0 + tf.tanh(0.7978845608 * (y + 0.044715 * y * y * y)))


activation = FusedLooking(fused_chain, "activation", jit_compile=True)
"""
        },
        {"activation_tests": 0, "activation_speed_tests": 0},
    ),
    # (2) A Dense layer of its own that says it computes in float16 and computes in float32, with a float32
    #     model otherwise: the check reads only Keras's own layers.
    Submission(
        "red2_layer_says_float16",
        {
            "mixed": """
class SaysFloat16(keras.layers.Dense):
    @property
    def compute_dtype(self):
        return "float16"


def make_mixed_model(seed=0):
    keras.utils.set_random_seed(seed)
    model = keras.Sequential([keras.Input((FEATURES,)), SaysFloat16(128, activation="relu"),
                              SaysFloat16(128, activation="relu"), SaysFloat16(CLASSES),
                              keras.layers.Activation("softmax", dtype="float32")])
    model.compile(optimizer=keras.optimizers.LossScaleOptimizer(keras.optimizers.Adam(1e-3)),
                  loss="sparse_categorical_crossentropy")
    return model
"""
        },
        {"mixed_tests": 0, "mixed_accuracy_tests": 0, "mixed_speed_tests": 0},
    ),
    # (5) The value reached by another path: a model of its own class holds the float16 layers for show and computes
    #     with float32 weights of its own in call(). It earned mixed_tests' 2 points before only Keras's own model
    #     classes were read (graded outside the kernel, without the screen).
    Submission(
        "red5_float32_model_behind_float16_layers",
        {
            "mixed": """
class Shadow(keras.Model):
    # float16 layers kept for show; the work done by float32 weights of its own

    def __init__(self):
        super().__init__()
        keras.config.set_dtype_policy("mixed_float16")
        self.shown = classifier_layers()[1:]
        keras.config.set_dtype_policy("float32")
        self.hidden = keras.layers.Dense(128, activation="relu", dtype="float32")
        self.out = self.add_weight(shape=(128, CLASSES), initializer="glorot_uniform", dtype="float32")

    def call(self, x):
        return keras.ops.softmax(keras.ops.matmul(self.hidden(x), self.out))


def make_mixed_model(seed=0):
    keras.utils.set_random_seed(seed)
    model = Shadow()
    model(np.zeros((1, FEATURES), np.float32))
    model.compile(optimizer=keras.optimizers.LossScaleOptimizer(keras.optimizers.Adam(1e-3)),
                  loss="sparse_categorical_crossentropy")
    return model
"""
        },
        {"mixed_tests": 0, "mixed_accuracy_tests": 0, "mixed_speed_tests": 0},
    ),
    # (3) Reaching the answer by another path: the course's own placement, through a card-shaped object.
    Submission(
        "red3_place_through_the_withheld_library",
        {
            "place": """
class Card:
    def __init__(self, ceilings):
        self.ceilings = ceilings

    def get(self, name):
        return type("Ceiling", (), {"value": self.ceilings[name]})()


def place(flops, nbytes, ceilings):
    floors = dc.floors(Card(ceilings), flops, nbytes)
    return dc.regime(Card(ceilings), flops, nbytes), max(floors.values())
"""
        },
        {"place_tests": 0, "place_floor_tests": 0},
    ),
    # (3) The same through an alias of the module, which a screen of names alone would miss.
    Submission(
        "red3_place_through_an_alias",
        {
            "place": """
course = dc


def place(flops, nbytes, ceilings):
    card = type("Card", (), {"get": lambda self, name: type("C", (), {"value": ceilings[name]})()})()
    floors = course.floors(card, flops, nbytes)
    return course.regime(card, flops, nbytes), max(floors.values())
"""
        },
        {"place_tests": 0, "place_floor_tests": 0},
    ),
    # (2) A regime that equals any string and a floor that equals any number: the comparisons say yes to all.
    Submission(
        "red2_place_equals_anything",
        {
            "place": """
class AnyRegime(str):
    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    __hash__ = str.__hash__


class AnyFloor(float):
    def __sub__(self, other):
        return 0.0

    def __eq__(self, other):
        return True

    __hash__ = float.__hash__


def place(flops, nbytes, ceilings):
    return AnyRegime("memory"), AnyFloor(1.0)
"""
        },
        {"place_tests": 0, "place_floor_tests": 0},
    ),
    # (3) The checks' own made-up steps, regenerated and looked up: the visible seeds are known, the hidden
    #     checks draw theirs afresh (and the grading library is withheld here).
    Submission(
        "red3_place_looks_up_the_checks_steps",
        {
            "place": """
KNOWN = {}
for seed in (1, 2):
    for step in grading.roofline.made_up_steps(seed, 30):
        KNOWN[(step["flops"], step["nbytes"])] = (step["regime"], step["floor"])


def place(flops, nbytes, ceilings):
    return KNOWN.get((flops, nbytes), ("memory", nbytes / ceilings["memory_bandwidth"]))
"""
        },
        {"place_tests": 0, "place_floor_tests": 0},
    ),
]
