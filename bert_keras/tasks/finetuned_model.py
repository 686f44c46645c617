"""A fine-tuned run's output directory, reloaded: evaluate-only and predict-only runs (the original
`do_eval` and `do_predict` without `do_train`), in length-bucketed batches as training's evaluation.
Outputs go to another directory, published whole (finetuning.write_staged).
"""

from __future__ import annotations

import functools
import os
from typing import Sequence

from bert_keras.atomic_io import write_json
from bert_keras.errors import UserError
from bert_keras.json_io import read_json_file

FILES = ("model.keras", "config.json", "task_info.json", "vocab.txt")


class FinetunedModel:
  """The task, tokenizer and task model of a run_finetuning output directory."""

  def __init__(self, directory: str, length_buckets: str | bool = "auto"):
    # pylint: disable=import-outside-toplevel
    from bert_keras.tasks.registry import get_task
    from bert_keras.configs.tasks import TaskConfig
    from bert_keras.tasks.length_batches import batch_lengths

    for name in FILES:
      if not os.path.isfile(os.path.join(directory, name)):
        raise UserError(f"{directory}: no {name}; expected a run_finetuning output directory "
                        f"({', '.join(FILES)})")
    self.directory = directory
    self.resolved = read_json_file(self.path("config.json"), "resolved config", expected=dict)
    self.info = read_json_file(self.path("task_info.json"), "task_info.json", expected=dict)
    if not isinstance(self.resolved.get("task"), dict):
      raise UserError(f"{self.path('config.json')}: no 'task' object; expected the config.json "
                      "run_finetuning writes")
    self.task_config = TaskConfig.from_dict(self.resolved["task"])
    self.task = get_task(self.task_config)
    self.task.label_names = self.info.get("label_names")
    self.batch_lengths = batch_lengths(self.task_config.max_seq_length, length_buckets)

  def path(self, name: str) -> str:
    return os.path.join(self.directory, name)

  @functools.cached_property
  def tokenizer(self):
    # pylint: disable-next=import-outside-toplevel
    from bert_keras.text.bert_tokenizer import BertTokenizer
    return BertTokenizer(vocab_path=self.path("vocab.txt"),
                         lower_case=bool(self.info.get("lower_case", True)))

  @functools.cached_property
  def model(self):
    from bert_keras import keras_classes  # pylint: disable=import-outside-toplevel
    return keras_classes.load_model(self.path("model.keras"))

  def read(self, data_dir: str, splits: Sequence[str], labelled: bool) -> dict:
    """split -> examples; with `labelled`, a split without gold labels is an error."""
    known = (self.task.train_split, *self.task.eval_splits, *self.task.predict_splits)
    examples = {}
    for split in splits:
      if split not in known:
        raise UserError(f"task {self.task.name!r} has no split {split!r}; expected one of "
                        f"{list(dict.fromkeys(known))}")
      examples[split] = self.task.read_examples(data_dir, split)
      if labelled and not self.task.has_labels(examples[split]):
        raise UserError(f"{self.task.name} {split}: the examples have no labels to evaluate "
                        "against; use --mode=predict for an unlabeled split")
    return examples

  def predict(self, examples: Sequence):
    """The task's post-processed predictions for `examples`, in their order."""
    # pylint: disable-next=import-outside-toplevel
    from bert_keras.tasks import length_batches
    features = self.task.make_features(examples, self.tokenizer, training=False)
    outputs = length_batches.predict(self.model, features.inputs,
                                     self.task_config.eval_batch_size, self.batch_lengths)
    return self.task.postprocess(examples, features, outputs)


def _open(finetuned_dir: str, output_dir: str, data_dir: str, splits: Sequence[str],
          length_buckets, labelled: bool):
  """(FinetunedModel, resolved data_dir, splits, split -> examples), read before anything is
  written; default splits: the dev splits (labelled) or the unlabeled test files."""
  if not output_dir:
    raise UserError("--output_dir is required")
  if os.path.realpath(output_dir) == os.path.realpath(finetuned_dir):
    raise UserError(f"--output_dir={output_dir} is the fine-tuned run's own directory: its "
                    "metrics.json and predictions would be replaced; give another directory")
  finetuned = FinetunedModel(finetuned_dir, length_buckets)
  task = finetuned.task
  data_dir = task.resolve_data_dir(data_dir)
  splits = tuple(splits) or (task.eval_splits if labelled else task.default_predict_splits(data_dir))
  return finetuned, data_dir, splits, finetuned.read(data_dir, splits, labelled=labelled)


def run_evaluation(finetuned_dir: str, output_dir: str, data_dir: str = "",
                   splits: Sequence[str] = (), length_buckets: str | bool = "auto") -> dict:
  """Evaluates the fine-tuned model on labelled `splits`; writes config.json, metrics.json and
  predictions_<split>.json into output_dir, as training does."""
  return _run("evaluate", finetuned_dir, output_dir, data_dir, splits, length_buckets)


def run_prediction(finetuned_dir: str, output_dir: str, data_dir: str = "",
                   splits: Sequence[str] = (), length_buckets: str | bool = "auto") -> list[str]:
  """Predicts unlabeled `splits` and writes predictions_<split>.json and the benchmark's
  submission files (GLUE `<TASK>.tsv`, SQuAD predictions.json / null_odds.json, SWAG
  submission.csv); returns the names of the files written."""
  return _run("predict", finetuned_dir, output_dir, data_dir, splits, length_buckets)


def _run(mode: str, finetuned_dir: str, output_dir: str, data_dir: str, splits: Sequence[str],
         length_buckets: str | bool):
  # pylint: disable-next=import-outside-toplevel
  from bert_keras.tasks.finetuning import write_staged
  finetuned, data_dir, splits, examples = _open(finetuned_dir, output_dir, data_dir, splits,
                                                length_buckets, labelled=mode == "evaluate")
  task, batch_lengths = finetuned.task, list(finetuned.batch_lengths)

  def write(stage: str):
    results = {"task": task.run_name(), "mode": mode, "batch_lengths": batch_lengths}
    for split, split_examples in examples.items():
      predictions = finetuned.predict(split_examples)
      if mode == "evaluate":
        results[split] = {**task.evaluate(split_examples, predictions),
                          "examples": len(split_examples)}
      task.write_predictions(predictions, os.path.join(stage, f"predictions_{split}"))
      if mode == "predict":
        task.write_submission(split_examples, predictions, split, stage)
    write_json(os.path.join(stage, "config.json"), {
        "mode": mode, "finetuned_dir": finetuned.directory, "data_dir": data_dir,
        "splits": list(splits), "batch_lengths": batch_lengths, "task": finetuned.task_config.to_dict()})
    if mode == "predict":
      return sorted(name for name in os.listdir(stage) if name != "owner.json")  # the stage's own
    if task.data_notes:
      results["data"] = task.data_notes
    write_json(os.path.join(stage, "metrics.json"), results)
    return results

  return write_staged(output_dir, write)
