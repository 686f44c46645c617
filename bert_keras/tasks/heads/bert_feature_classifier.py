"""The feature-based approach (Devlin et al., 2018, section 5.3) for sentence-level tasks.

Section 5.3 applies it to NER (BertFeatureTagger); the same recipe classifies a sentence (pair):
frozen encoder features of chosen layers (default the last four, concatenated) feed a two-layer
BiLSTM whose final forward and backward states go to the output layer. This lets the embedded
real polarity / similarity sets compare feature-based and fine-tuned BERT on the same data.
"""

from __future__ import annotations

import keras
from keras import ops


@keras.saving.register_keras_serializable(package="bert_keras")
class BertFeatureClassifier(keras.Model):
  """Frozen encoder -> concat(encoder_outputs[feature_layers]) -> BiLSTM -> BiLSTM (last states)
  -> dense. Output `logits` float32 (batch, K); K=1 for regression."""

  def __init__(self, encoder: keras.Model, num_classes: int, feature_layers=(-4, -3, -2, -1),
               lstm_units: int = 768, dropout_rate: float = 0.1, **kwargs):
    feature_layers = [int(i) for i in feature_layers]
    num_layers = len(encoder.output["encoder_outputs"])
    for i in feature_layers:
      if not -num_layers <= i < num_layers:
        raise ValueError(f"feature_layers has {i}; the encoder has {num_layers} layers")
    encoder.trainable = False
    # === Layers ===
    first = keras.layers.Bidirectional(
        keras.layers.LSTM(lstm_units, return_sequences=True, dtype="float32"), name="bilstm_0")
    second = keras.layers.Bidirectional(
        keras.layers.LSTM(lstm_units, dtype="float32"), name="bilstm_1")
    dropout = keras.layers.Dropout(dropout_rate, name="classifier_dropout")
    dense = keras.layers.Dense(num_classes, name="classifier", dtype="float32")
    # === Functional model ===
    inputs = {name: keras.Input(shape=(None,), dtype="int32", name=name)
              for name in ("input_word_ids", "input_mask", "input_type_ids")}
    layers = encoder(inputs, training=False)["encoder_outputs"]  # L x (batch, seq, H)
    chosen = [layers[i] for i in feature_layers]
    x = chosen[0] if len(chosen) == 1 else keras.layers.Concatenate(name="features")(chosen)
    x = ops.cast(x, "float32")  # (batch, seq, H * len(feature_layers))
    mask = ops.cast(inputs["input_mask"], "bool")
    x = first(x, mask=mask)  # (batch, seq, 2 * lstm_units)
    x = second(x, mask=mask)  # (batch, 2 * lstm_units): last forward and backward states
    logits = dense(dropout(x))  # (batch, K)
    super().__init__(inputs=inputs, outputs={"logits": logits}, **kwargs)
    # === Config ===
    self.encoder = encoder
    self.num_classes = num_classes
    self.feature_layers = feature_layers
    self.lstm_units = lstm_units
    self.dropout_rate = dropout_rate

  def get_config(self):
    return {"name": self.name, "trainable": self.trainable,
            "encoder": keras.saving.serialize_keras_object(self.encoder),
            "num_classes": self.num_classes, "feature_layers": list(self.feature_layers),
            "lstm_units": self.lstm_units, "dropout_rate": self.dropout_rate}

  @classmethod
  def from_config(cls, config):
    config = dict(config)
    config["encoder"] = keras.saving.deserialize_keras_object(config["encoder"])
    return cls(**config)
