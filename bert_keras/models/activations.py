"""Activation lookup shared by every layer, so `hidden_act` means the same thing everywhere.

Training speed: `fused_activations()` is a context in which the GELUs are built as one XLA-fused
element-wise kernel (`tf.function(jit_compile=True)`) with a hand-written gradient. Outside XLA,
TensorFlow runs GELU as ~6 separate element-wise ops forward and ~12 backward, each a full pass over
the (batch * seq, intermediate) activations; fused, forward and backward are one pass each (measured
on 2 CPU cores at BERT-mini (2048, 1024): 29 -> 13 CPU-ms per forward+backward for the tanh form).
The matmuls around it stay on the default kernels (full-model XLA is slower on CPU). The fused
functions compute the same formulas (float rounding apart); the Trainer enables them while it traces
its train step, so exported/serving graphs, which are traced outside the context, never contain XLA
clusters.
"""

import contextlib
import math

import keras
import tensorflow as tf

_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_INV_SQRT_2 = 1.0 / math.sqrt(2.0)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_TANH_COEFF = 0.044715

# How many `fused_activations()` contexts are open. Process-wide, not thread-local, on purpose:
# MirroredStrategy traces each replica's step in its own thread.
_FUSED_DEPTH = [0]


@contextlib.contextmanager
def fused_activations(enabled: bool = True):
  """Within this context (at trace time), GELUs are built as fused XLA kernels (see module doc)
  and `wide_dense` gives its layer's input gradient on a transposed kernel copy (`fusing()`)."""
  _FUSED_DEPTH[0] += int(enabled)
  try:
    yield
  finally:
    _FUSED_DEPTH[0] -= int(enabled)


# The gradients recompute the tanh / the CDF from x instead of keeping them from the forward pass:
# x is kept anyway (the gradient needs it), so the forward kernel writes y only and no second
# activation of the feed-forward's size is held until the backward pass (BERT-Base, batch 8: 151 MB
# less; on 2 CPU cores forward + backward at (1024, 3072) took 5.6 instead of 6.5 ms).


def _tanh_term(x):
  c = tf.cast(_SQRT_2_OVER_PI, x.dtype)
  k = tf.cast(_TANH_COEFF, x.dtype)
  return tf.tanh(c * (x + k * x * x * x))


def _normal_cdf(x):
  return 0.5 * (1.0 + tf.math.erf(x * tf.cast(_INV_SQRT_2, x.dtype)))


@tf.custom_gradient
def _gelu_tanh_with_grad(x):
  # GELU, tanh form (Hendrycks & Gimpel 2016, section 2): 0.5 x (1 + tanh(c (x + 0.044715 x^3))).
  y = 0.5 * x * (1.0 + _tanh_term(x))

  def grad(dy):
    # d/dx = 0.5 (1 + t) + 0.5 x (1 - t^2) c (1 + 3 k x^2)
    c = tf.cast(_SQRT_2_OVER_PI, x.dtype)
    k = tf.cast(_TANH_COEFF, x.dtype)
    t = _tanh_term(x)
    return dy * (0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * c * (1.0 + 3.0 * k * x * x))

  return y, grad


@tf.custom_gradient
def _gelu_exact_with_grad(x):
  # GELU, exact: x Phi(x) with Phi the standard normal CDF.
  y = x * _normal_cdf(x)

  def grad(dy):
    # d/dx = Phi(x) + x phi(x), phi(x) = exp(-x^2 / 2) / sqrt(2 pi)
    return dy * (_normal_cdf(x) + x * tf.exp(-0.5 * x * x) * tf.cast(_INV_SQRT_2PI, x.dtype))

  return y, grad


_fused_gelu_tanh = tf.function(_gelu_tanh_with_grad, jit_compile=True, autograph=False)
_fused_gelu_exact = tf.function(_gelu_exact_with_grad, jit_compile=True, autograph=False)


def fusing() -> bool:
  """True while a graph is traced inside `fused_activations()` (the Trainer's step)."""
  return bool(_FUSED_DEPTH[0]) and not tf.executing_eagerly()


def _switch(plain, fused):
  def activation(x):
    if fusing():
      return fused(x)
    return plain(x)
  return activation


def get_activation(name: str):
  """Returns the activation for a config name: exact erf GELU (the paper's), its tanh form, or ReLU."""
  if name == "gelu":
    return _switch(lambda x: keras.activations.gelu(x, approximate=False), _fused_gelu_exact)
  if name == "gelu_tanh":
    return _switch(lambda x: keras.activations.gelu(x, approximate=True), _fused_gelu_tanh)
  if name == "relu":
    return keras.activations.relu
  raise ValueError(f"hidden_act={name!r}; expected 'gelu', 'gelu_tanh' or 'relu'")
