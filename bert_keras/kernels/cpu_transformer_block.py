"""TransformerBlock.call computed on a block's own variables with the CPU kernels: flattened rows
(one 2-D GEMM each way), q scaled instead of the scores, `query_positions` for only those rows.

`head_groups` (inference) splits the block by heads, as tensor parallelism does: independent branches
for the inter-op pool, since oneDNN runs an L2-sized matmul on one core. MiniLM, batch 1, 16-128
positions: 0.72-0.95x the time (host_tuning.py); the columns a group reads are copied once (25 MB).
"""

import math

import keras
import tensorflow as tf

from bert_keras.kernels.bit_dropout import bit_dropout
from bert_keras.kernels.einsum_permute import permute
from bert_keras.kernels.fused_gelu import fused_activation
from bert_keras.kernels.fused_layer_norm import inference_layer_norm
from bert_keras.kernels.layer_norm_grad import layer_norm as layer_norm_with_grad
from bert_keras.kernels.wide_dense import wide_dense
from bert_keras.models.transformer_block import MASK_BIAS


class CpuTransformerBlock(keras.layers.Layer):
  """Calls `block` (a built TransformerBlock) the CPU way; never saved (files name TransformerBlock)."""

  def __init__(self, block, head_groups: int = 1, fused_elementwise: bool = True, **kwargs):
    super().__init__(dtype=block.dtype_policy, **kwargs)
    if int(head_groups) != head_groups or head_groups < 1:
      raise ValueError(f"head_groups={head_groups!r}; expected an integer >= 1")
    self.block = block
    self.head_groups = int(head_groups)
    self.fused_elementwise = fused_elementwise
    self.head_group_weights = self._head_group_weights() if head_groups > 1 else None
    self.built = True

  def _head_group_weights(self):
    """Per group, copies of its q-k-v and widening columns (a per-call slice would copy them)."""
    block, groups = self.block, self.head_groups
    heads, head_dim = block.num_heads, block.head_dim
    width = block.intermediate_dense.kernel.shape[1]
    if heads % groups or width % groups:
      raise ValueError(f"head_groups={groups} does not divide num_heads={heads} and the "
                       f"feed-forward width {width}")
    hidden = heads * head_dim
    numpy = lambda weight, *shape: keras.ops.convert_to_numpy(weight).reshape(shape)
    qkv_kernel = numpy(block.qkv_dense.kernel, hidden, 3, groups, heads // groups, head_dim)
    qkv_bias = numpy(block.qkv_dense.bias, 3, groups, heads // groups, head_dim)
    wide_kernel = numpy(block.intermediate_dense.kernel, hidden, groups, width // groups)
    wide_bias = numpy(block.intermediate_dense.bias, groups, width // groups)
    copy = lambda name, value: self.add_weight(
        shape=value.shape, initializer=lambda shape, dtype: value, trainable=False,
        name=name, dtype=block.qkv_dense.kernel.dtype)
    return [{
        "qkv_kernel": copy(f"qkv_kernel_{g}", qkv_kernel[:, :, g].reshape(hidden, -1)),
        "qkv_bias": copy(f"qkv_bias_{g}", qkv_bias[:, g].reshape(-1)),
        "wide_kernel": copy(f"intermediate_kernel_{g}", wide_kernel[:, g]),
        "wide_bias": copy(f"intermediate_bias_{g}", wide_bias[g]),
    } for g in range(groups)]

  def call(self, x, attention_mask, query_positions=None, training=None):
    """x: (batch, seq, hidden); attention_mask: (batch, seq, seq) -> (batch, seq, hidden), or
    (batch, Q, hidden) at `query_positions` (batch, Q)."""
    if query_positions is not None:
      return self._rows_at(x, attention_mask, tf.cast(query_positions, tf.int32), training)
    if self.head_groups > 1 and not training:
      return self._by_head_groups(x, attention_mask)
    block = self.block
    batch = tf.shape(x)[0]
    # The static length when known: a -1 in the reshapes fails on an empty batch.
    seq = x.shape[1] if x.shape[1] is not None else tf.shape(x)[1]
    heads, head_dim = block.num_heads, block.head_dim
    rows = tf.reshape(x, (-1, heads * head_dim))  # (batch * seq, hidden)
    context = self._attention(block.qkv_dense(rows), batch, seq, heads, attention_mask, training)
    return self._after_attention(context, rows, batch, seq, training)

  def _attention(self, qkv, batch, seq, heads, attention_mask, training):
    """qkv (batch * seq, 3 * heads * head_dim), the fused q-k-v projection of `heads` heads ->
    context (batch, seq, heads, head_dim)."""
    qkv = tf.reshape(qkv, (batch, seq, 3, heads, self.block.head_dim))
    # One transpose, then unstack (its gradient is a stack; a slice's is a zero-filled copy).
    qkv = permute(qkv, (2, 0, 3, 1, 4), training)  # (3, batch, heads, seq, head_dim)
    return self._attend(*tf.unstack(qkv, 3), attention_mask, training)

  def _by_head_groups(self, x, attention_mask):
    """Inference by head groups: each group's attention and share of the feed-forward width; their
    partial projections summed before each residual add and LayerNorm."""
    block, groups = self.block, self.head_groups
    batch, seq = tf.shape(x)[0], tf.shape(x)[1]
    heads, head_dim = block.num_heads // groups, block.head_dim
    rows = tf.reshape(x, (-1, block.num_heads * head_dim))  # (batch * seq, hidden)
    cast = lambda weight: tf.cast(weight, rows.dtype)
    weights = [{name: cast(value) for name, value in group.items()}
               for group in self.head_group_weights]
    output_kernels = tf.split(cast(block.attention_output_dense.kernel), groups, axis=0)
    parts = []
    for group, output_kernel in zip(weights, output_kernels):
      qkv = tf.nn.bias_add(tf.matmul(rows, group["qkv_kernel"]), group["qkv_bias"])
      context = self._attention(qkv, batch, seq, heads, attention_mask, False)
      parts.append(tf.matmul(tf.reshape(context, (-1, heads * head_dim)), output_kernel))
    update = tf.nn.bias_add(tf.add_n(parts), cast(block.attention_output_dense.bias))
    rows = self._add_and_norm(block.attention_layer_norm, rows, update, False)
    activation = block.intermediate_dense.activation
    narrow_kernels = tf.split(cast(block.output_dense.kernel), groups, axis=0)
    parts = [tf.matmul(activation(tf.nn.bias_add(tf.matmul(rows, group["wide_kernel"]),
                                                 group["wide_bias"])), narrow_kernel)
             for group, narrow_kernel in zip(weights, narrow_kernels)]
    update = tf.nn.bias_add(tf.add_n(parts), cast(block.output_dense.bias))
    rows = self._add_and_norm(block.output_layer_norm, rows, update, False)
    return tf.reshape(rows, tf.shape(x))

  def _rows_at(self, x, attention_mask, positions, training):
    """The full block's rows at `positions` (batch, Q): keys and values from every position, the
    rest on Q rows (tf.split of the kernel: its gradient is one concat, not zero-filled copies)."""
    block = self.block
    batch, seq = tf.shape(x)[0], tf.shape(x)[1]
    heads, head_dim = block.num_heads, block.head_dim
    hidden = heads * head_dim
    size = positions.shape[1] if positions.shape[1] is not None else tf.shape(positions)[1]
    rows = tf.reshape(tf.gather(x, positions, axis=1, batch_dims=1), (-1, hidden))  # (batch * Q, H)
    q_kernel, kv_kernel = tf.split(tf.cast(block.qkv_dense.kernel, x.dtype), [hidden, 2 * hidden], 1)
    q_bias, kv_bias = tf.split(tf.cast(block.qkv_dense.bias, x.dtype), [hidden, 2 * hidden], 0)
    q = tf.reshape(tf.nn.bias_add(tf.matmul(rows, q_kernel), q_bias), (batch, size, heads, head_dim))
    q = permute(q, (0, 2, 1, 3), training)  # (batch, heads, Q, head_dim)
    kv = tf.nn.bias_add(tf.matmul(tf.reshape(x, (-1, hidden)), kv_kernel), kv_bias)
    kv = permute(tf.reshape(kv, (batch, seq, 2, heads, head_dim)), (2, 0, 3, 1, 4), training)
    k, v = tf.unstack(kv, 2)  # each (batch, heads, seq, head_dim)
    mask = tf.gather(attention_mask, positions, axis=1, batch_dims=1)  # (batch, Q, seq)
    context = self._attend(q, k, v, mask, training)  # (batch, Q, heads, head_dim)
    return self._after_attention(context, rows, batch, size, training)

  def _attend(self, q, k, v, attention_mask, training):
    """q (batch, heads, n, head_dim), k and v (batch, heads, seq, head_dim), attention_mask
    (batch, n, seq) -> context (batch, n, heads, head_dim)."""
    # Scaling q is cheaper than scaling the scores, and exact for head_dim 64 (every preset).
    q = q * tf.cast(1.0 / math.sqrt(self.block.head_dim), q.dtype)
    scores = tf.matmul(q, k, transpose_b=True)  # (batch, heads, n, seq)
    bias = (1.0 - tf.cast(tf.expand_dims(attention_mask, 1), scores.dtype)) * MASK_BIAS
    probs = tf.nn.softmax(scores + tf.cast(bias, scores.dtype), axis=-1)
    probs = bit_dropout(self.block.attention_dropout, probs, training)
    context = tf.matmul(probs, v)  # (batch, heads, n, head_dim)
    return permute(context, (0, 2, 1, 3), training)  # (batch, n, heads, head_dim)

  def _after_attention(self, context, rows, batch, size, training):
    """Output projection, add & norm, feed-forward, add & norm: context (batch, size, heads,
    head_dim), rows (batch * size, hidden) -> (batch, size, hidden)."""
    block = self.block
    hidden = block.num_heads * block.head_dim
    context = tf.reshape(context, (-1, hidden))  # (batch * size, hidden)
    rows = self._add_and_norm(block.attention_layer_norm, rows,
                              block.attention_output_dense(context), training)
    if training and self.fused_elementwise and not tf.executing_eagerly():
      inner = wide_dense(block.intermediate_dense, rows, fused_activation(block.hidden_act))
    else:
      inner = block.intermediate_dense(rows)
    rows = self._add_and_norm(block.output_layer_norm, rows, block.output_dense(inner), training)
    return tf.reshape(rows, (batch, size, hidden))

  def _add_and_norm(self, layer_norm, rows, update, training):
    """LayerNorm(rows + dropout(update)), the post-LN residual step; rows, update (n, hidden)."""
    if training:
      return layer_norm_with_grad(
          layer_norm, rows + bit_dropout(self.block.hidden_dropout, update, training))
    return inference_layer_norm(layer_norm, rows + update)
