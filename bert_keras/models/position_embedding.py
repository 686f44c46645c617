"""Learned absolute position embeddings (BERT section 3.2; GPT-1 section 4.1)."""

import keras
from keras import ops

from bert_keras.models.config_layer import ConfigLayer


@keras.saving.register_keras_serializable(package="bert_keras")
class PositionEmbedding(ConfigLayer):
  """Adds nothing: returns the (seq, hidden) slice of a learned (max_length, hidden) table."""

  CONFIG = ("max_length", "initializer_range")

  def __init__(self, max_length: int, initializer_range: float = 0.02, **kwargs):
    super().__init__(**kwargs)
    self.keep_config(locals())

  def build(self, input_shape):
    hidden = input_shape[-1]
    self.embeddings = self.add_weight(
        name="embeddings", shape=(self.max_length, hidden),
        initializer=keras.initializers.TruncatedNormal(stddev=self.initializer_range))

  def call(self, inputs):
    # inputs: (batch, seq, hidden) -> (1, seq, hidden), broadcast over the batch.
    seq_length = ops.shape(inputs)[1]
    return ops.expand_dims(ops.cast(self.embeddings[:seq_length], inputs.dtype), 0)
