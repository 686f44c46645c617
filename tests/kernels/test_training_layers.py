"""The training-path LayerNorm (hand-written gradient) and hashed-mask dropout against Keras' layers.
(The dropout's kernels, and its XLA and TF-op arithmetic drawing the same bits:
bench/check_graphs.py.)"""

import keras
import numpy as np
import pytest
import tensorflow as tf

from bert_keras.kernels.bit_dropout import bit_dropout
from bert_keras.kernels.layer_norm_grad import layer_norm


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
  keep_prob = 1 - 429496730 / 2**32  # 0.1 rounded to a multiple of 2^-32
  assert abs(kept.mean() - keep_prob) < 0.0006  # ~4 sigma at 4M draws
  np.testing.assert_allclose(np.unique(y[kept]), [1 / keep_prob], rtol=1e-6)
  assert abs(y.mean() - 1.0) < 0.001  # inverted dropout keeps the expectation
  # Masks differ between draws, and the layer's seed state reproduces them.
  state = layer.seed_generator.state.numpy().copy()
  second = bit_dropout(layer, x, training=True).numpy()
  assert (second != y).any()
  layer.seed_generator.state.assign(state)
  np.testing.assert_array_equal(bit_dropout(layer, x, training=True).numpy(), second)
  # Odd sizes and no dropout outside training.
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
  np.testing.assert_allclose(grad, (y.numpy() != 0) / 0.75, rtol=1e-6)


def _masks_and_grads(shape, rate, seed, calls=2):
  layer = keras.layers.Dropout(rate, seed=seed)
  x = tf.constant(np.random.default_rng(1).normal(3.0, 1.0, shape), tf.float32)
  x = tf.abs(x) + 0.5  # no zeros: y == 0 exactly where dropped

  @tf.function
  def run():
    outs = []
    for _ in range(calls):
      with tf.GradientTape() as tape:
        tape.watch(x)
        y = bit_dropout(layer, x, training=True)
      outs.append((y, tape.gradient(y, x, output_gradients=tf.sin(x))))
    return outs

  return [(y.numpy(), g.numpy()) for y, g in run()]


def test_dropout_masks_look_independent():
  """Bernoulli(1 - rate) per element: the rate holds in every region, and neither neighbouring
  elements, rows, nor the masks of consecutive calls (consecutive keys) are correlated."""
  (y1, _), (y2, _) = _masks_and_grads((256, 1024), 0.5, 5)
  m1, m2 = (y1 == 0).astype(np.float64), (y2 == 0).astype(np.float64)
  n = m1.size
  sigma = 0.5 / np.sqrt(n)
  assert abs(m1.mean() - 0.5) < 5 * sigma and abs(m2.mean() - 0.5) < 5 * sigma
  # Per-block rates (64 blocks of 4096): within 5 sigma of the rate each.
  blocks = m1.reshape(64, -1).mean(axis=1)
  assert np.all(np.abs(blocks - 0.5) < 5 * 0.5 / np.sqrt(4096)), blocks
  corr = lambda a, b: float(np.corrcoef(a.ravel(), b.ravel())[0, 1])
  bound = 5 / np.sqrt(n)
  assert abs(corr(m1[:, 1:], m1[:, :-1])) < bound  # horizontal neighbours
  assert abs(corr(m1[1:], m1[:-1])) < bound  # vertical neighbours
  assert abs(corr(m1, m2)) < bound  # consecutive keys
  flat = m1.ravel()
  for lag in (2, 16, 1024, 65536):
    assert abs(corr(flat[lag:], flat[:-lag])) < 5 / np.sqrt(n - lag), lag


def test_unknown_shapes_drop_at_the_rate():
  layer = keras.layers.Dropout(0.5, seed=4)

  @tf.function(input_signature=[tf.TensorSpec((None, 8), tf.float32)])
  def run(x):
    return bit_dropout(layer, x, training=True)

  y = run(tf.ones((100, 8))).numpy()
  assert 0.3 < (y == 0).mean() < 0.7
  np.testing.assert_allclose(np.unique(y[y != 0]), [2.0])
