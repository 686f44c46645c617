"""Token tagging (NER) with the whole model fine-tuned (Devlin et al., 2018, section 5.3)."""

from __future__ import annotations

import keras


@keras.saving.register_keras_serializable(package="bert_keras")
class BertTokenClassifier(keras.Model):
  """logits_i = dropout(T_i) W^T per token; the loss and the prediction use the first sub-token of
  each word only (the caller marks the others with label -1).

  Output `logits` float32 (batch, seq, K).
  """

  def __init__(self, encoder: keras.Model, num_classes: int, dropout_rate: float = 0.1,
               initializer_range: float = 0.02, **kwargs):
    # === Layers ===
    dropout = keras.layers.Dropout(dropout_rate, name="tagger_dropout")
    dense = keras.layers.Dense(
        num_classes, name="tagger", dtype="float32",
        kernel_initializer=keras.initializers.TruncatedNormal(stddev=initializer_range))
    # === Functional model ===
    inputs = {name: keras.Input(shape=(None,), dtype="int32", name=name)
              for name in ("input_word_ids", "input_mask", "input_type_ids")}
    sequence = encoder(inputs)["sequence_output"]  # (batch, seq, H)
    logits = dense(dropout(sequence))  # (batch, seq, K)
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
