"""Bytes a step moves per call, read from its graph op by op or from XLA's optimized module."""

import pytest

from tfperf.measure import bytes_moved

HLO = """HloModule a_inference_chain, is_scheduled=true

%fused_computation (param_0.3: f32[], param_1.6: f32[1000], param_2.8: f32[]) -> f32[1000] {
  %param_1.6 = f32[1000]{0} parameter(1)
  ROOT %mul.0 = f32[1000]{0} multiply(%param_1.6, %param_1.6)
}

ENTRY %a_inference_chain (arg0.1: f32[1000], arg1.1: f32[], arg2.1: f32[]) -> f32[1000] {
  %arg0.1 = f32[1000]{0} parameter(0), parameter_replication={false}
  %arg1.1 = f32[] parameter(1), parameter_replication={false}
  %arg2.1 = f32[] parameter(2), parameter_replication={false}
  %c = bf16[2,3]{1,0} constant({...})
  ROOT %add_multiply_fusion = f32[1000]{0} fusion(%arg2.1, %arg0.1, %arg1.1), kind=kLoop, calls=%fused_computation
}
"""


def test_an_entry_computation_counts_each_kernels_operands_and_result():
    # One fused kernel: reads 1000 floats and two scalars, writes 1000 floats; the fused computation's own
    # instructions and the constant move nothing of their own.
    assert bytes_moved.hlo_bytes(HLO) == 4 * 1000 + 4 + 4 + 4 * 1000


def test_text_without_an_entry_computation_is_refused():
    with pytest.raises(ValueError, match="no ENTRY"):
        bytes_moved.hlo_bytes("HloModule nothing")


tf = pytest.importorskip("tensorflow")


def chain(x):
    y = x * 1.1 + 0.1
    return 0.5 * y * (1.0 + tf.tanh(0.79788456 * (y + 0.044715 * y * y * y)))


def test_a_chain_op_by_op_moves_every_intermediate_and_fused_only_its_input_and_output():
    x = tf.random.uniform((1000,), 0.5, 1.5)
    op_by_op, how = bytes_moved.bytes_moved(tf.function(chain, jit_compile=False), (x,))
    assert how == "op by op"
    fused, how = bytes_moved.bytes_moved(tf.function(chain, jit_compile=True), (x,))
    assert how == "as compiled by XLA"
    assert fused == 2 * 4 * 1000  # one read of x, one write of the result
    assert op_by_op > 8 * fused  # eleven ops, each reading and writing about a tensor
    plain, how = bytes_moved.bytes_moved(chain, (x,))  # a plain function is traced first, without XLA
    assert (plain, how) == (op_by_op, "op by op")


def test_ops_inside_called_functions_and_loops_are_counted_where_they_run():
    """Hiding the chain in an inner tf.function, or a loop that runs once, does not hide its bytes."""
    x = tf.random.uniform((1000,), 0.5, 1.5)
    direct, _ = bytes_moved.bytes_moved(tf.function(chain), (x,))
    inner = tf.function(chain)
    wrapped, _ = bytes_moved.bytes_moved(tf.function(lambda v: inner(v)), (x,))
    looped, _ = bytes_moved.bytes_moved(
        tf.function(lambda v: tf.while_loop(lambda i, w: i < 1, lambda i, w: (i + 1, chain(w)), (0, v))[1]), (x,)
    )
    assert wrapped >= direct and looped >= direct


def test_a_plain_function_that_only_calls_an_xla_function_is_read_from_its_module_and_one_that_does_more_is_not():
    x = tf.random.uniform((1000,), 0.5, 1.5)
    fused = tf.function(chain, jit_compile=True)
    only, how = bytes_moved.bytes_moved(tf.function(lambda v: fused(v)), (x,))
    assert (only, how) == (2 * 4 * 1000, "as compiled by XLA")
    more, how = bytes_moved.bytes_moved(tf.function(lambda v: fused(chain(v))), (x,))  # an unfused chain beside it
    assert how == "op by op" and more > 8 * only


def test_a_tensor_without_a_static_shape_is_refused_with_its_name():
    fn = tf.function(chain, input_signature=[tf.TensorSpec([None], tf.float32)])
    with pytest.raises(ValueError, match="no static shape"):
        bytes_moved.bytes_moved(fn, (tf.ones((3,)),))
