"""What the generic Trainer needs to know about BERT pretraining (MLM+NSP, MLM only, LTR)."""

from __future__ import annotations

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
    return losses.pretraining_counts(features, self.objective)

  def loss(self, sums):
    return losses.loss_from_sums(sums, self.nsp_weight)

  def metrics(self, sums):
    return losses.metrics_from_sums(sums, self.objective)
