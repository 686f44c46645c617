"""The fused (XLA) GELUs equal the reference GELUs in value and gradient (which functions XLA
compiles, and what the gradient keeps: bench/check_graphs.py)."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from bert_keras.kernels.fused_gelu import fused_activation
from bert_keras.models.activations import get_activation


def _value_and_grad(fn, x, upstream):
  @tf.function
  def run(x):
    with tf.GradientTape() as tape:
      tape.watch(x)
      y = fn(x)
    return y, tape.gradient(y, x, output_gradients=upstream)
  return run(x)


@pytest.mark.parametrize("name,approximate", [("gelu", False), ("gelu_tanh", True)])
def test_fused_gelu_matches_keras(name, approximate):
  x = tf.constant(np.linspace(-8.0, 8.0, 4001, dtype="float32"))
  upstream = tf.sin(3.0 * x)  # non-uniform, so a wrong element-wise derivative cannot hide
  act = fused_activation(name)
  y, g = _value_and_grad(act, x, upstream)
  expected, expected_grad = _value_and_grad(
      lambda t: keras.activations.gelu(t, approximate=approximate), x, upstream)
  np.testing.assert_allclose(y, expected, atol=2e-6)
  np.testing.assert_allclose(g, expected_grad, atol=2e-5)
  np.testing.assert_allclose(get_activation(name)(x), expected, atol=1e-6)  # the reference
  # Known derivatives: GELU'(0) = 1/2, GELU'(x) -> 1 for large x, -> 0 for very negative x.
  _, g = _value_and_grad(act, tf.constant([0.0, 8.0, -8.0]), tf.ones(3))
  np.testing.assert_allclose(g, [0.5, 1.0, 0.0], atol=1e-5)
