"""Span prediction for SQuAD (Devlin et al., 2018, sections 4.2 and 4.3)."""

from __future__ import annotations

import keras
from keras import ops


@keras.saving.register_keras_serializable(package="bert_keras")
class BertSpanLabeler(keras.Model):
  """A start vector S and an end vector E: start_logits_i = S.T_i, end_logits_j = E.T_j.

  The score of span (i, j) is S.T_i + E.T_j; for SQuAD v2.0 the no-answer score is the span at
  [CLS], s_null = S.C + E.C. Outputs float32 `start_logits`, `end_logits` (batch, seq); padding
  positions get -10000 so the softmax over positions ignores them.
  """

  def __init__(self, encoder: keras.Model, initializer_range: float = 0.02, **kwargs):
    # === Layers ===
    dense = keras.layers.Dense(
        2, name="span_logits", dtype="float32",
        kernel_initializer=keras.initializers.TruncatedNormal(stddev=initializer_range))
    # === Functional model ===
    inputs = {name: keras.Input(shape=(None,), dtype="int32", name=name)
              for name in ("input_word_ids", "input_mask", "input_type_ids")}
    sequence = encoder(inputs)["sequence_output"]  # (batch, seq, H)
    logits = dense(sequence)  # (batch, seq, 2): [S.T_i, E.T_i]
    padding = (1.0 - ops.cast(inputs["input_mask"], "float32")) * -10000.0
    start = keras.layers.Identity(name="start_logits", dtype="float32")(logits[..., 0] + padding)
    end = keras.layers.Identity(name="end_logits", dtype="float32")(logits[..., 1] + padding)
    super().__init__(inputs=inputs, outputs={"start_logits": start, "end_logits": end}, **kwargs)
    # === Config ===
    self.encoder = encoder
    self.initializer_range = initializer_range

  def get_config(self):
    return {"name": self.name, "trainable": self.trainable,
            "encoder": keras.saving.serialize_keras_object(self.encoder),
            "initializer_range": self.initializer_range}

  @classmethod
  def from_config(cls, config):
    config = dict(config)
    config["encoder"] = keras.saving.deserialize_keras_object(config["encoder"])
    return cls(**config)
