"""LayerNorm at inference in the form TF's grappler turns into one oneDNN kernel (wide layers).

TransformerBlock's inference LayerNorm (`_inference_layer_norm`) is 9 small ops: 5 passes over
the activations, but no fixed cost beyond TF's per-op dispatch. The single oneDNN
`_MklLayerNorm` kernel makes one pass, but builds its oneDNN primitive on every call. Measured
on 2 CPU cores, float32, per LayerNorm: at hidden 256 the fused kernel is 1.3x slower at 128
rows and 1.5-2.4x faster at 1024-4096 rows; at hidden 768 it is even at 128 rows and 2-3.7x
faster at 1024-4096. In the whole encoder (row_groups=2, same-process A/B, CPU-ms per call):
BERT-Base batch 32 -6% with batch 1 unchanged; BERT-mini batch 32 -7% but batch 1 +23%. A
tf.cond on the row count would serve both, but its Switch/Merge nodes cost BERT-mini ~4% at
batch 1 and gave back most of the batch-32 gain, so the choice is static, by width
(`FUSED_MIN_HIDDEN`).

Grappler's remapper (remapper.cc, FindMklLayerNorm, the pattern of Keras 2's fused
LayerNormalization) only forms the kernel from
  beta + Reshape(FusedBatchNormV3[is_training](Reshape(x), Fill(1), Fill(0), {}, {})) * gamma
with a dynamic row count (a static one constant-folds the Fills and the match fails), on a
oneDNN build (TF's default on x86); elsewhere the same ops run unfused, with the same result.
"""

import tensorflow as tf

# From this hidden size on, inference LayerNorms take the fused kernel (BERT-Base and larger).
FUSED_MIN_HIDDEN = 768


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
