"""What every task head shares (section 4: "we simply plug in the task-specific inputs and outputs
into BERT"): the encoder's packed inputs, the output layer and the config."""

from __future__ import annotations

from typing import Mapping

import keras

from bert_keras.models.backbone import BackboneTaskModel

INPUT_NAMES = ("input_word_ids", "input_mask", "input_type_ids")


def encoder_inputs(rank: int = 2) -> dict:
  """keras.Input per packed encoder input: int32 (batch, seq), or (batch, choices, seq) at rank 3."""
  return {name: keras.Input(shape=(None,) * (rank - 1), dtype="int32", name=name)
          for name in INPUT_NAMES}


def output_layer(units: int, name: str, initializer_range: float | None = None):
  """The task's new layer, float32 under mixed precision; initializer_range None: Keras' default."""
  init = ("glorot_uniform" if initializer_range is None
          else keras.initializers.TruncatedNormal(stddev=initializer_range))
  return keras.layers.Dense(units, name=name, dtype="float32", kernel_initializer=init)


def dropout_dense(x, units: int, name: str, dropout_name: str, dropout_rate: float,
                  initializer_range: float | None = None):
  """dropout (layer `dropout_name`) then the output layer `name`: (..., H) -> float32 (..., units)."""
  dropout = keras.layers.Dropout(dropout_rate, name=dropout_name)
  return output_layer(units, name, initializer_range)(dropout(x))


class EncoderHead(BackboneTaskModel):
  """Base of the heads: `config`, the head's other constructor arguments, returned by get_config."""

  def __init__(self, encoder: keras.Model, inputs: Mapping, outputs: Mapping,
               config: Mapping | None = None, **kwargs):
    super().__init__(inputs=inputs, outputs=outputs, **kwargs)
    self.set_task_config(encoder, **(config or {}))
