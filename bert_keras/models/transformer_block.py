"""One post-LayerNorm Transformer block, as in the original BERT and GPT-1 code."""

import math

import keras
import tensorflow as tf
from keras import ops

from bert_keras.models.activations import get_activation

# Additive bias for masked attention logits. The original uses -10000; it also fits in float16.
_MASK_BIAS = -10000.0


@keras.saving.register_keras_serializable(package="bert_keras")
class TransformerBlock(keras.layers.Layer):
  """Self-attention + feed-forward, each followed by dropout, residual add and LayerNorm.

  Query, key and value share one fused (H, 3H) projection: one matmul instead of three, which is
  measurably faster on CPU and GPU. Checkpoint converters split it back into Q, K and V.

  `row_groups` (inference only, default 1) splits the positions into that many groups of query
  rows that go through the block side by side: each group projects its own q, k and v, attends
  against the keys and values of ALL positions (the only point where the groups meet), then runs
  its attention output, LayerNorms and feed-forward on its own rows. The result is the unsplit
  block's (every op is row-wise but the attention, which sees every key), while the graph gets
  independent branches that TensorFlow's inter-op thread pool runs on different cores. That
  matters on CPU for small matrices: TF's oneDNN MatMul runs single-threaded when its operands fit
  the L2 cache (mkl_matmul_ops_common.h, ExecuteSingleThreadedGemm), so BERT-mini at batch 1 used
  one core per matmul. Training ignores it (dropout masks and gradients stay as without groups);
  the serving export sets it (bert_keras/export/serving_module.py), a checkpoint never stores it.
  """

  def __init__(self, num_heads: int, intermediate_size: int, hidden_act: str = "gelu",
               dropout_rate: float = 0.1, attention_dropout_rate: float = 0.1,
               layer_norm_epsilon: float = 1e-12, initializer_range: float = 0.02,
               row_groups: int = 1, **kwargs):
    super().__init__(**kwargs)
    self.row_groups = row_groups
    self.num_heads = num_heads
    self.intermediate_size = intermediate_size
    self.hidden_act = hidden_act
    self.dropout_rate = dropout_rate
    self.attention_dropout_rate = attention_dropout_rate
    self.layer_norm_epsilon = layer_norm_epsilon
    self.initializer_range = initializer_range

  def build(self, input_shape):
    hidden = input_shape[-1]
    if hidden % self.num_heads:
      raise ValueError(f"hidden_size={hidden} is not divisible by num_heads={self.num_heads}")
    self.head_dim = hidden // self.num_heads
    init = lambda: keras.initializers.TruncatedNormal(stddev=self.initializer_range)
    self.qkv_dense = keras.layers.Dense(3 * hidden, kernel_initializer=init(), name="qkv",
                                        dtype=self.dtype_policy)
    self.qkv_dense.build(input_shape)
    self.attention_output_dense = keras.layers.Dense(
        hidden, kernel_initializer=init(), name="attention_output", dtype=self.dtype_policy)
    self.attention_output_dense.build(input_shape[:-1] + (hidden,))
    self.attention_layer_norm = keras.layers.LayerNormalization(
        epsilon=self.layer_norm_epsilon, name="attention_layer_norm", dtype=self.dtype_policy)
    self.attention_layer_norm.build(input_shape)
    self.intermediate_dense = keras.layers.Dense(
        self.intermediate_size, kernel_initializer=init(),
        activation=get_activation(self.hidden_act), name="intermediate", dtype=self.dtype_policy)
    self.intermediate_dense.build(input_shape)
    self.output_dense = keras.layers.Dense(hidden, kernel_initializer=init(), name="output",
                                           dtype=self.dtype_policy)
    self.output_dense.build(input_shape[:-1] + (self.intermediate_size,))
    self.output_layer_norm = keras.layers.LayerNormalization(
        epsilon=self.layer_norm_epsilon, name="output_layer_norm", dtype=self.dtype_policy)
    self.output_layer_norm.build(input_shape)
    self.attention_dropout = keras.layers.Dropout(self.attention_dropout_rate, dtype=self.dtype_policy)
    self.hidden_dropout = keras.layers.Dropout(self.dropout_rate, dtype=self.dtype_policy)
    self.built = True

  @property
  def row_groups(self) -> int:
    return self._row_groups

  @row_groups.setter
  def row_groups(self, value: int):
    if int(value) != value or value < 1:
      raise ValueError(f"row_groups={value!r}; expected an integer >= 1")
    self._row_groups = int(value)

  def call(self, x, attention_mask, training=None):
    # x: (batch, seq, hidden); attention_mask: (batch, seq_q, seq_k) with 1 = may attend.
    if self.row_groups > 1 and not training:
      return self._call_row_groups(x, attention_mask)
    # Every projection runs on the flattened (batch * seq, hidden) matrix: one 2-D GEMM whose
    # kernel gradient is one 2-D GEMM too (no batched matmul + reduction, no Tensordot reshapes).
    batch, seq = ops.shape(x)[0], ops.shape(x)[1]
    heads, head_dim = self.num_heads, self.head_dim
    hidden = heads * head_dim
    rows = ops.reshape(x, (-1, hidden))  # (batch * seq, hidden)
    qkv = ops.reshape(self.qkv_dense(rows), (batch, seq, 3, heads, head_dim))
    # One transpose for q, k and v together; unstacking (its gradient is a stack) instead of
    # slicing, whose gradient writes each slice into a zero-filled copy of the whole tensor.
    q, k, v = ops.unstack(ops.transpose(qkv, (2, 0, 3, 1, 4)), 3)  # each (batch, heads, seq, dim)
    # Scaling q (batch*seq*hidden values) is cheaper than scaling the (batch, heads, seq, seq)
    # scores, and exact whenever 1/sqrt(head_dim) is a power of two (head_dim 64: every preset).
    q = q * ops.cast(1.0 / math.sqrt(head_dim), q.dtype)
    scores = tf.matmul(q, k, transpose_b=True)  # (batch, heads, seq_q, seq_k)
    bias = (1.0 - ops.cast(attention_mask[:, None, :, :], scores.dtype)) * _MASK_BIAS
    probs = ops.softmax(scores + ops.cast(bias, scores.dtype), axis=-1)
    probs = self.attention_dropout(probs, training=training)
    context = tf.matmul(probs, v)  # (batch, heads, seq, head_dim)
    context = ops.reshape(ops.transpose(context, (0, 2, 1, 3)), (-1, hidden))  # (batch * seq, H)
    attention = self.hidden_dropout(self.attention_output_dense(context), training=training)
    rows = self.attention_layer_norm(rows + attention)
    ffn = self.output_dense(self.intermediate_dense(rows))
    ffn = self.hidden_dropout(ffn, training=training)
    rows = self.output_layer_norm(rows + ffn)
    return ops.reshape(rows, (batch, seq, hidden))

  def _call_row_groups(self, x, attention_mask):
    """Inference with the positions split into `row_groups` groups (see the class docstring).

    x: (batch, seq, hidden); attention_mask: (batch, seq, seq). Group g holds positions
    [start_g, start_g + size_g) of every sequence, sizes differing by at most one (a group may be
    empty when seq < row_groups). Returns (batch, seq, hidden).
    """
    groups = self.row_groups
    batch, seq = tf.shape(x)[0], tf.shape(x)[1]
    heads, head_dim = self.num_heads, self.head_dim
    hidden = heads * head_dim
    # floor((seq + groups - 1 - g) / groups) over g sums to seq (Hermite's identity).
    sizes = tf.stack([(seq + groups - 1 - g) // groups for g in range(groups)])
    xs = tf.split(x, sizes, num=groups, axis=1)  # each (batch, size_g, hidden)
    masks = tf.split(attention_mask, sizes, num=groups, axis=1)  # each (batch, size_g, seq)
    queries, keys, values, residuals = [], [], [], []
    for x_g in xs:
      rows = tf.reshape(x_g, (-1, hidden))  # (batch * size_g, hidden)
      qkv = tf.reshape(self.qkv_dense(rows), (batch, -1, 3, heads, head_dim))
      q, k, v = tf.unstack(tf.transpose(qkv, (2, 0, 3, 1, 4)), 3)  # (batch, heads, size_g, dim)
      queries.append(q * tf.cast(1.0 / math.sqrt(head_dim), q.dtype))
      keys.append(k)
      values.append(v)
      residuals.append(rows)
    k, v = tf.concat(keys, axis=2), tf.concat(values, axis=2)  # (batch, heads, seq, dim)
    outputs = []
    for q, mask, rows in zip(queries, masks, residuals):
      scores = tf.matmul(q, k, transpose_b=True)  # (batch, heads, size_g, seq)
      bias = (1.0 - tf.cast(mask[:, None, :, :], scores.dtype)) * _MASK_BIAS
      probs = tf.nn.softmax(scores + tf.cast(bias, scores.dtype), axis=-1)
      context = tf.matmul(probs, v)  # (batch, heads, size_g, dim)
      context = tf.reshape(tf.transpose(context, (0, 2, 1, 3)), (-1, hidden))
      rows = self.attention_layer_norm(rows + self.attention_output_dense(context))
      rows = self.output_layer_norm(rows + self.output_dense(self.intermediate_dense(rows)))
      outputs.append(tf.reshape(rows, (batch, -1, hidden)))
    return tf.concat(outputs, axis=1)

  def get_config(self):
    config = super().get_config()
    config.update(num_heads=self.num_heads, intermediate_size=self.intermediate_size,
                  hidden_act=self.hidden_act, dropout_rate=self.dropout_rate,
                  attention_dropout_rate=self.attention_dropout_rate,
                  layer_norm_epsilon=self.layer_norm_epsilon,
                  initializer_range=self.initializer_range)
    if self.row_groups != 1:  # absent by default: configs saved before it existed still match
      config.update(row_groups=self.row_groups)
    return config
