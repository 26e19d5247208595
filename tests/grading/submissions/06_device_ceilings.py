"""Round-trip cases of chapter 6 (06_device_ceilings): the unfused step, a rewrite that still runs op by op,
and an honest alternative (other values fail check_same_as, as in every chapter). Exercise 1: activation_tests (3: same results, at
most a third of the bytes), activation_speed_tests (2)."""

from tests.grading.submission import Submission

_CHAIN = """    y = x * scale + shift
    return 0.5 * y * (1.0 + tf.tanh(0.7978845608 * (y + 0.044715 * y * y * y)))
"""

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
]
