"""Pipeline configs: corpora, model, tasks, budgets (pipeline.definitions.build_pipeline's input)."""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping, Optional

from bert_keras.configs.base import Config, ConfigError, field, require, under
from bert_keras.configs.pretraining_data import PretrainingDataConfig
from bert_keras.configs.tasks import TaskConfig, get_task_config
from bert_keras.configs.training import TrainingConfig

BASES = ("pretrained", "imported")
# TrainingConfig fields the pipeline sets: from the artifacts, the held-out split, the runner.
_PIPELINE_TRAINING = ("input_files", "eval_input_files", "max_seq_length", "max_predictions_per_seq",
                      "vocab_size", "mask_token_id", "special_token_ids", "vocab_file",
                      "output_dir", "distribution_strategy")


@dataclasses.dataclass(frozen=True)
class CorpusConfig(Config):
  """The corpus_ingestion component's parameters."""
  wikipedia_dumps: tuple = ()
  bert_text_corpora: tuple = ()
  line_corpora: tuple = ()
  max_documents: int = 0  # 0: all
  num_shards: int = 2
  RANGES = dict(max_documents=">= 0", num_shards=">= 1")


@dataclasses.dataclass(frozen=True)
class PretrainingConfig(Config):
  """The vocabulary's, the examples' (`data`) and the pretrainer's (`training`, flat names) parameters."""
  vocab_size: int = 8000
  lower_case: bool = True
  max_input_words: int = 5_000_000  # the learner's cost grows with the distinct words it sees
  data: PretrainingDataConfig = PretrainingDataConfig()
  training: Mapping[str, Any] = field({}, "TrainingConfig fields by flat name")

  def validate(self):
    for name in sorted(set(self.data.given()) & set(PretrainingDataConfig.LOCATION_FIELDS)):
      raise ConfigError(f"data.{name}: set by the pipeline (its corpus and vocabulary)",
                        key=f"data.{name}")
    for name in sorted(set(self.training) & set(_PIPELINE_TRAINING)):
      raise ConfigError(f"training.{name}: set by the pipeline (pretraining.data, the "
                        "vocabulary, the runner)", key=f"training.{name}")
    try:  # with the data's lengths, as the pretrainer will run it
      TrainingConfig.from_flat(self.training, max_seq_length=self.data.max_seq_length,
                               max_predictions_per_seq=self.data.max_predictions_per_seq)
    except ConfigError as e:
      lengths = e.key in ("max_seq_length", "max_predictions_per_seq")
      raise e.under("data" if lengths else "training") from None


@dataclasses.dataclass(frozen=True)
class FineTuneConfig(Config):
  """One task: its TaskConfig (or fields over the preset's), per-base fields over it, budget, thresholds."""
  task: str
  task_config: Optional[TaskConfig] = None
  max_train_examples: int = 0
  thresholds: Mapping[str, Any] = field({}, "metric bounds for the blessing")
  bases: tuple = BASES  # fine-tune from our pretrained encoder and/or the imported checkpoint
  base_task_config: Mapping[str, Mapping[str, Any]] = field({}, "TaskConfig fields per base")
  RANGES = dict(max_train_examples=">= 0")

  def validate(self):
    preset = under("task", get_task_config, self.task)
    if not isinstance(self.task_config, TaskConfig):
      object.__setattr__(self, "task_config", under(
          "task_config", get_task_config, self.task, **dict(self.task_config or {})))
    elif self.task_config.task != preset.task:
      raise ConfigError(f"task_config: a config of task {self.task_config.task!r}; expected one "
                        f"of {preset.task!r}", key="task_config")
    require(self.bases and set(self.bases) <= set(BASES), f"bases={self.bases!r}; expected a subset of "
            f"{BASES}", key="bases")
    for base in self.base_task_config:
      key = f"base_task_config.{base}"
      require(base in self.bases, f"{key}: not one of bases={self.bases}", key=key)
      under(key, self.config_for, base)

  def config_for(self, base: str) -> TaskConfig:
    """The task config of the fine-tuning from `base`."""
    return self.task_config.replace(**self.base_task_config.get(base, {}))


@dataclasses.dataclass(frozen=True)
class PipelineConfig(Config):
  name: str = "bert_pipeline"
  corpus: CorpusConfig = CorpusConfig()
  pretraining: PretrainingConfig = PretrainingConfig()
  checkpoint_dir: str = ""  # a Hugging Face or Google checkpoint to import; "": none
  checkpoint_vocab_file: str = ""
  tasks: tuple[FineTuneConfig, ...] = ()
  serving_dir: str = "serving"  # pushes go to <serving_dir>/<base>/<task>/<version>/

  def validate(self) -> None:
    c, tasks = self.corpus, [t.task for t in self.tasks]
    require(c.wikipedia_dumps or c.bert_text_corpora or c.line_corpora,
            f"pipeline {self.name!r}: the corpus config names no source")
    require(len(set(tasks)) == len(tasks), f"pipeline {self.name!r}: a task is listed twice in {tasks}")
    for i, t in enumerate(self.tasks):
      require("imported" not in t.bases or self.checkpoint_dir, f"tasks[{i}].bases: task {t.task!r} "
              "fine-tunes the imported checkpoint but checkpoint_dir is empty")
