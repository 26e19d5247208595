"""grading.assert_moves_fewer_bytes: bytes read from what TensorFlow runs, against the unfixed step's."""

import pytest

tf = pytest.importorskip("tensorflow")
from tfperf import grading  # noqa: E402


def chain(x, scale, shift):
    y = x * scale + shift
    return 0.5 * y * (1.0 + tf.tanh(0.79788456 * (y + 0.044715 * y * y * y)))


UNFUSED = tf.function(chain, jit_compile=False)
ARGS = (tf.random.uniform((4096,), 0.5, 1.5), tf.constant(1.1), tf.constant(0.1))


def test_the_fused_chain_passes_and_reports_both_byte_counts():
    mine, theirs = grading.assert_moves_fewer_bytes(
        tf.function(chain, jit_compile=True), UNFUSED, ARGS, at_most=1 / 3, what="activation"
    )
    assert mine == 2 * 4 * 4096 + 8 and theirs > 3 * mine


def test_the_same_chain_op_by_op_fails_with_both_figures_and_the_section():
    with pytest.raises(
        grading.GradingFailure,
        match=r"(?s)moves .* MB per call \(op by op\).*at most 0.33 times.*Reread the section \"3\"",
    ):
        grading.assert_moves_fewer_bytes(
            tf.function(chain), UNFUSED, ARGS, at_most=1 / 3, what="activation", section="3"
        )


def test_a_function_whose_bytes_cannot_be_read_fails_clearly():
    def reads_a_value(x, scale, shift):
        return x * scale.numpy()  # a symbolic tensor has no value: cannot be traced

    with pytest.raises(grading.GradingFailure, match="could not be read"):
        grading.assert_moves_fewer_bytes(reads_a_value, UNFUSED, ARGS, at_most=1 / 3, what="activation")


def test_a_subclass_describing_a_fused_chain_while_calling_the_unfused_one_fails():
    """XLA's module of the chain describes a function that never runs: the object is read as it is called."""

    class FusedLooking(type(UNFUSED)):
        def __call__(self, *args):
            return UNFUSED(*args)

    looks_fused = FusedLooking(chain, "activation", jit_compile=True)
    with pytest.raises(grading.GradingFailure, match=r"\(op by op\)"):
        grading.assert_moves_fewer_bytes(looks_fused, UNFUSED, ARGS, at_most=1 / 3, what="activation")


def test_xla_around_the_unfused_step_fuses_it():
    """Compiling a function that calls the unfixed tf.function: XLA inlines the call and fuses the chain."""
    around = tf.function(lambda x, scale, shift: UNFUSED(x, scale, shift), jit_compile=True)
    mine, _ = grading.assert_moves_fewer_bytes(around, UNFUSED, ARGS, at_most=1 / 3, what="activation")
    assert mine == 2 * 4 * 4096 + 8
