"""The interface every fine-tuning task implements (reader, features, head, loss, metrics, output):
section 4, "we simply plug in the task-specific inputs and outputs into BERT"."""

from __future__ import annotations

import abc
import dataclasses
import json
from typing import Any, Mapping, Sequence

import keras
import numpy as np

from bert_keras.atomic_io import write_text
from bert_keras.errors import UserError
from bert_keras.configs.tasks import TaskConfig


@dataclasses.dataclass
class Features:
  """Packed model inputs (name -> int32 (num_features, ...)), labels keyed like the model outputs
  (None without labels) and per-feature bookkeeping for post-processing (SQuAD token maps)."""

  inputs: dict[str, np.ndarray]
  labels: Any = None
  meta: list = dataclasses.field(default_factory=list)

  def __len__(self) -> int:
    return len(next(iter(self.inputs.values())))


class Task(abc.ABC):
  """One supervised task. Subclasses set `name` (via register_task) and implement the hooks."""

  name: str = ""
  train_split: str = "train"
  eval_splits: tuple = ("dev",)
  # Splits a predict-only run reads by default: the unlabeled test files of the benchmark.
  predict_splits: tuple = ("test",)
  # GPT-1's: `export_run(finetuned_dir, output_dir, extra_files)` and a tasks.finetuning.ModelFamily
  # (checkpoints, tokenizer, serving model); None: BERT's.
  export_run = None
  model_family = None
  loss_parts: dict = {}  # of a summed loss: {its Keras fit log key: its train/<name> curve}

  def __init__(self, config: TaskConfig):
    self.config = config
    # Output classes, in head order; None for regression and span tasks.
    self.label_names: list[str] | None = None
    # What the readers found and did (tagging scheme, answers skipped): metrics.json's "data".
    self.data_notes: dict[str, Any] = {}

  def embedded_data_dir(self) -> str | None:
    """The folder of the data shipped with the installed packages, None when the task has none."""
    return None

  def resolve_data_dir(self, data_dir: str) -> str:
    """--data_dir as given; '' is the task's embedded data (an error without any)."""
    if data_dir:
      return data_dir
    embedded = self.embedded_data_dir()
    if embedded is None:
      raise UserError(f"--data_dir is required for {self.name}: it has no embedded data; expected "
                      f"the folder with its {self.train_split} and {self.eval_splits[0]} files")
    return embedded

  def default_predict_splits(self, data_dir: str) -> tuple:
    """The splits a predict-only run without --splits reads from `data_dir` (resolved)."""
    return self.predict_splits

  @abc.abstractmethod
  def read_examples(self, data_dir: str, split: str) -> list:
    """Reads one split in the task's official file layout; UserError names file:line on bad rows."""

  def prepare_labels(self, train_examples: Sequence, eval_examples: Mapping[str, Sequence]) -> None:
    """Fixes `label_names` from the data when the task does not define them up front."""

  @abc.abstractmethod
  def make_features(self, examples: Sequence, tokenizer, training: bool) -> Features:
    """Tokenizes and packs examples into fixed-length model inputs."""

  @abc.abstractmethod
  def build_model(self, encoder: keras.Model) -> keras.Model:
    """The serving-ready task model: encoder inputs in, task logits out."""

  @abc.abstractmethod
  def compile_kwargs(self) -> dict:
    """`loss` (and optionally `loss_weights`) for `model.compile`."""

  @abc.abstractmethod
  def postprocess(self, examples: Sequence, features: Features, outputs: Any) -> Any:
    """Turns raw model outputs over `features` into per-example predictions (JSON-able)."""

  @abc.abstractmethod
  def evaluate(self, examples: Sequence, predictions: Any) -> dict:
    """The task's official dev metrics."""

  def has_labels(self, examples: Sequence) -> bool:
    """Whether `examples` carry gold labels (an unlabeled test split cannot be evaluated)."""
    return True

  def write_predictions(self, predictions: Any, path_stem: str) -> str:
    """Writes `<path_stem>.json` atomically (other formats beside it); returns its path."""
    path = path_stem + ".json"
    write_text(path, json.dumps(predictions, ensure_ascii=False, indent=1))
    return path

  def write_submission(self, examples: Sequence, predictions: Any, split: str,
                       directory: str) -> list[str]:
    """Writes the benchmark's official submission files into `directory`; returns their paths."""
    return []

  def run_name(self) -> str:
    """The run's name in metrics.json: the task, plus a non-fine-tuning approach."""
    approach = getattr(self.config, "approach", "fine_tuning")
    return self.name if approach == "fine_tuning" else f"{self.name}_{approach}"

  def task_info(self, metrics: Mapping[str, Any] | None = None) -> dict:
    """What an exporter needs to serve the model: labels, sequence length, thresholds."""
    return {
        "task": self.name,
        "label_names": self.label_names,
        "max_seq_length": self.config.max_seq_length,
        "num_segments": 1,
    }
