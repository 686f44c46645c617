"""Typed pipeline configs: which corpora, model preset, tasks and budgets (recipes: configs/).

`pipeline.definitions.build_pipeline(config, root)` turns one of these into components. Every part
is a typed config checked when the pipeline config is built or loaded, each error naming its key's
path (`pretraining.training.learning_rte: unknown key ...`). Paths of the embedded real data are
resolved when a recipe is built (bert_keras.resources), never stored as one machine's layout in code.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping, Optional

from bert_keras.configs.base import Config, ConfigError
from bert_keras.configs.pretraining_data import PretrainingDataConfig
from bert_keras.configs.tasks import TaskConfig, get_task_config
from bert_keras.configs.training import TrainingOverrides

BASES = ("pretrained", "imported")
# TrainingConfig fields the pipeline sets itself: from the examples and vocabulary artifacts, the
# held-out split, the runner.
_PIPELINE_TRAINING = ("input_files", "eval_input_files", "max_seq_length", "max_predictions_per_seq",
                      "vocab_size", "mask_token_id", "special_token_ids", "vocab_file",
                      "output_dir", "distribution_strategy")


@dataclasses.dataclass(frozen=True)
class CorpusConfig(Config):
  """Pretraining text sources (paths or globs) and an optional document budget (0 = all)."""

  wikipedia_dumps: tuple = ()
  bert_text_corpora: tuple = ()
  line_corpora: tuple = ()
  max_documents: int = 0
  num_shards: int = 2  # text shards of the ingested corpus

  RANGES = dict(max_documents=">= 0", num_shards=">= 1")


@dataclasses.dataclass(frozen=True)
class PretrainingConfig(Config):
  """Vocabulary, example generation (`data`: create_pretraining_data's settings but those the
  artifacts give) and the pretrainer's TrainingConfig fields over the defaults (`training`)."""

  vocab_size: int = 8000
  lower_case: bool = True
  # The WordPiece learner's cost grows with the distinct words it sees; the rarest are left out.
  max_input_words: int = 5_000_000
  data: PretrainingDataConfig = PretrainingDataConfig()
  training: TrainingOverrides = dataclasses.field(default_factory=TrainingOverrides)

  def validate(self):
    if not isinstance(self.training, TrainingOverrides):
      try:
        object.__setattr__(self, "training", TrainingOverrides.from_dict(self.training))
      except ConfigError as e:
        raise e.under("training") from None
    for name in sorted(set(self.data.given()) & set(PretrainingDataConfig.LOCATION_FIELDS)):
      raise ConfigError(f"data.{name}: set by the pipeline (its corpus and vocabulary)",
                        key=f"data.{name}")
    for name in sorted(set(self.training) & set(_PIPELINE_TRAINING)):
      raise ConfigError(f"training.{name}: set by the pipeline (pretraining.data, the "
                        "vocabulary, the runner)", key=f"training.{name}")
    try:  # with the data's lengths, as the pretrainer will run it
      self.training.config(max_seq_length=self.data.max_seq_length,
                           max_predictions_per_seq=self.data.max_predictions_per_seq)
    except ConfigError as e:
      lengths = e.key in ("max_seq_length", "max_predictions_per_seq")
      raise e.under("data" if lengths else "training") from None


@dataclasses.dataclass(frozen=True)
class FineTuneConfig(Config):
  """One task: its typed config (the task preset's class, fields over the preset), per-base field
  overrides, a training budget and blessing thresholds."""

  task: str
  task_config: Optional[TaskConfig] = None  # a TaskConfig, or its fields over the task's preset
  max_train_examples: int = 0
  thresholds: Mapping[str, Any] = dataclasses.field(default_factory=dict)
  # Which encoders to fine-tune from: our own pretrained one and/or the imported checkpoint.
  bases: tuple = BASES
  # TaskConfig fields per base over task_config, e.g. {"imported": {"learning_rate": 1e-4}}.
  base_task_config: Mapping[str, Mapping[str, Any]] = dataclasses.field(default_factory=dict)

  RANGES = dict(max_train_examples=">= 0")

  def validate(self):
    try:
      preset = get_task_config(self.task)
    except ConfigError as e:
      raise e.under("task") from None
    if not isinstance(self.task_config, TaskConfig):
      try:
        object.__setattr__(self, "task_config",
                           get_task_config(self.task, **dict(self.task_config or {})))
      except ConfigError as e:
        raise e.under("task_config") from None
    elif self.task_config.task != preset.task:
      raise ConfigError(f"task_config: a config of task {self.task_config.task!r}; expected one "
                        f"of {preset.task!r}", key="task_config")
    if not self.bases or set(self.bases) - set(BASES):
      raise ConfigError(f"bases={self.bases!r}; expected a subset of {BASES}", key="bases")
    for base, overrides in self.base_task_config.items():
      if base not in self.bases:
        raise ConfigError(f"base_task_config.{base}: not one of bases={self.bases}",
                          key=f"base_task_config.{base}")
      try:
        self.task_config.replace(**overrides)
      except ConfigError as e:
        raise e.under(f"base_task_config.{base}") from None

  def config_for(self, base: str) -> TaskConfig:
    """The task config of the fine-tuning from `base`."""
    return self.task_config.replace(**self.base_task_config.get(base, {}))


@dataclasses.dataclass(frozen=True)
class PipelineConfig(Config):
  name: str = "bert_pipeline"
  corpus: CorpusConfig = CorpusConfig()
  pretraining: PretrainingConfig = PretrainingConfig()
  # A Hugging Face or Google checkpoint directory to import ("" = none).
  checkpoint_dir: str = ""
  checkpoint_vocab_file: str = ""
  tasks: tuple[FineTuneConfig, ...] = ()
  # Blessed models are pushed to <serving_dir>/<base>/<task>/<version>/ (relative: under the output dir).
  serving_dir: str = "serving"

  def validate(self) -> None:
    c = self.corpus
    if not (c.wikipedia_dumps or c.bert_text_corpora or c.line_corpora):
      raise ConfigError(f"pipeline {self.name!r}: the corpus config names no source")
    tasks = [t.task for t in self.tasks]
    if len(set(tasks)) != len(tasks):
      raise ConfigError(f"pipeline {self.name!r}: a task is listed twice in {tasks}")
    for i, t in enumerate(self.tasks):
      if "imported" in t.bases and not self.checkpoint_dir:
        raise ConfigError(f"tasks[{i}].bases: task {t.task!r} fine-tunes the imported checkpoint "
                          "but checkpoint_dir is empty")
