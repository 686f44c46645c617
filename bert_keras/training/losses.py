"""The pretraining losses and metrics, shared by every trainer and objective.

Paper (section 3.1, appendix A.2): mean masked-LM cross-entropy over the real predictions plus the
next-sentence cross-entropy. Padding predictions (weight 0) count for nothing.
"""

from __future__ import annotations

import tensorflow as tf


def _argmax_equals(logits, labels):
  """1.0 where argmax(logits, -1) == labels (ties: the first index wins), as one compare-and-reduce
  pass: the arg-max was the costliest part of the jitted loss (BERT-mini 78 -> 64 CPU-ms)."""
  label_logit = tf.gather(logits, labels, axis=-1, batch_dims=labels.shape.rank)[..., None]
  index = tf.range(tf.shape(logits)[-1], dtype=tf.int32)
  ahead = (logits > label_logit) | ((logits == label_logit) & (index < labels[..., None]))
  return 1.0 - tf.cast(tf.reduce_any(ahead, axis=-1), tf.float32)


def pretraining_loss_sums(features, outputs, objective: str = "mlm_nsp",
                          unigram_id: int | None = None):
  """Per-batch SUMS (exact to aggregate over replicas and micro-batches): mlm_loss_sum, mlm_weight,
  mlm_correct[, nsp_loss_sum, nsp_count, nsp_correct]. With `unigram_id` also the baselines'
  mlm_unigram_correct and nsp_random_next (the count of NSP label 1)."""
  logits = tf.cast(outputs["mlm_logits"], tf.float32)
  if objective == "ltr":
    # Position i predicts token i+1 among real tokens.
    ids = tf.cast(features["input_ids"], tf.int32)
    mask = tf.cast(features["input_mask"], tf.float32)
    labels, weights, logits = ids[:, 1:], mask[:, 1:], logits[:, :-1]
  else:
    labels = tf.cast(features["masked_lm_ids"], tf.int32)
    weights = tf.cast(features["masked_lm_weights"], tf.float32)
  # labels / weights: (batch, P); logits: (batch, P, vocab), float32.
  xent = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
  sums = {"mlm_loss_sum": tf.reduce_sum(xent * weights), "mlm_weight": tf.reduce_sum(weights),
          "mlm_correct": tf.reduce_sum(_argmax_equals(logits, labels) * weights)}
  if unigram_id is not None:
    sums["mlm_unigram_correct"] = tf.reduce_sum(
        tf.cast(tf.equal(labels, unigram_id), tf.float32) * weights)
  if objective == "mlm_nsp":
    nsp_labels = tf.reshape(tf.cast(features["next_sentence_labels"], tf.int32), [-1])
    nsp_logits = tf.cast(outputs["nsp_logits"], tf.float32)
    nsp_xent = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=nsp_labels, logits=nsp_logits)
    sums["nsp_loss_sum"] = tf.reduce_sum(nsp_xent)
    sums["nsp_count"] = tf.cast(tf.size(nsp_labels), tf.float32)
    sums["nsp_correct"] = tf.reduce_sum(tf.cast(
        tf.equal(tf.argmax(nsp_logits, -1, output_type=tf.int32), nsp_labels), tf.float32))
    if unigram_id is not None:  # baselines requested: also the label balance (chance level)
      sums["nsp_random_next"] = tf.reduce_sum(tf.cast(nsp_labels, tf.float32))
  return sums


def loss_from_sums(sums, nsp_weight: float = 1.0):
  """The paper's loss from sums: mean MLM xent + nsp_weight (1.0 in the paper) * mean NSP xent."""
  loss = sums["mlm_loss_sum"] / tf.maximum(sums["mlm_weight"], 1.0)
  if "nsp_loss_sum" in sums:
    loss += nsp_weight * (sums["nsp_loss_sum"] / tf.maximum(sums["nsp_count"], 1.0))
  return loss
