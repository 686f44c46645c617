"""Where a fine-tuning run reads and writes and how it runs (its task's hyperparameters are a
TaskConfig, bert_keras/configs/tasks.py), and the two together: a run's config file."""

from __future__ import annotations

import dataclasses
from typing import Optional

from bert_keras.configs.base import Config, ConfigError
from bert_keras.configs.tasks import TaskConfig


@dataclasses.dataclass(frozen=True)
class RunConfig(Config):
  """Where things are and how to run, besides the task's own hyperparameters."""

  data_dir: str = ""
  output_dir: str = ""
  init_checkpoint: str = ""  # any format bert_keras.interop reads; "" = random initialisation
  model: str = ""  # preset name, ModelConfig JSON, or a checkpoint dir (random init only)
  vocab_file: str = ""  # default: the vocab.txt beside the checkpoint
  lower_case: bool | None = None  # default: the checkpoint's casing, else True
  distribution_strategy: str = "default"
  mixed_precision: str = "float32"
  max_train_examples: int = 0  # 0 = all; for quick runs
  save_model: bool = True
  # The lengths training and evaluation batches are padded to, each batch holding examples of
  # similar length (tasks/length_batches.py), as the export's --length_buckets: "auto" (16, 24,
  # 32, 48, 64, ... max_seq_length), "fixed" (every batch at max_seq_length: one shape, what TPUs
  # prefer) or ascending lengths such as "16,32,64".
  length_buckets: str = "auto"

  RANGES = dict(max_train_examples=">= 0")

  def validate(self):
    from bert_keras.text.length_buckets import normalize_spec
    try:
      object.__setattr__(self, "length_buckets", normalize_spec(self.length_buckets))
    except ValueError as e:
      raise ConfigError(str(e), key="length_buckets") from None


@dataclasses.dataclass(frozen=True)
class FinetuningConfig(Config):
  """run_finetuning's --config_file, and the config.json a training run writes: {"task": a
  TaskConfig, "run": a RunConfig}. The other fields are what a run records it used (the encoder's
  model config and source, vocabulary, casing, steps); read back, they are a record, not
  settings."""

  task: TaskConfig
  run: RunConfig
  model: Optional[dict] = None
  encoder: Optional[dict] = None
  vocab_file: Optional[str] = None
  lower_case: Optional[bool] = None
  total_steps: Optional[int] = None
