"""wide_dense: the Dense layer's values and gradients, with the input gradient taken on a
transposed copy of the kernel; the CPU block's training step with it has the reference block's
loss and gradients. (Where the copy is taken: bench/check_graphs.py.)"""

import keras
import numpy as np
import pytest
import tensorflow as tf

from bert_keras.kernels import wide_dense
from bert_keras.kernels.cpu_transformer_block import CpuTransformerBlock
from bert_keras.models.activations import get_activation
from bert_keras.models.transformer_block import TransformerBlock


def _value_and_grads(fn, layer, x, upstream):
  @tf.function
  def run(x):
    with tf.GradientTape() as tape:
      tape.watch(x)
      y = fn(x)
    return y, tape.gradient(y, [x, layer.kernel, layer.bias], output_gradients=upstream)
  return run(x)


@pytest.mark.parametrize("activation", [None, "gelu_tanh"])
def test_matches_the_layer_in_value_and_gradients(activation):
  rng = np.random.default_rng(0)
  layer = keras.layers.Dense(
      96, activation=get_activation(activation) if activation else None)
  layer.build((None, 24))
  layer.bias.assign(rng.normal(size=96).astype("float32"))
  x = tf.constant(rng.normal(size=(40, 24)).astype("float32"))
  upstream = tf.constant(rng.normal(size=(40, 96)).astype("float32"))
  y, grads = _value_and_grads(lambda t: wide_dense.wide_dense(layer, t, layer.activation), layer,
                              x, upstream)
  # The reference: the layer's own call.
  expected, expected_grads = _value_and_grads(layer, layer, x, upstream)
  np.testing.assert_allclose(y, expected, rtol=1e-6, atol=1e-6)
  for got, want, name in zip(grads, expected_grads, ["x", "kernel", "bias"]):
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5, err_msg=name)
  # The input gradient by hand: (upstream * activation') @ kernel^T; with no activation exactly it.
  if activation is None:
    np.testing.assert_allclose(grads[0], upstream.numpy() @ layer.kernel.numpy().T,
                               rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(grads[1], x.numpy().T @ upstream.numpy(), rtol=1e-5, atol=1e-5)


def test_a_layer_without_bias_gives_its_own_call():
  layer = keras.layers.Dense(8, use_bias=False)
  layer.build((None, 4))
  x = tf.ones((3, 4))
  y = tf.function(lambda t: wide_dense.wide_dense(layer, t, tf.nn.relu))(x)
  np.testing.assert_allclose(y, layer(x), rtol=1e-6)


def test_the_cpu_blocks_training_step_equals_the_reference_blocks():
  block = TransformerBlock(num_heads=2, intermediate_size=64, dropout_rate=0.0,
                           attention_dropout_rate=0.0)
  x = tf.random.stateless_normal((2, 5, 16), seed=[1, 2])
  mask = tf.ones((2, 5, 5))
  block(x, mask)  # build

  def step_of(layer):
    @tf.function
    def step(x):
      with tf.GradientTape() as tape:
        y = layer(x, mask, training=True)
        loss = tf.reduce_sum(y * tf.range(16, dtype=y.dtype))
      return loss, tape.gradient(loss, block.trainable_variables)
    return step

  loss, grads = step_of(CpuTransformerBlock(block))(x)
  plain_loss, plain_grads = step_of(block)(x)  # the reference block
  np.testing.assert_allclose(loss, plain_loss, rtol=1e-5)
  for got, want, var in zip(grads, plain_grads, block.trainable_variables):
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5, err_msg=var.path)
