"""Reverses each row's real tokens in place: the right-to-left half of an ELMo-style encoder pair
(the ablation of BERT section 5.1); a layer of its own so that loading a .keras file imports only it.
"""

import keras
from keras import ops


@keras.saving.register_keras_serializable(package="bert_keras")
class ReverseRealTokens(keras.layers.Layer):
  """(batch, seq[, H]) reversed within each row's real length; padding stays at the right."""

  def call(self, x, input_mask):
    lengths = ops.sum(ops.cast(input_mask, "int32"), axis=1)[:, None]  # (batch, 1)
    positions = ops.arange(ops.shape(x)[1], dtype="int32")[None]  # (1, seq)
    source = ops.where(positions < lengths, lengths - 1 - positions, positions)  # (batch, seq)
    for _ in range(len(x.shape) - 2):  # (batch, seq, 1): the same row for every feature
      source = ops.expand_dims(source, -1)
    return ops.take_along_axis(x, ops.broadcast_to(source, ops.shape(x)), axis=1)
