"""The training-path LayerNorm (hand-written gradient) and 16-bit dropout against Keras' layers."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from bert_keras.models.bit_dropout import bit_dropout
from bert_keras.models.layer_norm_grad import layer_norm


@pytest.mark.parametrize("dtype,tol", [("float32", 2e-5), ("float64", 1e-12)])
def test_layer_norm_matches_keras_forward_and_gradients(dtype, tol):
  rng = np.random.default_rng(0)
  layer = keras.layers.LayerNormalization(epsilon=1e-12, dtype=dtype)
  layer.build((None, 7, 16))
  layer.gamma.assign(rng.normal(1.0, 0.3, 16))
  layer.beta.assign(rng.normal(0.0, 0.3, 16))
  x = tf.constant(rng.normal(0.5, 2.0, (3, 7, 16)), dtype)
  dy = tf.constant(rng.normal(size=(3, 7, 16)), dtype)
  results = []
  for fn in (layer, lambda v: layer_norm(layer, v)):
    with tf.GradientTape() as tape:
      tape.watch(x)
      y = fn(x)
    results.append([y] + tape.gradient(y, [x, layer.gamma, layer.beta], output_gradients=dy))
  for name, ours, theirs in zip(("y", "dx", "dgamma", "dbeta"), results[1], results[0]):
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=tol, atol=tol, err_msg=name)


def test_layer_norm_falls_back_for_other_configurations():
  layer = keras.layers.LayerNormalization(center=False)
  layer.build((None, 8))
  x = tf.random.normal((4, 8))
  np.testing.assert_allclose(layer_norm(layer, x).numpy(), layer(x).numpy())


def test_bit_dropout_rate_scale_and_reproducibility():
  layer = keras.layers.Dropout(0.1, seed=7)
  x = tf.ones((64, 4, 128, 128))
  y = bit_dropout(layer, x, training=True).numpy()
  kept = y != 0
  keep_prob = 1 - 6554 / 65536
  assert abs(kept.mean() - keep_prob) < 0.002  # ~4 sigma at 4M draws
  np.testing.assert_allclose(np.unique(y[kept]), [1 / keep_prob], rtol=1e-6)
  assert abs(y.mean() - 1.0) < 0.003  # inverted dropout keeps the expectation
  # Masks differ between draws, and the layer's seed state reproduces them.
  state = layer.seed_generator.state.numpy().copy()
  second = bit_dropout(layer, x, training=True).numpy()
  assert (second != y).any()
  layer.seed_generator.state.assign(state)
  np.testing.assert_array_equal(bit_dropout(layer, x, training=True).numpy(), second)
  # Odd sizes (a uint16 pair split across the end) and no dropout outside training.
  odd = bit_dropout(layer, tf.ones((3, 5, 7)), training=True)
  assert odd.shape == (3, 5, 7)
  np.testing.assert_array_equal(bit_dropout(layer, x, training=False).numpy(), x.numpy())


def test_bit_dropout_gradient_is_the_mask_times_the_scale():
  layer = keras.layers.Dropout(0.25, seed=3)
  x = tf.random.normal((8, 33))
  with tf.GradientTape() as tape:
    tape.watch(x)
    y = bit_dropout(layer, x, training=True)
  grad = tape.gradient(y, x).numpy()
  np.testing.assert_allclose(grad, (y.numpy() != 0) / (1 - 16384 / 65536), rtol=1e-6)
