"""Token tagging (NER) with the whole model fine-tuned (Devlin et al., 2018, section 5.3)."""

from __future__ import annotations

import keras

from bert_keras.models.heads.encoder_head import EncoderHead, dropout_dense, encoder_inputs


@keras.saving.register_keras_serializable(package="bert_keras")
class BertTokenClassifier(EncoderHead):
  """logits_i = dropout(T_i) W^T per token; the loss and the prediction use the first sub-token of
  each word only (the caller marks the others with label -1).

  Output `logits` float32 (batch, seq, K).
  """

  def __init__(self, encoder: keras.Model, num_classes: int, dropout_rate: float = 0.1,
               initializer_range: float = 0.02, **kwargs):
    inputs = encoder_inputs()
    sequence = encoder(inputs)["sequence_output"]  # (batch, seq, H)
    logits = dropout_dense(sequence, num_classes, "tagger", "tagger_dropout", dropout_rate,
                           initializer_range)  # (batch, seq, K)
    super().__init__(encoder, inputs, {"logits": logits}, config=dict(
        num_classes=num_classes, dropout_rate=dropout_rate, initializer_range=initializer_range),
                     **kwargs)
