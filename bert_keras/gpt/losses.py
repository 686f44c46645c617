"""GPT-1's LM objective L1 (section 3.1): the negative log-likelihood of each next token, summed and
counted (the Trainer's pretraining task averages it per token), and as a Keras loss for the
auxiliary term of fine-tuning's L3 = L2 + lambda * L1 (section 3.2)."""

from __future__ import annotations

import keras
import tensorflow as tf


def lm_loss_sums(input_word_ids, input_mask, lm_logits):
  """(sum of -log P(u_i | u_<i) over real next tokens, their count); ids / mask (..., seq),
  lm_logits (..., seq, vocab) with position i scoring token i+1; leading dims flattened."""
  seq = tf.shape(input_word_ids)[-1]
  ids = tf.reshape(tf.cast(input_word_ids, tf.int32), [-1, seq])
  mask = tf.reshape(tf.cast(input_mask, tf.float32), [-1, seq])
  logits = tf.cast(lm_logits, tf.float32)
  logits = tf.reshape(logits, [-1, seq, tf.shape(logits)[-1]])
  xent = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=ids[:, 1:], logits=logits[:, :-1])
  weights = mask[:, 1:]
  return tf.reduce_sum(xent * weights), tf.reduce_sum(weights)


class NextTokenLoss(keras.losses.Loss):
  """-L1 per predicted token of a batch. y_true: the input ids with -1 at padding ((batch[, k],
  seq): the labels `GPTTask.make_features` adds); y_pred: `lm_logits` ((batch[, k], seq, vocab))."""

  def call(self, y_true, y_pred):
    ids = tf.cast(y_true, tf.int32)
    total, count = lm_loss_sums(tf.maximum(ids, 0), tf.cast(ids >= 0, tf.int32), y_pred)
    return total / tf.maximum(count, 1.0)
