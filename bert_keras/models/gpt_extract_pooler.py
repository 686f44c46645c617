"""Reads the final extract token's state, GPT-1's sequence representation h_l^m (section 3.2)."""

import keras
from keras import ops


@keras.saving.register_keras_serializable(package="bert_keras")
class GPTExtractPooler(keras.layers.Layer):
  """(N, seq, H) states and the (N, seq) right-padded mask -> (N, H), the state at the last real
  token: the extract token, the only position of a causal model that has seen the whole input."""

  def call(self, sequence, input_mask):
    length = ops.sum(ops.cast(input_mask, "int32"), axis=1)  # (N,)
    last = ops.maximum(length - 1, 0)
    index = ops.reshape(last, (-1, 1, 1))  # (N, 1, 1)
    return ops.take_along_axis(sequence, index, axis=1)[:, 0, :]  # (N, H)
