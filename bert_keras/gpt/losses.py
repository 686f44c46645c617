"""GPT-1's objectives: the LM loss L1, the task loss L2 and L3 = L2 + lambda * L1 (sections 3.1-3.2).

The paper writes them as log-likelihoods to maximise; these are the negatives, averaged (per
predicted token for L1, per example for L2), to minimise.
"""

from __future__ import annotations

import tensorflow as tf


def lm_loss_sums(input_word_ids, input_mask, lm_logits):
  """Sum of -log P(u_i | u_<i) over real next tokens, and their count.

  input_word_ids / input_mask: int (..., seq); lm_logits: (..., seq, vocab), position i scoring
  token i+1. Leading dims (batch, or batch x choices) are flattened. Returns (loss_sum, count).
  """
  seq = tf.shape(input_word_ids)[-1]
  ids = tf.reshape(tf.cast(input_word_ids, tf.int32), [-1, seq])
  mask = tf.reshape(tf.cast(input_mask, tf.float32), [-1, seq])
  logits = tf.cast(lm_logits, tf.float32)
  logits = tf.reshape(logits, [-1, seq, tf.shape(logits)[-1]])
  xent = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=ids[:, 1:], logits=logits[:, :-1])
  weights = mask[:, 1:]
  return tf.reduce_sum(xent * weights), tf.reduce_sum(weights)


def lm_loss(input_word_ids, input_mask, lm_logits):
  """Mean next-token cross-entropy (nats per token): -L1 / number of predicted tokens."""
  total, count = lm_loss_sums(input_word_ids, input_mask, lm_logits)
  return total / tf.maximum(count, 1.0)


def task_loss(labels, logits, task_type: str):
  """-L2 per example. classification / multiple_choice: softmax cross-entropy over classes or over
  answers (logits (batch, C), int labels); similarity with one output: squared error (STS-B-like
  regression, float labels); similarity with more outputs: softmax cross-entropy (MRPC/QQP-like)."""
  logits = tf.cast(logits, tf.float32)
  if task_type == "similarity" and logits.shape[-1] == 1:
    return tf.reduce_mean(tf.square(logits[:, 0] - tf.cast(tf.reshape(labels, [-1]), tf.float32)))
  labels = tf.cast(tf.reshape(labels, [-1]), tf.int32)
  return tf.reduce_mean(
      tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))


def finetuning_loss(features, labels, outputs, task_type: str, lm_coef: float = 0.5):
  """L3 = L2 + lambda * L1 over the fine-tuning sequences; lambda = 0 drops the auxiliary LM
  (and needs no `lm_logits`). Returns (total, task, lm) scalars."""
  supervised = task_loss(labels, outputs["logits"], task_type)
  if not lm_coef:
    return supervised, supervised, tf.constant(0.0)
  auxiliary = lm_loss(features["input_word_ids"], features["input_mask"], outputs["lm_logits"])
  return supervised + lm_coef * auxiliary, supervised, auxiliary
