"""Sentence (pair) classification and regression on [CLS] (Devlin et al., 2018, section 4.1)."""

from __future__ import annotations

import keras


def _encoder_inputs():
  return {name: keras.Input(shape=(None,), dtype="int32", name=name)
          for name in ("input_word_ids", "input_mask", "input_type_ids")}


@keras.saving.register_keras_serializable(package="bert_keras")
class BertClassifier(keras.Model):
  """logits = dropout(C) W^T with W (K x H); softmax over K labels, or K=1 for regression (MSE).

  Inputs: the encoder's dict (int32 (batch, seq)). Output: `logits` float32 (batch, K).
  """

  def __init__(self, encoder: keras.Model, num_classes: int, dropout_rate: float = 0.1,
               initializer_range: float = 0.02, **kwargs):
    if num_classes < 1:
      raise ValueError(f"num_classes={num_classes} must be >= 1")
    # === Layers ===
    dropout = keras.layers.Dropout(dropout_rate, name="classifier_dropout")
    dense = keras.layers.Dense(
        num_classes, name="classifier", dtype="float32",  # float32 logits under mixed precision
        kernel_initializer=keras.initializers.TruncatedNormal(stddev=initializer_range))
    # === Functional model ===
    inputs = _encoder_inputs()
    pooled = encoder(inputs)["pooled_output"]  # C: (batch, H)
    logits = dense(dropout(pooled))  # (batch, K)
    super().__init__(inputs=inputs, outputs={"logits": logits}, **kwargs)
    # === Config ===
    self.encoder = encoder
    self.num_classes = num_classes
    self.dropout_rate = dropout_rate
    self.initializer_range = initializer_range

  def get_config(self):
    return {"name": self.name, "trainable": self.trainable,
            "encoder": keras.saving.serialize_keras_object(self.encoder),
            "num_classes": self.num_classes, "dropout_rate": self.dropout_rate,
            "initializer_range": self.initializer_range}

  @classmethod
  def from_config(cls, config):
    config = dict(config)
    config["encoder"] = keras.saving.deserialize_keras_object(config["encoder"])
    return cls(**config)
