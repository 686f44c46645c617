"""Learned absolute position embeddings (BERT section 3.2; GPT-1 section 4.1)."""

import keras
from keras import ops


@keras.saving.register_keras_serializable(package="bert_keras")
class PositionEmbedding(keras.layers.Layer):
  """Adds nothing: returns the (seq, hidden) slice of a learned (max_length, hidden) table."""

  def __init__(self, max_length: int, initializer_range: float = 0.02, **kwargs):
    super().__init__(**kwargs)
    self.max_length = max_length
    self.initializer_range = initializer_range

  def build(self, input_shape):
    hidden = input_shape[-1]
    self.embeddings = self.add_weight(
        name="embeddings", shape=(self.max_length, hidden),
        initializer=keras.initializers.TruncatedNormal(stddev=self.initializer_range))

  def call(self, inputs):
    # inputs: (batch, seq, hidden) -> (1, seq, hidden), broadcast over the batch.
    seq_length = ops.shape(inputs)[1]
    return ops.expand_dims(ops.cast(self.embeddings[:seq_length], inputs.dtype), 0)

  def get_config(self):
    config = super().get_config()
    config.update(max_length=self.max_length, initializer_range=self.initializer_range)
    return config
