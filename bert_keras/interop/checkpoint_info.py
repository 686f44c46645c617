"""What a checkpoint load found: its format, config, casing and which variables were used."""

from __future__ import annotations

import dataclasses
from typing import Optional

from bert_keras.configs.model import ModelConfig


@dataclasses.dataclass
class CheckpointInfo:
  """Returned next to every model that `bert_keras.interop` loads.

  format: "google" (bert_config.json + TF1 name-based checkpoint), "hf" (config.json +
    model.safetensors), "keras" (.keras file) or "keras_weights" (.weights.h5 + model config JSON).
  path: the file or checkpoint prefix actually read. config: the ModelConfig the model was built from.
  lower_case: the checkpoint's casing when it says (HF tokenizer_config.json `do_lower_case`, Google
    `uncased_`/`cased_` directory names), else None. vocab_path: a vocab.txt found beside it, or None.
  loaded / missing: Google names of the variables copied / left at their fresh initialisation (e.g.
    pretraining heads absent from an encoder-only checkpoint). unused: checkpoint tensors that map to
    no variable of the model built (other heads, optimizer slots). warnings: human-readable notes.
  """
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
