"""A Dense layer's training forward whose input gradient multiplies by a transposed kernel copy.

oneDNN's fp32 GEMM runs TensorFlow's `dx = matmul(dy, W, transpose_b=True)` slowly for wide kernels:
BERT-Base's (1024, 3072) x (768, 3072)^T at 167-170 GFLOP/s against 208-211 as an NN GEMM on W^T
(the transpose ~1.2 ms, the GEMM saves ~5.5 ms; narrower kernels gain nothing). The copy is a one-op
XLA function, because grappler folds a plain transpose back into the matmul. The kernel gradient is
TensorFlow's own. Equality: tests/kernels/test_wide_dense.py.
"""

import keras
import tensorflow as tf

_copy_transposed = tf.function(tf.transpose, jit_compile=True, autograph=False)


@tf.custom_gradient
def matmul_transposed_input_grad(x, kernel):
  """x (m, k) @ kernel (k, n), whose x-gradient is dy @ (a transposed copy of kernel)."""

  def grad(dy):
    return tf.matmul(dy, _copy_transposed(kernel)), tf.matmul(x, dy, transpose_a=True)

  return tf.matmul(x, kernel), grad


def wide_dense(layer: keras.layers.Dense, rows, activation):
  """`activation(rows @ kernel + bias)` of `layer` (with a bias, no LoRA or quantization) for rows
  (m, k), its input gradient on the transposed copy."""
  if (not layer.use_bias or layer.lora_enabled or layer.quantization_mode is not None
      or len(rows.shape) != 2):
    return layer(rows)
  kernel = tf.cast(layer.kernel, rows.dtype)
  y = tf.nn.bias_add(matmul_transposed_input_grad(rows, kernel), tf.cast(layer.bias, rows.dtype))
  return activation(y)
