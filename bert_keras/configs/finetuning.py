"""A fine-tuning run's config file: its task's TaskConfig and where and how it runs (RunConfig)."""

from __future__ import annotations

import dataclasses
from typing import Optional

from bert_keras.configs.base import Config, ConfigError
from bert_keras.configs.tasks import TaskConfig


@dataclasses.dataclass(frozen=True)
class RunConfig(Config):
  data_dir: str = ""
  output_dir: str = ""
  init_checkpoint: str = ""  # any format bert_keras.interop reads; "": random initialisation
  model: str = ""  # preset, ModelConfig JSON, or a checkpoint whose config to use (random init)
  vocab_file: str = ""  # default: the checkpoint's
  lower_case: bool | None = None  # default: the checkpoint's casing, else True
  distribution_strategy: str = "default"
  mixed_precision: str = "float32"
  max_train_examples: int = 0  # 0: all
  save_model: bool = True
  # Batches of similar lengths padded to these, as the export's: "auto", "fixed" (TPUs) or "16,32,64".
  length_buckets: str = "auto"
  RANGES = dict(max_train_examples=">= 0")

  def validate(self):
    object.__setattr__(self, "length_buckets", normalized_buckets(self.length_buckets))


def normalized_buckets(spec: str) -> str:
  """A length_buckets setting (RunConfig's, ExportConfig's), its syntax checked before anything loads."""
  from bert_keras.text.length_buckets import normalize_spec
  try:
    return normalize_spec(spec)
  except ValueError as e:
    raise ConfigError(str(e), key="length_buckets") from None


@dataclasses.dataclass(frozen=True)
class FinetuningConfig(Config):
  """run_finetuning's --config_file and the config.json a run writes: {"task": ..., "run": ...};
  the other fields record what the run used (read back, a record, not settings)."""
  task: TaskConfig
  run: RunConfig
  model: Optional[dict] = None
  encoder: Optional[dict] = None
  vocab_file: Optional[str] = None
  lower_case: Optional[bool] = None
  total_steps: Optional[int] = None
