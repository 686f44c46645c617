"""CpuTransformerBlock's `query_positions`: only the rows at those positions, each the full
block's row."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from bert_keras.kernels.cpu_transformer_block import CpuTransformerBlock
from tests.models.block_reference import HIDDEN
from tests.models.block_reference import block as _reference_block
from tests.models.block_reference import inputs as _inputs
from tests.models.block_reference import reference as _reference


def _block(**kwargs):
  """The CPU implementation of the oracle's block; `.block` is the block itself."""
  return CpuTransformerBlock(_reference_block(**kwargs))


@pytest.mark.parametrize("training", [False, True])
@pytest.mark.parametrize("causal", [False, True])
def test_rows_at_positions_equal_the_reference_rows(training, causal):
  block = _block(dropout_rate=0.0, attention_dropout_rate=0.0)
  x, mask = _inputs(3, 9, causal, seed=3)
  # Repeats, the first and last position, a padded position, rows out of order.
  positions = np.array([[0, 4, 4, 8], [8, 0, 2, 1], [5, 3, 7, 0]], "int32")
  rows = block(x, mask, positions, training=training).numpy()
  assert rows.shape == (3, 4, HIDDEN)
  expected = np.take_along_axis(_reference(block.block, x, mask), positions[:, :, None], axis=1)
  np.testing.assert_allclose(rows, expected, atol=2e-5)


def test_gradients_equal_those_of_the_full_block_gathered():
  block = _block(dropout_rate=0.0, attention_dropout_rate=0.0)
  x, mask = _inputs(2, 8, False, seed=5)
  x = tf.constant(x)
  positions = np.array([[0, 3, 6], [7, 1, 1]], "int32")
  weight = tf.constant(np.random.default_rng(1).normal(size=(2, 3, HIDDEN)).astype("float32"))

  def grads(rows_of):
    with tf.GradientTape() as tape:
      tape.watch(x)
      loss = tf.reduce_sum(rows_of() * weight)
    return tape.gradient(loss, [x] + block.trainable_variables)

  partial = grads(lambda: block(x, mask, positions, training=True))
  full = grads(lambda: tf.gather(block(x, mask, training=True), positions, axis=1, batch_dims=1))
  assert len(partial) == len(full) == 1 + len(block.trainable_variables)
  for a, b in zip(partial, full):
    np.testing.assert_allclose(tf.convert_to_tensor(a).numpy(), tf.convert_to_tensor(b).numpy(),
                               atol=2e-5)


def test_mixed_precision_rows_match_float32():
  x, mask = _inputs(2, 8, False, seed=2)
  positions = np.array([[0, 5], [2, 7]], "int32")
  expected = _block()(x, mask, positions).numpy()
  keras.mixed_precision.set_global_policy("mixed_bfloat16")
  try:
    block = _block()
    rows = block(x, mask, positions)
  finally:
    keras.mixed_precision.set_global_policy("float32")
  assert rows.dtype == tf.bfloat16
  np.testing.assert_allclose(tf.cast(rows, tf.float32).numpy(), expected, atol=0.1)
