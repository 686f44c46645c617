"""The training-path LayerNorm (hand-written gradient) and hashed-mask dropout against Keras' layers."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from bert_keras.kernels import bit_dropout as bit_dropout_module
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


def _masks_and_grads(fused, shape, rate, seed, calls=2, monkeypatch=None):
  layer = keras.layers.Dropout(rate, seed=seed)
  x = tf.constant(np.random.default_rng(1).normal(3.0, 1.0, shape), tf.float32)
  x = tf.abs(x) + 0.5  # no zeros: y == 0 exactly where dropped
  if not fused:  # the same arithmetic as plain TensorFlow ops
    monkeypatch.setattr(bit_dropout_module, "_fused_dropout", bit_dropout_module._dropout)

  @tf.function
  def run():
    outs = []
    for _ in range(calls):
      with tf.GradientTape() as tape:
        tape.watch(x)
        y = bit_dropout(layer, x, training=True)
      outs.append((y, tape.gradient(y, x, output_gradients=tf.sin(x))))
    return outs

  result = [(y.numpy(), g.numpy()) for y, g in run()]
  if not fused:
    monkeypatch.undo()
  return result


@pytest.mark.parametrize("shape", [(4, 3, 16, 16), (64, 48), (7,)])
def test_fused_and_plain_dropout_give_the_same_bits(shape, monkeypatch):
  """The XLA kernels and the same integer arithmetic as TensorFlow ops draw identical masks."""
  fused = _masks_and_grads(True, shape, 0.3, 11)
  plain = _masks_and_grads(False, shape, 0.3, 11, monkeypatch=monkeypatch)
  for (y_fused, g_fused), (y_plain, g_plain) in zip(fused, plain):
    np.testing.assert_array_equal(y_fused, y_plain)
    np.testing.assert_array_equal(g_fused, g_plain)


def test_dropout_is_one_compiled_kernel_forward_and_one_backward():
  layer = keras.layers.Dropout(0.1, seed=2)

  @tf.function
  def run(x):
    with tf.GradientTape() as tape:
      tape.watch(x)
      y = bit_dropout(layer, x, training=True)
    return tape.gradient(y, x)

  graph = run.get_concrete_function(tf.TensorSpec((4, 8), tf.float32)).graph
  compiled = [op for op in graph.get_operations() if op.type == "PartitionedCall"
              and op.node_def.attr["_XlaMustCompile"].b]
  assert len(compiled) == 2
  forward = next(op for op in compiled if "forward" in op.node_def.attr["f"].func.name)
  # No mask is kept for the backward pass: nothing of the input's size but y and x itself.
  assert sum(o.shape.as_list() == [4, 8] and o.dtype == tf.bool for o in forward.outputs) == 0


def test_dropout_masks_look_independent():
  """Bernoulli(1 - rate) per element: the rate holds in every region, and neither neighbouring
  elements, rows, nor the masks of consecutive calls (consecutive keys) are correlated."""
  (y1, _), (y2, _) = _masks_and_grads(True, (256, 1024), 0.5, 5)
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


def test_unknown_shapes_take_keras_dropout():
  layer = keras.layers.Dropout(0.5, seed=4)

  @tf.function(input_signature=[tf.TensorSpec((None, 8), tf.float32)])
  def run(x):
    return bit_dropout(layer, x, training=True)

  graph = run.get_concrete_function().graph
  assert not any(op.type == "BitwiseXor" for op in graph.get_operations())
  y = run(tf.ones((100, 8))).numpy()
  assert 0.3 < (y == 0).mean() < 0.7
