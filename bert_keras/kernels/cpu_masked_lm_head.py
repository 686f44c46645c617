"""MaskedLMHead's contract on a head's own variables: the fused GELU in a traced training step (as in
the CPU block), the logits reading the (vocab, hidden) table with `transpose_b`.
"""

import keras
import tensorflow as tf
from keras import ops

from bert_keras.kernels.fused_gelu import fused_activation


class CpuMaskedLMHead(keras.layers.Layer):
  """Calls `head` (a built MaskedLMHead) the CPU way on its variables."""

  def __init__(self, head, fused_elementwise: bool = True, **kwargs):
    super().__init__(dtype=head.dtype_policy, **kwargs)
    self.head = head
    self.fused_elementwise = fused_elementwise
    self.built = True

  def call(self, x, training=None):
    """x: (batch, positions, hidden) -> logits (batch, positions, vocab)."""
    head, shape = self.head, ops.shape(x)
    rows = ops.reshape(x, (-1, shape[-1]))  # (batch * positions, hidden)
    transform = head.transform
    if training and self.fused_elementwise and not tf.executing_eagerly():
      rows = ops.add(ops.matmul(rows, transform.kernel), transform.bias)  # as Dense.call
      rows = fused_activation(head.hidden_act)(rows)
    else:
      rows = transform(rows)
    rows = head.layer_norm(rows)
    table = ops.cast(head.token_embedding.embeddings, rows.dtype)  # (vocab, hidden)
    logits = tf.matmul(rows, table, transpose_b=True)  # (batch * positions, vocab)
    logits = logits + ops.cast(head.output_bias, logits.dtype)
    return ops.reshape(logits, (shape[0], shape[1], -1))
