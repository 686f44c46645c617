"""GPT-1's pretraining model: the decoder and its tied LM head (section 3.1)."""

from __future__ import annotations

import keras
from keras import ops

from bert_keras.models.backbone import BackboneTaskModel
from bert_keras.models.gpt_decoder import GPTDecoder


@keras.saving.register_keras_serializable(package="bert_keras")
class GPTLMHead(keras.layers.Layer):
  """P(u) = softmax(h_n W_e^T), as the released code's `matmul(h, we, transpose_b=True)`: no
  transform, LayerNorm or bias; the owning model rewires the embedding layer."""

  def __init__(self, token_embedding: keras.layers.Embedding, **kwargs):
    super().__init__(**kwargs)
    self.token_embedding = token_embedding

  def call(self, x):  # (..., hidden) -> logits (..., vocab)
    return ops.matmul(x, ops.transpose(ops.cast(self.token_embedding.embeddings, x.dtype)))


@keras.saving.register_keras_serializable(package="bert_keras")
class GPTLanguageModel(BackboneTaskModel):
  """decoder -> `lm_logits` (batch, seq, vocab), where position i scores token i+1.

  The loss L1 = sum_i log P(u_i | u_<i) lives in `bert_keras.gpt.losses.lm_loss_sums`, not the model.
  """

  BACKBONE = "decoder"

  def __init__(self, decoder: GPTDecoder, **kwargs):
    lm_head = GPTLMHead(decoder.token_embedding, name="lm_head", dtype=decoder.dtype_policy)

    inputs = dict(decoder.input)
    sequence = decoder(inputs)["sequence_output"]
    logits = keras.layers.Activation("linear", dtype="float32", name="lm_logits")(lm_head(sequence))
    super().__init__(inputs=inputs, outputs={"lm_logits": logits}, **kwargs)
    self.set_task_config(decoder)
    self.lm_head = lm_head
