"""Multiple choice for SWAG (Devlin et al., 2018, section 4.4)."""

from __future__ import annotations

import keras
from keras import ops

from bert_keras.models.backbone import FlattenSequences
from bert_keras.models.heads.encoder_head import EncoderHead, dropout_dense, encoder_inputs


class _UnfoldChoices(keras.layers.Layer):
  """(batch * choices, 1) scores -> (batch, choices), the choice count read from `like`."""

  def call(self, scores, like):
    return ops.reshape(scores, (-1, ops.shape(like)[1]))


@keras.saving.register_keras_serializable(package="bert_keras")
class BertMultipleChoice(EncoderHead):
  """Each (context, ending_k) pair is one sequence; a learned vector V scores each C_k, softmax over k.

  Inputs: the encoder's dict with int32 (batch, num_choices, seq) tensors. Output `logits` float32
  (batch, num_choices). The choices are folded into the batch for the encoder.
  """

  def __init__(self, encoder: keras.Model, dropout_rate: float = 0.1,
               initializer_range: float = 0.02, **kwargs):
    inputs = encoder_inputs(rank=3)
    fold = FlattenSequences(name="fold_choices")
    flat = {name: fold(x) for name, x in inputs.items()}
    pooled = encoder(flat)["pooled_output"]  # (batch * choices, H)
    scores = dropout_dense(pooled, 1, "choice_score", "choice_dropout", dropout_rate,
                           initializer_range)  # (batch * choices, 1)
    logits = _UnfoldChoices(name="logits", dtype="float32")(
        scores, inputs["input_word_ids"])  # (batch, choices)
    super().__init__(encoder, inputs, {"logits": logits}, config=dict(
        dropout_rate=dropout_rate, initializer_range=initializer_range), **kwargs)
