"""Evaluator executor: the task's official metrics on a split, then the blessing decision."""

from __future__ import annotations

import json

from bert_keras.orchestration.base_executor import BaseExecutor
from components.evaluator.blessing import check_thresholds

BLESSED_FILE, NOT_BLESSED_FILE = "BLESSED", "NOT_BLESSED"


class EvaluatorExecutor(BaseExecutor):
  """`compute_metrics` evaluates the model; `run` records the metrics and writes the blessing."""

  def compute_metrics(self, model, parameters, evaluation_dir: str) -> dict:
    from components.evaluator.task_evaluation import evaluate_task_model  # TF only when needed
    return evaluate_task_model(model, parameters["split"], parameters["data_dir"], evaluation_dir,
                               log=self.log)

  def run(self, inputs, outputs, parameters):
    model, evaluation, blessing = inputs["model"], outputs["evaluation"], outputs["blessing"]
    metrics = self.compute_metrics(model, parameters, evaluation.uri)
    metrics = {k: float(v) for k, v in metrics.items()
               if isinstance(v, (int, float)) and not isinstance(v, bool)}
    with open(evaluation.path("metrics.json"), "w", encoding="utf-8") as f:
      json.dump(metrics, f, indent=2, sort_keys=True)
    evaluation.metrics.update(metrics)
    task = model.properties.get("task", "")
    evaluation.properties.update(task=task, split=parameters["split"])

    blessed, passed, failed = check_thresholds(metrics, parameters["thresholds"])
    with open(blessing.path(BLESSED_FILE if blessed else NOT_BLESSED_FILE), "w",
              encoding="utf-8") as f:
      f.write("\n".join(passed + failed) + "\n")
    blessing.properties.update(blessed=blessed, passed_checks=passed, failed_checks=failed,
                               task=task)
    blessing.metrics["blessed"] = int(blessed)
    self.log(f"{'BLESSED' if blessed else 'NOT blessed'}: "
             + "; ".join(passed + failed) if passed or failed else "no thresholds configured")
