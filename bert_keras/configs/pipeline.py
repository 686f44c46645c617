"""Typed pipeline configs: which corpora, model preset, tasks and budgets (recipes: configs/).

`pipeline.definitions.build_pipeline(config, root)` turns one of these into components. Paths of
the embedded real data are resolved when a preset is built (bert_keras.resources), never stored as
one machine's layout in code.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping

from bert_keras.configs.base import Config, ConfigError

BASES = ("pretrained", "imported")


@dataclasses.dataclass(frozen=True)
class CorpusConfig(Config):
  """Pretraining text sources (paths or globs) and an optional document budget (0 = all)."""

  wikipedia_dumps: tuple = ()
  bert_text_corpora: tuple = ()
  line_corpora: tuple = ()
  max_documents: int = 0
  num_shards: int = 2


@dataclasses.dataclass(frozen=True)
class PretrainingConfig(Config):
  """Vocabulary, example generation (create_pretraining_data) and pretrainer budgets."""

  vocab_size: int = 8000
  lower_case: bool = True
  # The WordPiece learner's cost grows with the distinct words it sees; the rarest are left out.
  vocab_max_input_words: int = 5_000_000
  max_seq_length: int = 128
  max_predictions_per_seq: int = 20
  masked_lm_prob: float = 0.15
  short_seq_prob: float = 0.1
  dupe_factor: int = 2
  seed: int = 12345
  # TrainingConfig fields by their flag names (bert_keras/configs/training.py) for the pretrainer.
  training: Mapping[str, Any] = dataclasses.field(default_factory=dict)

  RENAMED_KEYS = {"random_seed": "seed"}  # one name per idea: the training configs' name


@dataclasses.dataclass(frozen=True)
class FineTuneConfig(Config):
  """One task: TaskConfig overrides (bert_keras/configs/tasks.py), a training budget and blessing thresholds."""

  task: str
  task_config: Mapping[str, Any] = dataclasses.field(default_factory=dict)
  max_train_examples: int = 0
  thresholds: Mapping[str, Any] = dataclasses.field(default_factory=dict)
  # Which encoders to fine-tune from: our own pretrained one and/or the imported checkpoint.
  bases: tuple = BASES
  # Overrides per base, e.g. {"imported": {"max_seq_length": 128}}.
  base_task_config: Mapping[str, Mapping[str, Any]] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass(frozen=True)
class PipelineConfig(Config):
  name: str = "bert_pipeline"
  corpus: CorpusConfig = CorpusConfig()
  pretraining: PretrainingConfig = PretrainingConfig()
  # A Hugging Face or Google checkpoint directory to import ("" = none).
  checkpoint_dir: str = ""
  checkpoint_vocab_path: str = ""
  tasks: tuple[FineTuneConfig, ...] = ()
  # Blessed models are pushed to <serving_dir>/<base>/<task>/<version>/ (relative: under the output dir).
  serving_dir: str = "serving"

  def __post_init__(self):
    self.validate()

  def validate(self) -> None:
    c = self.corpus
    if not (c.wikipedia_dumps or c.bert_text_corpora or c.line_corpora):
      raise ConfigError(f"pipeline {self.name!r}: the corpus config names no source")
    if c.max_documents < 0 or c.num_shards <= 0:
      raise ConfigError(f"corpus max_documents={c.max_documents} must be >= 0 and "
                        f"num_shards={c.num_shards} > 0")
    tasks = [t.task for t in self.tasks]
    if len(set(tasks)) != len(tasks):
      raise ConfigError(f"pipeline {self.name!r}: a task is listed twice in {tasks}")
    for t in self.tasks:
      unknown = sorted(set(t.bases) - set(BASES))
      if unknown or not t.bases:
        raise ConfigError(f"task {t.task!r}: bases={t.bases!r}; expected a subset of {BASES}")
      if "imported" in t.bases and not self.checkpoint_dir:
        raise ConfigError(f"task {t.task!r} fine-tunes the imported checkpoint but "
                          f"checkpoint_dir is empty")
