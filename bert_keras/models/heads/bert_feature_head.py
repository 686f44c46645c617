"""The feature-based approach (Devlin et al., 2018, section 5.3): no fine-tuning of BERT.

Chosen encoder layers (default: the last four, concatenated, the paper's best at 96.1 dev F1 vs 96.4
fine-tuned) feed a randomly initialised two-layer BiLSTM (768 units in the paper), then the output layer.
"""

from __future__ import annotations

import keras
from keras import ops

from bert_keras.models.heads.encoder_head import EncoderHead, dropout_dense, encoder_inputs


class BertFeatureHead(EncoderHead):
  """Frozen encoder -> concat(encoder_outputs[feature_layers]) -> 2 x BiLSTM -> dropout -> dense.
  Subclasses set PER_TOKEN ((batch, seq, K) logits, else (batch, K) from the last states) and
  OUTPUT_NAME."""

  PER_TOKEN = True
  OUTPUT_NAME = "tagger"

  def __init__(self, encoder: keras.Model, num_classes: int, feature_layers=(-4, -3, -2, -1),
               lstm_units: int = 768, dropout_rate: float = 0.1, **kwargs):
    feature_layers = [int(i) for i in feature_layers]
    num_layers = len(encoder.output["encoder_outputs"])
    for i in feature_layers:
      if not -num_layers <= i < num_layers:
        raise ValueError(f"feature_layers has {i}; the encoder has {num_layers} layers")
    encoder.trainable = False
    inputs = encoder_inputs()
    layers = encoder(inputs, training=False)["encoder_outputs"]  # L x (batch, seq, H)
    chosen = [layers[i] for i in feature_layers]
    x = chosen[0] if len(chosen) == 1 else keras.layers.Concatenate(name="features")(chosen)
    x = ops.cast(x, "float32")  # (batch, seq, H * len(feature_layers))
    mask = ops.cast(inputs["input_mask"], "bool")
    for k in range(2):
      sequences = self.PER_TOKEN or k == 0
      lstm = keras.layers.LSTM(lstm_units, return_sequences=sequences, dtype="float32")
      x = keras.layers.Bidirectional(lstm, name=f"bilstm_{k}")(x, mask=mask)
    # x: (batch, seq, 2 * lstm_units), or (batch, 2 * lstm_units) for a sentence
    logits = dropout_dense(x, num_classes, self.OUTPUT_NAME, self.OUTPUT_NAME + "_dropout",
                           dropout_rate)  # (batch, seq, K) or (batch, K)
    super().__init__(encoder, inputs, {"logits": logits}, config=dict(
        num_classes=num_classes, feature_layers=feature_layers, lstm_units=lstm_units,
        dropout_rate=dropout_rate), **kwargs)
