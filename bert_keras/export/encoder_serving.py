"""Serving for the encoder alone: feature extraction (Devlin et al., 2018, section 5.3)."""

from __future__ import annotations

import tensorflow as tf

from bert_keras.export.text_pair_serving import TextPairServing


class EncoderServing(TextPairServing):
  """text_a, optional text_b -> `pooled_output` (batch, H), `sequence_output` (batch, seq, H),
  `encoder_outputs` (batch, L, seq, H) (every layer: section 5.3 concatenates the last four) and
  `input_mask` (batch, seq); seq is the call's bucket, padding past a row's input_mask."""

  def __init__(self, encoder, tokenizer, max_seq_length: int, **kwargs):
    super().__init__("encoder", encoder, tokenizer, max_seq_length, **kwargs)

  def _outputs(self, inputs):
    outputs = self.run_model_per_row_bucket(inputs)
    cast = lambda x: tf.cast(x, tf.float32)
    return {"pooled_output": cast(outputs["pooled_output"]),
            "sequence_output": cast(outputs["sequence_output"]),
            "encoder_outputs": cast(tf.stack(outputs["encoder_outputs"], axis=1)),
            "input_mask": inputs["input_mask"]}
