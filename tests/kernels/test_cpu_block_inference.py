"""The CPU block's inference path computes the block's math, eager and traced (the fused ops
grappler makes of it: bench/check_graphs.py)."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from bert_keras.kernels.cpu_transformer_block import CpuTransformerBlock
from bert_keras.kernels.fused_layer_norm import inference_layer_norm
from tests.models.block_reference import HIDDEN
from tests.models.block_reference import block as _reference_block
from tests.models.block_reference import inputs as _inputs
from tests.models.block_reference import reference as _reference


def _block(head_groups=1):
  """The CPU implementation of the oracle's block; `.block` is the block itself."""
  return CpuTransformerBlock(_reference_block(), head_groups)


@pytest.mark.parametrize("groups", [1, 2])
@pytest.mark.parametrize("batch,seq,causal", [(1, 1, False), (1, 16, False), (3, 7, True)])
def test_inference_equals_the_reference_math(groups, batch, seq, causal):
  block = _block(head_groups=groups)
  x, mask = _inputs(batch, seq, causal, seed=seq)
  expected = _reference(block.block, x, mask)
  eager = block(tf.constant(x), tf.constant(mask), training=False).numpy()
  # Traced: grappler and oneDNN rewrite the graph (fused matmuls), as in an exported model.
  traced = tf.function(lambda x, m: block(x, m, training=False), autograph=False)
  for got in (eager, traced(tf.constant(x), tf.constant(mask)).numpy()):
    np.testing.assert_allclose(got, expected, atol=2e-5, rtol=1e-4)


def test_inference_layer_norm_equals_the_keras_layer():
  norm = keras.layers.LayerNormalization(epsilon=1e-12)
  norm.build((None, HIDDEN))
  rng = np.random.default_rng(3)
  norm.gamma.assign(rng.normal(1.0, 0.3, HIDDEN).astype("float32"))
  norm.beta.assign(rng.normal(0.0, 0.3, HIDDEN).astype("float32"))
  # A large shared offset: a one-pass E[x^2] - E[x]^2 variance would lose digits here.
  rows = tf.constant(rng.normal(size=(40, HIDDEN)) * 0.5 + 30.0, tf.float32)
  np.testing.assert_allclose(inference_layer_norm(norm, rows), norm(rows), atol=2e-5)
  assert inference_layer_norm(norm, tf.zeros((0, HIDDEN))).shape == (0, HIDDEN)
