"""What the generic `Trainer` needs for GPT-1 fine-tuning, L3 = L2 + lambda * L1 (section 3.2)."""

from __future__ import annotations

import tensorflow as tf

from bert_keras.gpt import losses


class GPTFinetuningTask:
  """Features {input_word_ids, input_mask} ((batch, [k,] seq)) and `labels` (batch[, 1]).

  Sums: the task loss over examples and the LM loss over the fine-tuning sequences' real next
  tokens; loss = task_sum / examples + lm_coef * lm_sum / tokens. lm_coef = 0 is "w/o aux LM".
  """

  def __init__(self, task_type: str, lm_coef: float = 0.5):
    self.task_type = task_type
    self.lm_coef = float(lm_coef)

  def model_inputs(self, features):
    return {"input_word_ids": features["input_word_ids"], "input_mask": features["input_mask"]}

  def loss_sums(self, features, outputs):
    count = tf.cast(tf.shape(features["input_word_ids"])[0], tf.float32)
    sums = {"task_loss_sum": losses.task_loss(features["labels"], outputs["logits"],
                                              self.task_type) * count,
            "examples": count}
    if self.lm_coef:
      lm_sum, lm_weight = losses.lm_loss_sums(features["input_word_ids"], features["input_mask"],
                                              outputs["lm_logits"])
      sums.update(lm_loss_sum=lm_sum, lm_weight=lm_weight)
    return sums

  def counts(self, features):
    counts = {"examples": tf.cast(tf.shape(features["input_word_ids"])[0], tf.float32)}
    if self.lm_coef:
      mask = tf.cast(features["input_mask"], tf.float32)
      counts["lm_weight"] = tf.reduce_sum(mask[..., 1:])
    return counts

  def loss(self, sums):
    loss = sums["task_loss_sum"] / tf.maximum(sums["examples"], 1.0)
    if self.lm_coef:
      loss += self.lm_coef * sums["lm_loss_sum"] / tf.maximum(sums["lm_weight"], 1.0)
    return loss

  def metrics(self, sums):
    out = {"task_loss": sums["task_loss_sum"] / tf.maximum(sums["examples"], 1.0)}
    if self.lm_coef:
      out["lm_loss"] = sums["lm_loss_sum"] / tf.maximum(sums["lm_weight"], 1.0)
    return out
