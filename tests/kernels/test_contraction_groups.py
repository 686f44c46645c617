"""CpuTransformerBlock's contraction_groups: every projection split along its contraction gives
the unsplit block's outputs, within float rounding."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from bert_keras import kernels
from bert_keras.kernels.cpu_transformer_block import CpuTransformerBlock
from bert_keras.models.bert_encoder import BertEncoder
from tests.kernels.test_row_groups import HIDDEN, _block, _inputs, assert_runs_like


def _matmul_shapes(fn, *args):
  """(rows, contraction) of every 2-D MatMul's left operand in the traced graph."""
  graph = fn.get_concrete_function(*args).graph
  return [tuple(op.inputs[0].shape) for op in graph.get_operations() if op.type == "MatMul"]


@pytest.mark.parametrize("groups", [2, 4])
@pytest.mark.parametrize("batch,seq", [(1, 1), (1, 5), (3, 7), (2, 16)])
@pytest.mark.parametrize("causal", [False, True])
def test_contraction_groups_equal_the_unsplit_block(groups, batch, seq, causal):
  unsplit = _block()
  x, mask = _inputs(batch, seq, causal, seed=batch * 100 + seq)
  expected = unsplit(x, mask, training=False).numpy()
  split = CpuTransformerBlock(unsplit.block, contraction_groups=groups)
  got = split(x, mask, training=False).numpy()
  assert got.shape == (batch, seq, HIDDEN)
  np.testing.assert_allclose(got, expected, atol=1e-5)


def test_each_projection_runs_as_products_of_its_groups():
  block = CpuTransformerBlock(_block().block, contraction_groups=2)
  x, mask = _inputs(1, 6)
  infer = tf.function(lambda x, m: block(x, m, training=False), autograph=False)
  # qkv, attention output (contraction HIDDEN) and the feed-forward output (64): 2 products each.
  assert sorted(shape[1] for shape in _matmul_shapes(infer, x, mask)) == (
      [HIDDEN // 2] * 6 + [64 // 2] * 2)
  train = tf.function(lambda x, m: block(x, m, training=True), autograph=False)
  assert sorted(shape[1] for shape in _matmul_shapes(train, x, mask)) == [HIDDEN] * 3 + [64]


def test_groups_that_do_not_divide_the_contraction_run_one_product():
  block = CpuTransformerBlock(_block().block, contraction_groups=3)  # 32 and 64: not by 3
  x, mask = _inputs(2, 5)
  infer = tf.function(lambda x, m: block(x, m, training=False), autograph=False)
  assert len(_matmul_shapes(infer, x, mask)) == 4
  np.testing.assert_allclose(infer(x, mask).numpy(),
                             _block()(x, mask, training=False).numpy(), atol=1e-5)


def test_values_are_checked():
  for bad in (0, -1, 1.5):
    with pytest.raises(ValueError, match="contraction_groups"):
      CpuTransformerBlock(_block().block, contraction_groups=bad)
  with pytest.raises(ValueError, match="at most one"):
    CpuTransformerBlock(_block().block, row_groups=2, contraction_groups=2)


def test_the_encoder_with_contraction_groups_matches():
  keras.utils.set_random_seed(1)
  encoder = BertEncoder(vocab_size=100, hidden_size=HIDDEN, num_layers=2, num_heads=4,
                        intermediate_size=64)
  assert_runs_like(kernels.implementation_of(encoder, "cpu", contraction_groups=2), encoder,
                   encoder)
