"""LayerNorm at inference in 9 ops instead of Keras' 11-13; from host_tuning's width on, in the form
grappler turns into one oneDNN `_MklLayerNorm` (~2.5x slower at hidden 256, 2-3.7x faster at 768):
  beta + Reshape(FusedBatchNormV3[is_training](Reshape(x), Fill(1), Fill(0), {}, {})) * gamma
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
  """`layer` on rows (n, hidden) as batch norm of the (1, n, hidden, 1) NCHW view. The raw op
  keeps BERT's epsilon 1e-12 (tf.nn.fused_batch_norm raises it to 1.001e-5). Inference only."""
  n, hidden = tf.shape(rows)[0], tf.shape(rows)[1]  # no -1 in the reshape: n may be 0
  unit = lambda value: tf.fill(tf.reshape(n, [1]), tf.constant(value, rows.dtype))  # (n,)
  empty = tf.constant([], rows.dtype)
  normalized = tf.raw_ops.FusedBatchNormV3(
      x=tf.reshape(rows, tf.stack([1, n, hidden, 1])), scale=unit(1.0), offset=unit(0.0),
      mean=empty, variance=empty, epsilon=layer.epsilon, data_format="NCHW",
      is_training=True).y  # (1, n, hidden, 1)
  return layer.beta + tf.reshape(normalized, tf.shape(rows)) * layer.gamma  # (n, hidden)
