"""What the generic Trainer needs to know about BERT pretraining (MLM+NSP, MLM only, LTR)."""

from __future__ import annotations

import tensorflow as tf

from bert_keras.training import losses


class PretrainingTask:
  """The Trainer's task contract: `model_inputs`, `loss_sums` (per-batch SUMS), `counts` (their
  label-only denominators), `loss(sums)` (linear in the sums once counts are fixed), `metrics`.
  `unigram_id`: the training data's most frequent label; adds the baseline's accuracy."""

  def __init__(self, objective: str = "mlm_nsp", unigram_id: int | None = None,
               nsp_weight: float = 1.0):
    if objective not in ("mlm_nsp", "mlm", "ltr"):
      raise ValueError(f"objective={objective!r}; expected 'mlm_nsp', 'mlm' or 'ltr'")
    self.objective = objective
    self.unigram_id = unigram_id
    self.nsp_weight = nsp_weight  # TrainingConfig.nsp_loss_weight: weight of the NSP term

  def model_inputs(self, features):
    inputs = {"input_word_ids": features["input_ids"], "input_mask": features["input_mask"],
              "input_type_ids": features["segment_ids"]}
    if self.objective != "ltr":
      inputs["masked_lm_positions"] = features["masked_lm_positions"]
    return inputs

  def loss_sums(self, features, outputs):
    return losses.pretraining_loss_sums(features, outputs, self.objective, self.unigram_id)

  def counts(self, features):
    """The label-only denominators {mlm_weight[, nsp_count]}: known before the backward pass, so
    with their global values the loss is linear in each micro-batch's sums (exact accumulation)."""
    if self.objective == "ltr":
      weights = tf.cast(features["input_mask"], tf.float32)[:, 1:]
    else:
      weights = tf.cast(features["masked_lm_weights"], tf.float32)
    counts = {"mlm_weight": tf.reduce_sum(weights)}
    if self.objective == "mlm_nsp":
      counts["nsp_count"] = tf.cast(tf.size(features["next_sentence_labels"]), tf.float32)
    return counts

  def loss(self, sums):
    return losses.loss_from_sums(sums, self.nsp_weight)

  def metrics(self, sums):
    """The losses and accuracies (and baselines); "ltr" names them lm_* (it predicts the next
    token, not masked ones)."""
    out = {"mlm_loss": sums["mlm_loss_sum"] / tf.maximum(sums["mlm_weight"], 1.0),
           "mlm_accuracy": sums["mlm_correct"] / tf.maximum(sums["mlm_weight"], 1.0)}
    if "mlm_unigram_correct" in sums:
      out["mlm_unigram_accuracy"] = sums["mlm_unigram_correct"] / tf.maximum(sums["mlm_weight"], 1.0)
    if "nsp_loss_sum" in sums:
      out["nsp_loss"] = sums["nsp_loss_sum"] / tf.maximum(sums["nsp_count"], 1.0)
      out["nsp_accuracy"] = sums["nsp_correct"] / tf.maximum(sums["nsp_count"], 1.0)
    if "nsp_random_next" in sums:
      # Always answering the more frequent NSP label: the baseline NSP accuracy must clear.
      fraction = sums["nsp_random_next"] / tf.maximum(sums["nsp_count"], 1.0)
      out["nsp_majority_accuracy"] = tf.maximum(fraction, 1.0 - fraction)
    if self.objective == "ltr":
      out = {name.replace("mlm_", "lm_"): value for name, value in out.items()}
    return out
