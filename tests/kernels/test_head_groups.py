"""CpuTransformerBlock's head_groups: each group's heads and share of the feed-forward width, the
partial projections summed, give the unsplit block's outputs within float rounding."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from bert_keras import kernels
from bert_keras.kernels.cpu_transformer_block import CpuTransformerBlock
from bert_keras.models.bert_encoder import BertEncoder
from tests.kernels.test_row_groups import HIDDEN, _block, _inputs, assert_runs_like


def _matmul_shapes(fn, *args):
  """(left operand's contraction, right operand's columns) of every 2-D MatMul in the graph."""
  graph = fn.get_concrete_function(*args).graph
  return sorted((op.inputs[0].shape[1], op.inputs[1].shape[1])
                for op in graph.get_operations() if op.type == "MatMul")


@pytest.mark.parametrize("groups", [2, 4])
@pytest.mark.parametrize("batch,seq", [(1, 1), (1, 5), (3, 7), (2, 16)])
@pytest.mark.parametrize("causal", [False, True])
def test_head_groups_equal_the_unsplit_block(groups, batch, seq, causal):
  unsplit = _block()
  x, mask = _inputs(batch, seq, causal, seed=batch * 100 + seq)
  expected = unsplit(x, mask, training=False).numpy()
  split = CpuTransformerBlock(unsplit.block, head_groups=groups)
  got = split(x, mask, training=False).numpy()
  assert got.shape == (batch, seq, HIDDEN)
  np.testing.assert_allclose(got, expected, atol=1e-5)


def test_each_group_projects_its_own_columns_and_rows():
  block = CpuTransformerBlock(_block().block, head_groups=2)  # 4 heads of 8, width 64
  x, mask = _inputs(1, 6)
  infer = tf.function(lambda x, m: block(x, m, training=False), autograph=False)
  # Per group: q-k-v of 2 heads (32 -> 48), its heads' output rows (16 -> 32), half the
  # widening (32 -> 32) and the matching narrowing rows (32 -> 32).
  assert _matmul_shapes(infer, x, mask) == sorted(
      [(HIDDEN, 3 * HIDDEN // 2), (HIDDEN // 2, HIDDEN), (HIDDEN, 32), (32, HIDDEN)] * 2)
  train = tf.function(lambda x, m: block(x, m, training=True), autograph=False)
  assert _matmul_shapes(train, x, mask) == sorted(
      [(HIDDEN, 3 * HIDDEN), (HIDDEN, HIDDEN), (HIDDEN, 64), (64, HIDDEN)])


def test_the_copies_are_untrainable_weights_of_the_wrapper():
  reference = _block().block
  block = CpuTransformerBlock(reference, head_groups=2)
  own = {id(w) for w in reference.weights}
  copies = [w for w in block.weights if id(w) not in own]
  assert len(copies) == 8 and not any(w.trainable for w in copies)
  assert {id(w) for w in CpuTransformerBlock(reference, row_groups=2).weights} == own


def test_values_are_checked():
  for bad in (0, -1, 1.5):
    with pytest.raises(ValueError, match="head_groups"):
      CpuTransformerBlock(_block().block, head_groups=bad)
  with pytest.raises(ValueError, match="num_heads=4"):
    CpuTransformerBlock(_block().block, head_groups=3)
  with pytest.raises(ValueError, match="at most one"):
    CpuTransformerBlock(_block().block, row_groups=2, head_groups=2)


def test_the_encoder_with_head_groups_matches():
  keras.utils.set_random_seed(1)
  encoder = BertEncoder(vocab_size=100, hidden_size=HIDDEN, num_layers=2, num_heads=4,
                        intermediate_size=64)
  split = kernels.implementation_of(encoder, "cpu", head_groups=2)
  assert_runs_like(split, encoder, encoder, copies=2 * 8)  # 2 blocks, 2 groups x 4 copies
