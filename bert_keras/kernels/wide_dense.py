"""A Dense layer's training forward whose input gradient multiplies by a transposed kernel copy.

Why: for y = x W with W (k, n), TensorFlow's MatMul gradient computes dx = dy W^T as
`matmul(dy, W, transpose_b=True)`. On CPU, TensorFlow's oneDNN fp32 GEMM runs that "NT" form
far below its peak when the kernel is wide (n = 4k, the feed-forward's intermediate projection):
measured on 2 cores at BERT-Base, batch 8 (dy (1024, 3072), W (768, 3072)): 167-170 GFLOP/s, against
208-211 GFLOP/s for the same product as a plain "NN" GEMM on a W^T held in memory. Transposing W
(2.4 M values) takes ~1.2 ms; the GEMM saves ~5.5 ms. Forward + backward of that projection
alone: 82.6 -> 72 ms. Narrower kernels gain nothing (the (768, 2304) query-key-value kernel and
the square ones: equal within noise), so only the intermediate projection takes this path.

The transpose must be a real copy: TensorFlow's graph optimizer (grappler's arithmetic optimizer,
"fold transpose into matmul") rewrites `matmul(dy, tf.transpose(W))` back into the NT GEMM. The
copy is therefore made by a one-op XLA function (`_copy_transposed`), which grappler does not
look into. Under whole-step XLA (`jit_compile`, TPUs) that function is inlined and XLA folds the
transpose into its dot again, so accelerators see no extra copy.

The kernel gradient is TensorFlow's own (`matmul(x, dy, transpose_a=True)`, bit-identical); the
input gradient is the same product summed in another order (float rounding apart). The CPU
block (cpu_transformer_block.py) takes it for its feed-forward's widening projection in the
Trainer's step, with the fused GELU; the fallback (and evaluation and serving graphs) is the
layer's own call. Equality: tests/kernels/test_wide_dense.py.
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
  """`activation(rows @ kernel + bias)` of `layer` for rows (m, k), with the input gradient
  described in the module docstring, in place of the layer's own activation. The layer must have a
  bias and no LoRA or quantization (both take Keras' call, with the layer's activation)."""
  if (not layer.use_bias or layer.lora_enabled or layer.quantization_mode is not None
      or len(rows.shape) != 2):
    return layer(rows)
  kernel = tf.cast(layer.kernel, rows.dtype)
  y = tf.nn.bias_add(matmul_transposed_input_grad(rows, kernel), tf.cast(layer.bias, rows.dtype))
  return activation(y)
