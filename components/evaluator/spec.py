"""Evaluator spec: a fine-tuned Model in, its ModelEvaluation and a ModelBlessing out."""

from __future__ import annotations

from components.base.component_spec import ComponentSpec, InputSpec, Parameter
from components.base.standard_artifacts import Model, ModelBlessing, ModelEvaluation


class EvaluatorSpec(ComponentSpec):
  """Scores the model on a split of its task; blesses it when the metrics meet `thresholds`.

  thresholds: {"accuracy": {"lower_bound": 0.6}} (see components/evaluator/blessing.py).
  """

  INPUTS = {"model": InputSpec(Model)}
  OUTPUTS = {"evaluation": ModelEvaluation, "blessing": ModelBlessing}
  PARAMETERS = {
      "thresholds": Parameter(dict, {}, doc="Metric bounds for the blessing; {} blesses."),
      "data_dir": Parameter(str, "", is_path=True, doc="Empty: the task's embedded data."),
      "split": Parameter(str, "dev", doc="The task's split to score."),
  }
  EXECUTOR = "components.evaluator.executor:EvaluatorExecutor"
