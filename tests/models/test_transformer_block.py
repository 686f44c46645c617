"""The reference TransformerBlock computes the post-LN block of the float64 oracle."""

import numpy as np
import pytest
import tensorflow as tf

from bert_keras.models.transformer_block import TransformerBlock
from tests.models.block_reference import HIDDEN, block, inputs, reference


@pytest.mark.parametrize("training", [False, True])
@pytest.mark.parametrize("batch,seq,causal", [(1, 1, False), (2, 9, False), (3, 7, True)])
def test_the_block_is_the_oracle(training, batch, seq, causal):
  layer = block(dropout_rate=0.0, attention_dropout_rate=0.0)
  x, mask = inputs(batch, seq, causal, seed=seq)
  expected = reference(layer, x, mask)
  eager = layer(x, mask, training=training).numpy()
  traced = tf.function(lambda x, m: layer(x, m, training=training))(x, mask).numpy()
  for got in (eager, traced):
    assert got.shape == (batch, seq, HIDDEN)
    np.testing.assert_allclose(got, expected, atol=2e-5, rtol=1e-4)


def test_an_empty_batch():
  x, mask = inputs(1, 4, False, seed=0)
  assert block()(x[:0], mask[:0]).shape == (0, 4, HIDDEN)


def test_config_round_trips():
  config = block().get_config()
  assert TransformerBlock.from_config(config).get_config() == config


def test_hidden_size_must_divide_into_heads():
  with pytest.raises(ValueError, match="hidden_size=30 is not divisible by num_heads=4"):
    TransformerBlock(num_heads=4, intermediate_size=8).build((None, None, 30))
