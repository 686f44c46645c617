"""Turns a (batch, seq) padding mask into the (batch, seq, seq) mask the attention uses."""

import keras
from keras import ops

from bert_keras.models.config_layer import ConfigLayer


@keras.saving.register_keras_serializable(package="bert_keras")
class AttentionMask(ConfigLayer):
  """1 where query i may attend to key j: key j is a real token and, if causal, j <= i."""

  CONFIG = ("causal",)

  def __init__(self, causal: bool = False, **kwargs):
    super().__init__(**kwargs)
    self.keep_config(locals())

  def call(self, input_mask):
    mask = ops.cast(input_mask, "float32")  # (batch, seq)
    seq = ops.shape(mask)[1]
    # expand_dims, not mask[:, None, :]: that slice is a StridedSlice with a new axis, which
    # LiteRT has no builtin kernel for at dynamic shapes (bert_keras/export/litert_export.py).
    mask = ops.broadcast_to(ops.expand_dims(mask, 1), (ops.shape(mask)[0], seq, seq))  # (batch, q, k)
    if self.causal:
      lower = ops.tril(ops.ones((seq, seq), "float32"))  # token i sees 0..i only.
      mask = mask * lower[None, :, :]
    return mask
