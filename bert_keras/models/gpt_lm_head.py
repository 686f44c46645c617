"""GPT-1's language-model head: the token embedding matrix, transposed (section 3.1)."""

import keras
from keras import ops


@keras.saving.register_keras_serializable(package="bert_keras")
class GPTLMHead(keras.layers.Layer):
  """P(u) = softmax(h_n W_e^T): logits are the final states projected on the tied embedding table.

  Unlike BERT's `MaskedLMHead` there is no transform, LayerNorm or output bias: the released GPT-1
  code computes `lm_logits = matmul(h, we, transpose_b=True)` and nothing else. This layer owns no
  weights; the embedding layer is passed in and the owning model wires it again in `from_config`.
  """

  def __init__(self, token_embedding: keras.layers.Embedding, **kwargs):
    super().__init__(**kwargs)
    self.token_embedding = token_embedding

  def call(self, x):
    # x: (..., hidden) -> logits (..., vocab)
    table = ops.cast(self.token_embedding.embeddings, x.dtype)  # (vocab, hidden)
    return ops.matmul(x, ops.transpose(table))
