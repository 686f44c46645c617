"""Evaluator spec: a fine-tuned Model in, its ModelEvaluation and a ModelBlessing out."""

from __future__ import annotations

from components.base.component_spec import ComponentSpec, InputSpec, Parameter
from components.base.standard_artifacts import Model, ModelBlessing, ModelEvaluation


class EvaluatorSpec(ComponentSpec):
  """thresholds: {"accuracy": {"lower_bound": 0.6}} (see components/evaluator/blessing.py)."""

  INPUTS = {"model": InputSpec(Model)}
  OUTPUTS = {"evaluation": ModelEvaluation, "blessing": ModelBlessing}
  PARAMETERS = {
      "thresholds": Parameter(dict, {}),
      "data_dir": Parameter(str, "", is_path=True, doc="Empty: the task's embedded data."),
      "split": Parameter(str, "dev"),
  }
  EXECUTOR = "components.evaluator.executor:EvaluatorExecutor"
