"""What the generic `Trainer` needs for GPT-1's LM objective L1 (section 3.1)."""

from __future__ import annotations

import tensorflow as tf

from bert_keras.gpt import losses


class GPTPretrainingTask:
  """Features {input_ids, input_mask} (batch, seq) -> loss = mean -log P(u_i | u_<i) by sums.

  Fills the Trainer contract (see bert_keras.training.pretraining_task): model_inputs, loss_sums,
  counts (label-only denominators, all-reduced before the backward pass), loss and metrics.
  """

  def model_inputs(self, features):
    return {"input_word_ids": features["input_ids"], "input_mask": features["input_mask"]}

  def loss_sums(self, features, outputs):
    total, count = losses.lm_loss_sums(features["input_ids"], features["input_mask"],
                                       outputs["lm_logits"])
    ids = tf.cast(features["input_ids"], tf.int32)[:, 1:]
    weights = tf.cast(features["input_mask"], tf.float32)[:, 1:]
    predicted = tf.argmax(outputs["lm_logits"][:, :-1], axis=-1, output_type=tf.int32)
    correct = tf.reduce_sum(tf.cast(tf.equal(predicted, ids), tf.float32) * weights)
    return {"lm_loss_sum": total, "lm_weight": count, "lm_correct": correct}

  def counts(self, features):
    return {"lm_weight": tf.reduce_sum(tf.cast(features["input_mask"], tf.float32)[:, 1:])}

  def loss(self, sums):
    return sums["lm_loss_sum"] / tf.maximum(sums["lm_weight"], 1.0)

  def metrics(self, sums):
    loss = self.loss(sums)
    return {"lm_loss": loss, "lm_perplexity": tf.exp(loss),
            "lm_accuracy": sums["lm_correct"] / tf.maximum(sums["lm_weight"], 1.0)}
