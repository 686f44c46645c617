"""Serving for sentence (pair) classification and STS-B-like regression (section 4.1)."""

from __future__ import annotations

import tensorflow as tf

from bert_keras.export import text_ops
from bert_keras.export.serving_module import (ServingModule, batched_function, maybe_single,
                                              strings, tokenized_specs)


class ClassifierServing(ServingModule):
  """text_a, optional text_b -> probabilities, label ids and names; or a score for regression.

  The model maps the packed inputs to `logits` (batch, K) (K = 1 for regression). Outputs:
  classification: `probabilities` float32 (batch, K), `label_id` int32 (batch,), `label` string
  (batch,); regression: `score` float32 (batch,), the raw output as trained with MSE.
  `pair` marks a sentence-pair task: its `serving_default` then takes text_a and text_b, and
  text_b is always packed as segment B (as the task packed it for training, even when empty);
  for a single-sentence task a text_b with no pieces packs text_a alone.
  """

  def __init__(self, model, tokenizer, max_seq_length: int, labels=None, regression: bool = False,
               pair: bool = False, **kwargs):
    if not regression and not labels:
      raise ValueError("a classification export needs its label names (labels=[...])")
    super().__init__("regression" if regression else "classification", model, tokenizer,
                     max_seq_length, labels=None if regression else labels, **kwargs)
    self.regression = regression
    self.pair = bool(pair)
    self.is_pair = tf.Variable(self.pair, trainable=False, name="is_pair")

    def text(text_a):
      return self._serve_batch(text_a, None)

    def text_pair(text_a, text_b):
      return self._serve_batch(text_a, text_b)

    self._serve_text = batched_function(text, strings(None))
    self._serve_text_pair = batched_function(text_pair, strings(None), strings(None))

  def _answers(self, inputs):
    logits = tf.cast(self._run_model(inputs)["logits"], tf.float32)  # (batch, K)
    if self.regression:
      return {"score": logits[:, 0]}
    label_id = tf.argmax(logits, axis=-1, output_type=tf.int32)
    return {"probabilities": tf.nn.softmax(logits, axis=-1), "label_id": label_id,
            "label": tf.gather(self.labels, label_id)}

  def _serve_batch(self, text_a, text_b):
    segment_a = self.tokenize(text_a)
    if text_b is None:
      return self._answers(self.packer([segment_a]))
    if self.pair:
      return self._answers(self.packer([segment_a, self.tokenize(text_b)]))
    return self._answers(
        text_ops.pack_optional_pair(self.packer, segment_a, self.tokenize(text_b)))

  @tf.function(autograph=False)
  def serve(self, text_a, text_b=None):
    """text_a, text_b: string (batch,) or scalars; without text_b, text_a is packed alone."""
    if text_b is None:
      return maybe_single(self._serve_text, text_a)
    return maybe_single(self._serve_text_pair, text_a, text_b)

  @tf.function(autograph=False)
  def serve_tokenized(self, input_word_ids, input_mask, input_type_ids):
    return self._answers({"input_word_ids": input_word_ids, "input_mask": input_mask,
                          "input_type_ids": input_type_ids})

  def metadata(self) -> dict:
    return {**super().metadata(), "pair": self.pair}

  def signatures(self) -> dict:
    # Batched and scalar forms of `serve`, for Python callers: thin wrappers of the two graphs.
    for shape in ([None], []):
      self.serve.get_concrete_function(strings(*shape))
      self.serve.get_concrete_function(strings(*shape), strings(*shape))
    single = self._serve_text.get_concrete_function()
    pair = self._serve_text_pair.get_concrete_function()
    return {"serving_default": pair if self.pair else single,
            "serving_text": single, "serving_text_pair": pair,
            "serving_tokenized": self.serve_tokenized.get_concrete_function(**tokenized_specs())}
