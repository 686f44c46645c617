"""Span prediction for SQuAD (Devlin et al., 2018, sections 4.2 and 4.3)."""

from __future__ import annotations

import keras
from keras import ops

from bert_keras.models.heads.encoder_head import EncoderHead, encoder_inputs, output_layer


@keras.saving.register_keras_serializable(package="bert_keras")
class BertSpanLabeler(EncoderHead):
  """A start vector S and an end vector E: start_logits_i = S.T_i, end_logits_j = E.T_j.

  The score of span (i, j) is S.T_i + E.T_j; for SQuAD v2.0 the no-answer score is the span at
  [CLS], s_null = S.C + E.C. Outputs float32 `start_logits`, `end_logits` (batch, seq); padding
  positions get -10000 so the softmax over positions ignores them.
  """

  def __init__(self, encoder: keras.Model, initializer_range: float = 0.02, **kwargs):
    inputs = encoder_inputs()
    sequence = encoder(inputs)["sequence_output"]  # (batch, seq, H)
    logits = output_layer(2, "span_logits", initializer_range)(sequence)  # (b, s, 2): S.T_i, E.T_i
    padding = (1.0 - ops.cast(inputs["input_mask"], "float32")) * -10000.0
    start = keras.layers.Identity(name="start_logits", dtype="float32")(logits[..., 0] + padding)
    end = keras.layers.Identity(name="end_logits", dtype="float32")(logits[..., 1] + padding)
    super().__init__(encoder, inputs, {"start_logits": start, "end_logits": end},
                     config=dict(initializer_range=initializer_range), **kwargs)
