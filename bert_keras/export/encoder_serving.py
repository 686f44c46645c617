"""Serving for the encoder alone: feature extraction (Devlin et al., 2018, section 5.3)."""

from __future__ import annotations

import tensorflow as tf

from bert_keras.export import text_ops
from bert_keras.export.serving_module import (ServingModule, batched_function, maybe_single,
                                              strings, tokenized_specs)


class EncoderServing(ServingModule):
  """text_a, optional text_b -> the encoder's activations, for the feature-based approach.

  Outputs: `pooled_output` float32 (batch, H), `sequence_output` (batch, seq, H),
  `encoder_outputs` (batch, L, seq, H) (every layer, so a user can concatenate the last four as
  in section 5.3) and `input_mask` int32 (batch, seq), which says which positions are real tokens.
  seq is the exported max_seq_length.
  """

  def __init__(self, encoder, tokenizer, max_seq_length: int, **kwargs):
    super().__init__("encoder", encoder, tokenizer, max_seq_length, **kwargs)

    def text(text_a):
      return self._serve_batch(text_a, None)

    def text_pair(text_a, text_b):
      return self._serve_batch(text_a, text_b)

    self._serve_text = batched_function(text, strings(None))
    self._serve_text_pair = batched_function(text_pair, strings(None), strings(None))

  def _features(self, inputs):
    outputs = self._run_model(inputs)
    cast = lambda x: tf.cast(x, tf.float32)
    return {"pooled_output": cast(outputs["pooled_output"]),
            "sequence_output": cast(outputs["sequence_output"]),
            "encoder_outputs": cast(tf.stack(outputs["encoder_outputs"], axis=1)),
            "input_mask": inputs["input_mask"]}

  def _serve_batch(self, text_a, text_b):
    segment_b = None if text_b is None else self.tokenize(text_b)
    return self._features(
        text_ops.pack_optional_pair(self.packer, self.tokenize(text_a), segment_b))

  @tf.function(autograph=False)
  def serve(self, text_a, text_b=None):
    """string (batch,) or scalar; text_b "" (or absent) packs text_a alone."""
    if text_b is None:
      return maybe_single(self._serve_text, text_a)
    return maybe_single(self._serve_text_pair, text_a, text_b)

  @tf.function(autograph=False)
  def serve_tokenized(self, input_word_ids, input_mask, input_type_ids):
    return self._features({"input_word_ids": input_word_ids, "input_mask": input_mask,
                           "input_type_ids": input_type_ids})

  def signatures(self) -> dict:
    for shape in ([None], []):
      self.serve.get_concrete_function(strings(*shape))
      self.serve.get_concrete_function(strings(*shape), strings(*shape))
    single = self._serve_text.get_concrete_function()
    return {"serving_default": single, "serving_text": single,
            "serving_text_pair": self._serve_text_pair.get_concrete_function(),
            "serving_tokenized": self.serve_tokenized.get_concrete_function(**tokenized_specs())}
