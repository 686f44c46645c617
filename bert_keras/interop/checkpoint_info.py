"""What a checkpoint load found: its format, config, casing and which variables were used."""

from __future__ import annotations

import dataclasses
from typing import Optional

from bert_keras.configs.model import ModelConfig


@dataclasses.dataclass
class CheckpointInfo:
  """Returned next to every model `bert_keras.interop` loads: the format ("google", "hf", "keras",
  "keras_weights"), the path read, the config, the casing when the checkpoint says (else None), a
  vocab.txt beside it, and the Google names loaded, missing (left fresh) and unused."""
  format: str
  path: str
  config: ModelConfig
  lower_case: Optional[bool] = None
  vocab_path: Optional[str] = None
  loaded: list = dataclasses.field(default_factory=list)
  missing: list = dataclasses.field(default_factory=list)
  unused: list = dataclasses.field(default_factory=list)
  warnings: list = dataclasses.field(default_factory=list)

  def to_dict(self) -> dict:
    values = dataclasses.asdict(self)
    values["config"] = self.config.to_dict()
    return values
