"""Evaluates a fine-tuned task Model (run_finetuning's output layout) on one split of its task.

Independent of the fine-tuner's own dev numbers: the saved model.keras is reloaded, the split read
again, and the task's official metric code (`Task.evaluate`) applied to the predictions.
"""

from __future__ import annotations

import os
from typing import Callable


def evaluate_task_model(model, split: str, data_dir: str, output_dir: str,
                        log: Callable[[str], None] = print) -> dict:
  """model: a fine-tuner Model artifact or a run_finetuning output directory's. Writes
  predictions_<split>.json (and the task's other formats of them) into output_dir; returns the
  metrics."""
  # pylint: disable-next=import-outside-toplevel
  from bert_keras.tasks.finetuned_model import FinetunedModel

  finetuned = FinetunedModel(model.uri)
  task = finetuned.task
  examples = finetuned.read(task.resolve_data_dir(data_dir), [split], labelled=True)[split]
  log(f"evaluating {task.run_name()} on {len(examples)} {split} examples")
  predictions = finetuned.predict(examples)
  metrics = dict(task.evaluate(examples, predictions))
  metrics["examples"] = len(examples)
  task.write_predictions(predictions, os.path.join(output_dir, f"predictions_{split}"))
  return metrics
