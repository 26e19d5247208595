"""Red team, chapter 6: an answer whose bytes are read from one function while another one runs.

Classes of the grading-integrity issue: (2) changing what the grader reads."""

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
]
