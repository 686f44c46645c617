"""Multiple choice for SWAG (Devlin et al., 2018, section 4.4)."""

from __future__ import annotations

import keras
from keras import ops


class _FoldChoices(keras.layers.Layer):
  """(batch, choices, seq) -> (batch * choices, seq)."""

  def call(self, x):
    return ops.reshape(x, (-1, ops.shape(x)[-1]))


class _UnfoldChoices(keras.layers.Layer):
  """(batch * choices, 1) scores -> (batch, choices), the choice count read from `like`."""

  def call(self, scores, like):
    return ops.reshape(scores, (-1, ops.shape(like)[1]))


@keras.saving.register_keras_serializable(package="bert_keras")
class BertMultipleChoice(keras.Model):
  """Each (context, ending_k) pair is one sequence; a learned vector V scores each C_k, softmax over k.

  Inputs: the encoder's dict with int32 (batch, num_choices, seq) tensors. Output `logits` float32
  (batch, num_choices). The choices are folded into the batch for the encoder.
  """

  def __init__(self, encoder: keras.Model, dropout_rate: float = 0.1,
               initializer_range: float = 0.02, **kwargs):
    # === Layers ===
    dropout = keras.layers.Dropout(dropout_rate, name="choice_dropout")
    dense = keras.layers.Dense(
        1, name="choice_score", dtype="float32",
        kernel_initializer=keras.initializers.TruncatedNormal(stddev=initializer_range))
    # === Functional model ===
    names = ("input_word_ids", "input_mask", "input_type_ids")
    inputs = {name: keras.Input(shape=(None, None), dtype="int32", name=name) for name in names}
    fold = _FoldChoices(name="fold_choices")
    flat = {name: fold(x) for name, x in inputs.items()}
    pooled = encoder(flat)["pooled_output"]  # (batch * choices, H)
    scores = dense(dropout(pooled))  # (batch * choices, 1)
    logits = _UnfoldChoices(name="logits", dtype="float32")(
        scores, inputs["input_word_ids"])  # (batch, choices)
    super().__init__(inputs=inputs, outputs={"logits": logits}, **kwargs)
    # === Config ===
    self.encoder = encoder
    self.dropout_rate = dropout_rate
    self.initializer_range = initializer_range

  def get_config(self):
    return {"name": self.name, "trainable": self.trainable,
            "encoder": keras.saving.serialize_keras_object(self.encoder),
            "dropout_rate": self.dropout_rate, "initializer_range": self.initializer_range}

  @classmethod
  def from_config(cls, config):
    config = dict(config)
    config["encoder"] = keras.saving.deserialize_keras_object(config["encoder"])
    return cls(**config)
