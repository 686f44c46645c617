"""The fused (XLA) GELUs equal Keras' GELUs in value and gradient, and are used only in the context."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from bert_keras.models import activations


def _value_and_grad(fn, x, upstream, fused):
  @tf.function
  def run(x):
    with tf.GradientTape() as tape, activations.fused_activations(fused):
      tape.watch(x)
      y = fn(x)
    return y, tape.gradient(y, x, output_gradients=upstream)
  return run(x)


@pytest.mark.parametrize("name,approximate", [("gelu", False), ("gelu_tanh", True)])
def test_fused_gelu_matches_keras(name, approximate):
  x = tf.constant(np.linspace(-8.0, 8.0, 4001, dtype="float32"))
  upstream = tf.sin(3.0 * x)  # non-uniform, so a wrong element-wise derivative cannot hide
  act = activations.get_activation(name)
  y, g = _value_and_grad(act, x, upstream, fused=True)
  expected, expected_grad = _value_and_grad(
      lambda t: keras.activations.gelu(t, approximate=approximate), x, upstream, fused=False)
  np.testing.assert_allclose(y, expected, atol=2e-6)
  np.testing.assert_allclose(g, expected_grad, atol=2e-5)
  # Known derivatives: GELU'(0) = 1/2, GELU'(x) -> 1 for large x, -> 0 for very negative x.
  _, g = _value_and_grad(act, tf.constant([0.0, 8.0, -8.0]), tf.ones(3), fused=True)
  np.testing.assert_allclose(g, [0.5, 1.0, 0.0], atol=1e-5)


@pytest.mark.parametrize("fused", [False, True])
def test_xla_only_inside_the_context(fused):
  act = activations.get_activation("gelu")

  @tf.function
  def run(x):
    with activations.fused_activations(fused):
      return act(x)

  graph = run.get_concrete_function(tf.TensorSpec((None, 4), tf.float32)).graph
  compiled = [op for op in graph.get_operations()
              if op.type in ("PartitionedCall", "StatefulPartitionedCall")
              and op.node_def.attr["_XlaMustCompile"].b]
  assert bool(compiled) == fused
  assert activations._FUSED_DEPTH[0] == 0  # closed again: later traces build the plain ops


@pytest.mark.parametrize("name", ["gelu", "gelu_tanh"])
def test_fused_gelu_keeps_no_activation_for_its_gradient(name):
  """The gradient recomputes tanh / the CDF from x: the forward function outputs y and its input x
  (twice: as the argument and through custom_gradient's IdentityN), the backward reads only the two
  x; the earlier version also kept t = tanh(...) (or the CDF) and two scalars: 6 outputs."""
  act = activations.get_activation(name)

  @tf.function
  def run(x):
    with tf.GradientTape() as tape, activations.fused_activations(True):
      tape.watch(x)
      y = act(x)
    return tape.gradient(y, x)

  graph = run.get_concrete_function(tf.TensorSpec((None, 4), tf.float32)).graph
  forward, backward = [op for op in graph.get_operations()
                       if op.type == "PartitionedCall" and op.node_def.attr["_XlaMustCompile"].b]
  assert len(forward.outputs) == 3
  assert sum(i.op is forward for i in backward.inputs) == 2
