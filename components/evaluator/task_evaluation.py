"""Evaluates a fine-tuned task Model (run_finetuning's output layout) on one split of its task.

Independent of the fine-tuner's own dev numbers: the saved model.keras is reloaded, the split read
again, and the task's official metric code (`Task.evaluate`) applied to the predictions.
"""

from __future__ import annotations

import os
from typing import Callable

from bert_keras.json_io import read_json_file


def evaluate_task_model(model, split: str, data_dir: str, output_dir: str,
                        log: Callable[[str], None] = print) -> dict:
  """model: a fine-tuner Model artifact. Writes predictions_<split> into output_dir; returns metrics."""
  # pylint: disable=import-outside-toplevel
  from bert_keras import keras_classes
  from bert_keras.errors import UserError
  from bert_keras.tasks.registry import get_task
  from bert_keras.text.bert_tokenizer import BertTokenizer
  from configs.tasks import TaskConfig

  for name in ("model.keras", "config.json", "task_info.json", "vocab.txt"):
    if not os.path.exists(model.path(name)):
      raise UserError(f"{model.uri}: no {name}; is this a fine-tuned task model?")
  resolved = read_json_file(model.path("config.json"), "resolved config", expected=dict)
  info = read_json_file(model.path("task_info.json"), "task_info.json", expected=dict)
  task = get_task(TaskConfig.from_dict(resolved["task"]))
  if split not in (task.train_split, *task.eval_splits):
    raise UserError(f"task {task.name!r} has no split {split!r}; expected one of "
                    f"{[task.train_split, *task.eval_splits]}")
  task.label_names = info.get("label_names")
  tokenizer = BertTokenizer(vocab_path=model.path("vocab.txt"),
                            lower_case=bool(info.get("lower_case", True)))
  task_model = keras_classes.load_model(model.path("model.keras"))
  examples = task.read_examples(data_dir, split)
  features = task.make_features(examples, tokenizer, training=False)
  log(f"evaluating {task.name} on {len(examples)} {split} examples")
  outputs = task_model.predict(features.inputs, batch_size=task.config.eval_batch_size, verbose=0)
  predictions = task.postprocess(examples, features, outputs)
  metrics = dict(task.evaluate(examples, predictions))
  metrics["examples"] = len(examples)
  task.write_predictions(predictions, os.path.join(output_dir, f"predictions_{split}"))
  return metrics
