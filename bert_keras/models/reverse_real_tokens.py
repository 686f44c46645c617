"""Reverses each row's real tokens in place: the right-to-left half of an ELMo-style encoder pair.

The ELMo-style variant of the ablation study (BERT section 5.1) runs a causal encoder on the
reversed input and reverses its states back, so both directions line up token by token. A layer of
its own, apart from the study's training code, so that loading a .keras file holding it
(`bert_keras.keras_classes`) imports no more than the layer.
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
