"""LayerNorm at inference in fewer ops, and for wide layers in the form TF's grappler turns into
one oneDNN kernel.

Why: at batch 1 a LayerNorm's time is mostly the fixed cost per op, not arithmetic. Keras 3's
LayerNormalization is 11-13 ops; `inference_layer_norm` is the same function in 9:
(x - mean) * (rsqrt(var + eps) * gamma) + beta, mean and biased variance over the row. The single
oneDNN `_MklLayerNorm` kernel (`fused_layer_norm`) makes one pass but builds its oneDNN primitive
on every call: measured on 2 CPU cores, float32, per LayerNorm, it is ~2.5x slower than the 9 ops
at 64-256 rows and hidden 256, 5x faster at 2048 rows (batch 32); at hidden 768 even at 128 rows
and 2-3.7x faster at 1024-4096. A tf.cond on the row count would serve both, but its Switch/Merge
nodes cost BERT-mini ~4% at batch 1 and gave back most of the batch-32 gain, so the choice is
static, by width (host_tuning.FUSED_LAYER_NORM_MIN_HIDDEN).

Grappler's remapper (remapper.cc, FindMklLayerNorm, the pattern of Keras 2's fused
LayerNormalization) only forms the kernel from
  beta + Reshape(FusedBatchNormV3[is_training](Reshape(x), Fill(1), Fill(0), {}, {})) * gamma
with a dynamic row count (a static one constant-folds the Fills and the match fails), on a
oneDNN build (TF's default on x86); elsewhere the same ops run unfused, with the same result.
Fallback: other dtypes (mixed precision) and LayerNorm variants take the Keras layer. Equality:
tests/kernels/test_fused_layer_norm.py.
"""

import tensorflow as tf

from bert_keras.kernels.host_tuning import FUSED_LAYER_NORM_MIN_HIDDEN


def inference_layer_norm(layer, rows):
  """`layer` (a keras LayerNormalization over the last axis) on rows (n, hidden), inference only."""
  if rows.dtype != tf.float32 or not (layer.center and layer.scale) or layer.rms_scaling:
    return layer(rows)
  if rows.shape[-1] is not None and rows.shape[-1] >= FUSED_LAYER_NORM_MIN_HIDDEN:
    return fused_layer_norm(layer, rows)
  centered = rows - tf.reduce_mean(rows, axis=-1, keepdims=True)  # (n, hidden)
  variance = tf.reduce_mean(tf.square(centered), axis=-1, keepdims=True)  # (n, 1)
  return centered * (tf.math.rsqrt(variance + layer.epsilon) * layer.gamma) + layer.beta


def fused_layer_norm(layer, rows):
  """`layer` (keras LayerNormalization, float32, center and scale) on rows (n, hidden).

  Batch normalization of the (1, n, hidden, 1) NCHW view normalizes each of the n "channels"
  over its hidden values with the biased variance: LayerNorm without gamma and beta. The raw op
  keeps BERT's epsilon (1e-12); tf.nn.fused_batch_norm would raise it to 1.001e-5. Inference
  only: the fused kernel has no gradient.
  """
  n, hidden = tf.shape(rows)[0], tf.shape(rows)[1]  # no -1 in the reshape: n may be 0
  unit = lambda value: tf.fill(tf.reshape(n, [1]), tf.constant(value, rows.dtype))  # (n,)
  empty = tf.constant([], rows.dtype)
  normalized = tf.raw_ops.FusedBatchNormV3(
      x=tf.reshape(rows, tf.stack([1, n, hidden, 1])), scale=unit(1.0), offset=unit(0.0),
      mean=empty, variance=empty, epsilon=layer.epsilon, data_format="NCHW",
      is_training=True).y  # (1, n, hidden, 1)
  return layer.beta + tf.reshape(normalized, tf.shape(rows)) * layer.gamma  # (n, hidden)
