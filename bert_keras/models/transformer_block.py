"""One post-LayerNorm Transformer block, as in the original BERT and GPT-1 code."""

import math

import keras
import tensorflow as tf

from bert_keras.models.activations import get_activation
from bert_keras.models.bit_dropout import bit_dropout
from bert_keras.models.fused_layer_norm import FUSED_MIN_HIDDEN, fused_layer_norm
from bert_keras.models.layer_norm_grad import layer_norm as layer_norm_with_grad
from bert_keras.models.wide_dense import wide_dense

# Additive bias for masked attention logits. The original uses -10000; it also fits in float16.
_MASK_BIAS = -10000.0


def _inference_layer_norm(layer, rows):
  """`layer` (a keras LayerNormalization over the last axis) on rows (n, hidden), inference only.

  The same function in 9 ops instead of Keras 3's 11-13 (no gamma/beta reshapes, no Neg/AddN):
  (x - mean) * (rsqrt(var + eps) * gamma) + beta, mean and biased variance over the row. At
  batch 1 a LayerNorm's time is mostly the fixed cost per op, not arithmetic. Deliberately NOT
  the FusedBatchNorm form that grappler fuses into one oneDNN _MklLayerNorm (remapper.cc
  FindMklLayerNorm): that kernel builds its oneDNN primitives on every call, which measured
  ~2.5x slower than this at 64-256 rows (5x faster at 2048 rows, i.e. batch 32). From hidden
  size FUSED_MIN_HIDDEN (768, BERT-Base) on, the fused kernel breaks even at batch 1 and wins
  at batch 32, so wide layers take it (`fused_layer_norm`, which says what was measured).
  Other dtypes (mixed precision) take the Keras layer, which normalises in float32.
  """
  if rows.dtype != tf.float32 or not (layer.center and layer.scale) or layer.rms_scaling:
    return layer(rows)
  if rows.shape[-1] is not None and rows.shape[-1] >= FUSED_MIN_HIDDEN:
    return fused_layer_norm(layer, rows)
  centered = rows - tf.reduce_mean(rows, axis=-1, keepdims=True)  # (n, hidden)
  variance = tf.reduce_mean(tf.square(centered), axis=-1, keepdims=True)  # (n, 1)
  return centered * (tf.math.rsqrt(variance + layer.epsilon) * layer.gamma) + layer.beta


def _permute(x, perm, training):
  """tf.transpose(x, perm); at inference written as a one-operand einsum, the same copy.

  With oneDNN on (TF's default on x86) every Transpose op becomes _MklTranspose, which builds a
  oneDNN reorder per call: at batch 1 that cost 2x the Einsum kernel's own (Eigen) transpose of
  the BERT-mini attention tensors (0.12 ms more per op, 16 ops per call); equal at batch 32.
  Training keeps Transpose, whose gradient graph the Trainer was tuned with.
  """
  if training:
    return tf.transpose(x, perm)
  axes = "abcdefgh"[:len(perm)]
  return tf.einsum(f"{axes}->{''.join(axes[p] for p in perm)}", x)


@keras.saving.register_keras_serializable(package="bert_keras")
class TransformerBlock(keras.layers.Layer):
  """Self-attention + feed-forward, each followed by dropout, residual add and LayerNorm.

  Query, key and value share one fused (H, 3H) projection: one matmul instead of three, which is
  measurably faster on CPU and GPU. Checkpoint converters split it back into Q, K and V.

  `row_groups` (inference only, default 1) splits the positions into that many groups of query
  rows that go through the block side by side: each group projects its own q, k and v; the
  groups meet for one attention over all positions (batched matmuls and softmax that use every
  core by themselves); then each group runs its attention output, LayerNorms and feed-forward on
  its own rows. The result is the unsplit block's (every op but the attention is row-wise), while
  the graph gets independent branches that TensorFlow's inter-op thread pool runs on different
  cores. That matters on CPU for small matrices: TF's oneDNN MatMul runs single-threaded when its
  operands fit the L2 cache (mkl_matmul_ops_common.h, ExecuteSingleThreadedGemm), so BERT-mini at
  batch 1 used one core per matmul. Training ignores it (dropout masks and gradients stay as
  without groups); the serving export sets it (bert_keras/export/serving_module.py), a checkpoint
  never stores it.
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

  def call(self, x, attention_mask, query_positions=None, training=None):
    """x: (batch, seq, hidden); attention_mask: (batch, seq_q, seq_k) with 1 = may attend.

    One body for training and inference. Inference runs `row_groups` groups of positions (see
    the class docstring): group g holds positions [start_g, start_g + size_g) of every sequence,
    sizes differing by at most one (a group may be empty when seq < row_groups); training always
    runs one group. Returns (batch, seq, hidden).

    `query_positions` (batch, Q), int: only the output rows at these positions are computed, and
    returned as (batch, Q, hidden) in that order. Keys and values still come from every position,
    so each row equals the full block's row at its position; only the queries, the attention for
    them and everything after it (output projection, feed-forward, LayerNorms) run on Q rows
    instead of seq. For a last block whose other rows nobody reads (pretraining reads [CLS] and
    the masked positions: BertPretrainer).
    """
    if query_positions is not None:
      return self._rows_at(x, attention_mask, tf.cast(query_positions, tf.int32), training)
    groups = 1 if training else self.row_groups
    batch, seq = tf.shape(x)[0], tf.shape(x)[1]
    heads, head_dim = self.num_heads, self.head_dim
    hidden = heads * head_dim
    xs = [x]
    if groups > 1:
      # floor((seq + groups - 1 - g) / groups) over g sums to seq (Hermite's identity).
      sizes = tf.stack([(seq + groups - 1 - g) // groups for g in range(groups)])
      xs = tf.split(x, sizes, num=groups, axis=1)  # each (batch, size_g, hidden)
    # Every projection runs on flattened (batch * size_g, hidden) rows: one 2-D GEMM whose
    # kernel gradient is one 2-D GEMM too (no batched matmul + reduction, no Tensordot reshapes).
    residuals = [tf.reshape(x_g, (-1, hidden)) for x_g in xs]
    # Each group's length from its own shape (static when known), never a -1 in the reshapes back
    # to (batch, size_g, ...): -1 cannot be inferred from zero elements, so an empty batch failed.
    group_sizes = [x_g.shape[1] if x_g.shape[1] is not None else tf.shape(x_g)[1] for x_g in xs]
    parts = []
    for rows, size in zip(residuals, group_sizes):
      qkv = tf.reshape(self.qkv_dense(rows), (batch, size, 3, heads, head_dim))
      # One transpose for q, k and v together; unstacking (its gradient is a stack) instead of
      # slicing, whose gradient writes each slice into a zero-filled copy of the whole tensor.
      qkv = _permute(qkv, (2, 0, 3, 1, 4), training)  # (3, batch, heads, size_g, head_dim)
      parts.append(tf.unstack(qkv, 3))  # q, k, v, each (batch, heads, size_g, head_dim)
    # The groups meet for the attention, which runs once over all positions: every query sees
    # every key, and the batched matmuls and softmax, which split their work over the intra-op
    # pool, no longer queue behind the other group's single-threaded projections (per-group
    # attention took 2-3x its own time in such waits at batch 1, and twice the ops).
    q, k, v = parts[0] if groups == 1 else (tf.concat(p, 2) for p in zip(*parts))
    context = self._attend(q, k, v, attention_mask, training)  # (batch, seq, heads, head_dim)
    contexts = [context] if groups == 1 else tf.split(context, sizes, num=groups, axis=1)
    outputs = [self._after_attention(context, rows, batch, size, training)
               for context, rows, size in zip(contexts, residuals, group_sizes)]
    return outputs[0] if groups == 1 else tf.concat(outputs, axis=1)

  def _rows_at(self, x, attention_mask, positions, training):
    """The block's output rows at `positions` (batch, Q): `call` with `query_positions`.

    Keys and values are projected for every position, queries only for the Q rows: the fused
    (hidden, 3 hidden) kernel is split into its query and key-value columns (tf.split, whose
    gradient is one concat, where slicing would add zero-filled copies of the kernel).
    """
    batch, seq = tf.shape(x)[0], tf.shape(x)[1]
    heads, head_dim = self.num_heads, self.head_dim
    hidden = heads * head_dim
    size = positions.shape[1] if positions.shape[1] is not None else tf.shape(positions)[1]
    rows = tf.reshape(tf.gather(x, positions, axis=1, batch_dims=1), (-1, hidden))  # (batch * Q, H)
    kernel = tf.cast(self.qkv_dense.kernel, x.dtype)
    bias = tf.cast(self.qkv_dense.bias, x.dtype)
    q_kernel, kv_kernel = tf.split(kernel, [hidden, 2 * hidden], axis=1)
    q_bias, kv_bias = tf.split(bias, [hidden, 2 * hidden], axis=0)
    q = tf.reshape(tf.nn.bias_add(tf.matmul(rows, q_kernel), q_bias), (batch, size, heads, head_dim))
    q = _permute(q, (0, 2, 1, 3), training)  # (batch, heads, Q, head_dim)
    kv = tf.nn.bias_add(tf.matmul(tf.reshape(x, (-1, hidden)), kv_kernel), kv_bias)
    kv = _permute(tf.reshape(kv, (batch, seq, 2, heads, head_dim)), (2, 0, 3, 1, 4), training)
    k, v = tf.unstack(kv, 2)  # each (batch, heads, seq, head_dim)
    mask = tf.gather(attention_mask, positions, axis=1, batch_dims=1)  # (batch, Q, seq)
    context = self._attend(q, k, v, mask, training)  # (batch, Q, heads, head_dim)
    return self._after_attention(context, rows, batch, size, training)

  def _attend(self, q, k, v, attention_mask, training):
    """Scaled dot-product attention: q (batch, heads, n, head_dim), k and v (batch, heads, seq,
    head_dim), attention_mask (batch, n, seq) -> context (batch, n, heads, head_dim)."""
    # Scaling q (batch*seq*hidden values) is cheaper than scaling the (batch, heads, seq, seq)
    # scores, and exact whenever 1/sqrt(head_dim) is a power of two (head_dim 64: every preset).
    q = q * tf.cast(1.0 / math.sqrt(self.head_dim), q.dtype)
    scores = tf.matmul(q, k, transpose_b=True)  # (batch, heads, n, seq)
    bias = (1.0 - tf.cast(attention_mask[:, None, :, :], scores.dtype)) * _MASK_BIAS
    probs = tf.nn.softmax(scores + tf.cast(bias, scores.dtype), axis=-1)
    probs = bit_dropout(self.attention_dropout, probs, training)
    context = tf.matmul(probs, v)  # (batch, heads, n, head_dim)
    return _permute(context, (0, 2, 1, 3), training)  # (batch, n, heads, head_dim)

  def _after_attention(self, context, rows, batch, size, training):
    """Output projection, residual + LayerNorm, feed-forward, residual + LayerNorm on one group's
    rows: context (batch, size, heads, head_dim), rows (batch * size, hidden) the block's input
    at those positions -> (batch, size, hidden)."""
    hidden = self.num_heads * self.head_dim
    context = tf.reshape(context, (-1, hidden))  # (batch * size, hidden)
    rows = self._add_and_norm(self.attention_layer_norm, rows,
                              self.attention_output_dense(context), training)
    ffn = self.output_dense(wide_dense(self.intermediate_dense, rows, training))
    rows = self._add_and_norm(self.output_layer_norm, rows, ffn, training)
    return tf.reshape(rows, (batch, size, hidden))

  def _add_and_norm(self, layer_norm, rows, update, training):
    """LayerNorm(rows + dropout(update)), the post-LN residual step; rows, update (n, hidden).

    Inference takes the LayerNorm in fewer ops (`_inference_layer_norm`, same function); training
    takes it with a hand-written gradient (`layer_norm_grad`) and hashed dropout masks
    (`bit_dropout`), each fewer passes than Keras' versions.
    """
    if training:
      return layer_norm_with_grad(layer_norm,
                                  rows + bit_dropout(self.hidden_dropout, update, training))
    return _inference_layer_norm(layer_norm, rows + update)

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
