"""GPT-1's language-model head: the token embedding matrix, transposed (section 3.1)."""

import keras
from keras import ops


@keras.saving.register_keras_serializable(package="bert_keras")
class GPTLMHead(keras.layers.Layer):
  """P(u) = softmax(h_n W_e^T), as the released code's `matmul(h, we, transpose_b=True)`: no
  transform, LayerNorm or bias; the owning model rewires the embedding layer."""

  def __init__(self, token_embedding: keras.layers.Embedding, **kwargs):
    super().__init__(**kwargs)
    self.token_embedding = token_embedding

  def call(self, x):
    # x: (..., hidden) -> logits (..., vocab)
    table = ops.cast(self.token_embedding.embeddings, x.dtype)  # (vocab, hidden)
    return ops.matmul(x, ops.transpose(table))
