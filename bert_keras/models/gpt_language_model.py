"""GPT-1's pretraining model: the decoder and its tied LM head (section 3.1)."""

from __future__ import annotations

import keras

from bert_keras.models.backbone import BackboneTaskModel
from bert_keras.models.gpt_decoder import GPTDecoder
from bert_keras.models.gpt_lm_head import GPTLMHead


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
