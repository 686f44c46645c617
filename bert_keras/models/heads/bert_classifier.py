"""Sentence (pair) classification and regression on [CLS] (Devlin et al., 2018, section 4.1)."""

from __future__ import annotations

import keras

from bert_keras.models.heads.encoder_head import EncoderHead, dropout_dense, encoder_inputs


@keras.saving.register_keras_serializable(package="bert_keras")
class BertClassifier(EncoderHead):
  """logits = dropout(C) W^T with W (K x H); softmax over K labels, or K=1 for regression (MSE).

  Inputs: the encoder's dict (int32 (batch, seq)). Output: `logits` float32 (batch, K).
  """

  def __init__(self, encoder: keras.Model, num_classes: int, dropout_rate: float = 0.1,
               initializer_range: float = 0.02, **kwargs):
    if num_classes < 1:
      raise ValueError(f"num_classes={num_classes} must be >= 1")
    inputs = encoder_inputs()
    pooled = encoder(inputs)["pooled_output"]  # C: (batch, H)
    logits = dropout_dense(pooled, num_classes, "classifier", "classifier_dropout", dropout_rate,
                           initializer_range)  # (batch, K)
    super().__init__(encoder, inputs, {"logits": logits}, config=dict(
        num_classes=num_classes, dropout_rate=dropout_rate, initializer_range=initializer_range),
                     **kwargs)
