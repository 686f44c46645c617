"""Serving for sentence (pair) classification and STS-B-like regression (section 4.1)."""

from __future__ import annotations

import tensorflow as tf

from bert_keras.export.text_pair_serving import TextPairServing


class ClassifierServing(TextPairServing):
  """text_a, optional text_b -> `probabilities` (batch, K), `label_id`, `label`; regression:
  `score` (batch,), the raw output as trained with MSE."""

  def __init__(self, model, tokenizer, max_seq_length: int, labels=None, regression: bool = False,
               pair: bool = False, **kwargs):
    if not regression and not labels:
      raise ValueError("a classification export needs its label names (labels=[...])")
    super().__init__("regression" if regression else "classification", model, tokenizer,
                     max_seq_length, pair=pair, labels=None if regression else labels, **kwargs)
    self.regression = regression
    self.is_pair = tf.Variable(self.pair, trainable=False, name="is_pair")

  def _outputs(self, inputs):
    logits = tf.cast(self.run_model_per_row_bucket(inputs)["logits"], tf.float32)  # (batch, K)
    if self.regression:
      return {"score": logits[:, 0]}
    label_id = tf.argmax(logits, axis=-1, output_type=tf.int32)
    return {"probabilities": tf.nn.softmax(logits, axis=-1), "label_id": label_id,
            "label": tf.gather(self.labels, label_id)}

  def metadata(self) -> dict:
    return {**super().metadata(), "pair": self.pair}
