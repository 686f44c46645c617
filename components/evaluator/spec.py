"""Evaluator spec: a fine-tuned Model (or a run_finetuning output directory) in, its
ModelEvaluation and a ModelBlessing out."""

from __future__ import annotations

import os

from bert_keras.orchestration.artifact import Artifact
from bert_keras.orchestration.component_spec import ComponentSpec, InputSpec, Parameter
from bert_keras.orchestration.standard_artifacts import Model, ModelBlessing, ModelEvaluation


class FinetunedModel(Model):
  """The evaluator's input: a fine-tuner Model artifact, or the output directory of a
  `scripts/run_finetuning.py` run (no artifact.json), read as one."""

  @classmethod
  def load(cls, uri: str) -> Model:
    from bert_keras.tasks.finetuned_model import FILES  # pylint: disable=import-outside-toplevel
    if Artifact.exists(uri) or not os.path.isfile(os.path.join(uri, "task_info.json")):
      return super().load(uri)
    from bert_keras.json_io import read_json_file  # pylint: disable=import-outside-toplevel
    info = read_json_file(os.path.join(uri, "task_info.json"), "task_info.json", expected=dict)
    # Sizes and times of the files: a rerun into the directory changes the cache key.
    stamps = {name: [os.stat(os.path.join(uri, name)).st_size,
                     os.stat(os.path.join(uri, name)).st_mtime_ns]
              for name in FILES if os.path.isfile(os.path.join(uri, name))}
    return cls(uri, {"producer": "run_finetuning", "properties": {
        "task": info.get("task", ""), "kind": "task_model", "files": stamps}})


class EvaluatorSpec(ComponentSpec):
  """Scores the model on a split of its task; blesses it when the metrics meet `thresholds`.

  thresholds: {"accuracy": {"lower_bound": 60}}, on the 0-100 scale of every task metric (see
  components/evaluator/blessing.py).
  """

  INPUTS = {"model": InputSpec(FinetunedModel)}
  OUTPUTS = {"evaluation": ModelEvaluation, "blessing": ModelBlessing}
  PARAMETERS = {
      "thresholds": Parameter(dict, {}, doc="Metric bounds for the blessing; {} blesses."),
      "data_dir": Parameter(str, "", is_path=True, doc="Empty: the task's embedded data (an "
                            "error for a task without any)."),
      "split": Parameter(str, "dev", doc="The task's split to score."),
  }
  EXECUTOR = "components.evaluator.executor:EvaluatorExecutor"
