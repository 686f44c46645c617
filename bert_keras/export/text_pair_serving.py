"""Serving for text_a and an optional text_b: sentence (pair) classification, STS-B-like regression
(section 4.1) and the encoder alone, feature extraction (Devlin et al., 2018, section 5.3)."""

from __future__ import annotations

import tensorflow as tf

from bert_keras.export.serving_module import (ServingModule, batched_function, same_rows,
                                              single_or_batch, strings, text_input,
                                              tokenized_specs)
from bert_keras.lazy_cond import lazy_cond

# `serve`'s text_b when the caller gives none. Its input_signature converts every argument to a
# string tensor (None is refused), so "none" is a value no caller passes as text: shape (1, 0).
NO_TEXT_B = ((),)


def _refused_alone(text_a, task: str):
  """text_a, behind an assertion that always fails: a pair task's model called without text_b."""
  check = tf.debugging.Assert(tf.constant(False), [tf.constant(
      f"this model was fine-tuned on sentence pairs (task {task!r}): pass text_b as well "
      "(serve(text_a=..., text_b=...) or the serving_text_pair signature)")])
  with tf.control_dependencies([check]):
    return tf.identity(text_a)


class TextPairServing(ServingModule):
  """text_a, optional text_b -> by kind:
    classification: `probabilities` (batch, K), `label_id`, `label`;
    regression: `score` (batch,), the raw output as trained with MSE;
    encoder: `pooled_output` (batch, H), `sequence_output` (batch, seq, H), `encoder_outputs`
      (batch, L, seq, H) (every layer: section 5.3 concatenates the last four) and `input_mask`
      (batch, seq); seq is the call's bucket, padding past a row's input_mask.

  Signatures: `serving_text`, `serving_text_pair`, `serving_tokenized` and `serving_default`.
  A `pair` task always packs text_b as segment B, as in training, and requires it (no
  `serving_text`; `serve(text_a)` fails): text_a alone is unlike anything it was trained on.
  Otherwise a text_b with no pieces packs text_a alone, as run_classifier.py (`if tokens_b:`).
  """

  def __init__(self, kind: str, model, tokenizer, max_seq_length: int, labels=None,
               pair: bool = False, **kwargs):
    if kind == "classification" and not labels:
      raise ValueError("a classification export needs its label names (labels=[...])")
    super().__init__(kind, model, tokenizer, max_seq_length,
                     labels=labels if kind == "classification" else None, **kwargs)
    self.pair = bool(pair)
    if kind != "encoder":
      self.is_pair = tf.Variable(self.pair, trainable=False, name="is_pair")

    def text(text_a):
      if self.pair:
        text_a = _refused_alone(text_a, task=self.task_name)
      return self._outputs(self._pack(text_a, None))

    def text_pair(text_a, text_b):
      return self._outputs(self._pack(*same_rows({"text_a": text_a, "text_b": text_b})))

    self._serve_text = batched_function(text, strings(None))
    self._serve_text_pair = batched_function(text_pair, strings(None), strings(None))

  def _pack(self, text_a, text_b):
    """Packed inputs, padded to the bucket of the batch's longest row (ServingModule)."""
    segment_a = self.tokenize(text_a)
    if text_b is None:
      return self.to_bucket(self.packer([segment_a]))
    if self.pair:
      return self.to_bucket(self.packer([segment_a, self.tokenize(text_b)]))
    segment_b = self.tokenize(text_b)  # a row whose text_b has no pieces packs text_a alone
    return self.to_bucket(self.packer.pack_pair(segment_a, segment_b,
                                                has_b=segment_b.row_lengths() > 0))

  @tf.function(input_signature=[text_input("text_a"), text_input("text_b")], autograph=False)
  def _serve(self, text_a, text_b=NO_TEXT_B):
    """text_a, text_b: string (batch,) or scalars; without text_b, text_a is packed alone."""
    no_text_b = tf.equal(tf.rank(text_b), 2) & tf.equal(tf.size(text_b), 0)
    return lazy_cond(
        no_text_b, lambda: single_or_batch(self._serve_text, {"text_a": text_a}),
        lambda: single_or_batch(self._serve_text_pair, {"text_a": text_a, "text_b": text_b}))

  def _outputs(self, inputs):
    outputs = self.run_model_per_row_bucket(inputs)
    if self.kind_name == "encoder":
      cast = lambda x: tf.cast(x, tf.float32)
      return {"pooled_output": cast(outputs["pooled_output"]),
              "sequence_output": cast(outputs["sequence_output"]),
              "encoder_outputs": cast(tf.stack(outputs["encoder_outputs"], axis=1)),
              "input_mask": inputs["input_mask"]}
    logits = tf.cast(outputs["logits"], tf.float32)  # (batch, K)
    if self.kind_name == "regression":
      return {"score": logits[:, 0]}
    label_id = tf.argmax(logits, axis=-1, output_type=tf.int32)
    return {"probabilities": tf.nn.softmax(logits, axis=-1), "label_id": label_id,
            "label": tf.gather(self.labels, label_id)}

  def metadata(self) -> dict:
    pair = {} if self.kind_name == "encoder" else {"pair": self.pair}
    return {**super().metadata(), **pair}

  def signatures(self) -> dict:
    pair = self._serve_text_pair.get_concrete_function()
    signatures = {"serving_default": pair, "serving_text_pair": pair,
                  "serving_tokenized": self.serve_tokenized.get_concrete_function(
                      **tokenized_specs())}
    if not self.pair:
      signatures["serving_default"] = signatures["serving_text"] = (
          self._serve_text.get_concrete_function())
    return signatures
