"""Typed model config for BERT-style encoders and GPT-style decoders, and its named presets.

One vocabulary across the project: `hidden_size` (H), `num_layers` (L), `num_heads` (A),
`intermediate_size` (4H in the paper), `dropout_rate`, `attention_dropout_rate`.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any, Mapping

HIDDEN_ACTIVATIONS = ("gelu", "gelu_tanh", "relu")
ATTENTION_KINDS = ("bidirectional", "causal")


from bert_keras.errors import UserError


class ConfigError(UserError, ValueError):
  """A config value is missing, of the wrong type, or out of range."""


@dataclasses.dataclass(frozen=True)
class ModelConfig:
  """Hyperparameters of a Transformer encoder (BERT) or decoder (GPT-1).

  Defaults are BERT-Base (Devlin et al., 2018, section 3): L=12, H=768, A=12, feed-forward 4H,
  exact erf GELU, dropout 0.1, 512 learned positions, 2 segment types, N(0, 0.02) initialisation and
  LayerNorm epsilon 1e-12 as in the released TF code.
  """

  vocab_size: int = 30522
  hidden_size: int = 768
  num_layers: int = 12
  num_heads: int = 12
  intermediate_size: int = 3072
  hidden_act: str = "gelu"  # exact erf GELU; "gelu_tanh" is the tanh approximation.
  dropout_rate: float = 0.1
  attention_dropout_rate: float = 0.1
  max_position_embeddings: int = 512
  type_vocab_size: int = 2
  initializer_range: float = 0.02
  layer_norm_epsilon: float = 1e-12
  attention: str = "bidirectional"  # "causal" for left-to-right models (GPT-1, the LTR ablation).

  def __post_init__(self):
    self.validate()

  def validate(self) -> None:
    for name in ("vocab_size", "hidden_size", "num_layers", "num_heads", "intermediate_size",
                 "max_position_embeddings"):
      value = getattr(self, name)
      if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise ConfigError(f"{name}={value!r} must be a positive integer")
    if not isinstance(self.type_vocab_size, int) or self.type_vocab_size < 0:
      raise ConfigError(f"type_vocab_size={self.type_vocab_size!r} must be an integer >= 0")
    if self.hidden_size % self.num_heads:
      raise ConfigError(
          f"hidden_size={self.hidden_size} is not divisible by num_heads={self.num_heads}")
    if self.hidden_act not in HIDDEN_ACTIVATIONS:
      raise ConfigError(f"hidden_act={self.hidden_act!r}; expected one of {HIDDEN_ACTIVATIONS}")
    if self.attention not in ATTENTION_KINDS:
      raise ConfigError(f"attention={self.attention!r}; expected one of {ATTENTION_KINDS}")
    for name in ("dropout_rate", "attention_dropout_rate"):
      value = getattr(self, name)
      if not isinstance(value, (int, float)) or not 0.0 <= value < 1.0:
        raise ConfigError(f"{name}={value!r} must be in [0, 1)")
    if not self.initializer_range > 0 or not self.layer_norm_epsilon > 0:
      raise ConfigError("initializer_range and layer_norm_epsilon must be > 0")

  def replace(self, **changes: Any) -> "ModelConfig":
    return dataclasses.replace(self, **changes)

  def to_dict(self) -> dict:
    return dataclasses.asdict(self)

  @classmethod
  def from_dict(cls, values: Mapping[str, Any]) -> "ModelConfig":
    """Builds a config from plain data, rejecting unknown keys (configs are data, never code)."""
    if not isinstance(values, Mapping):
      raise ConfigError(f"model config must be a JSON object, got {type(values).__name__}")
    known = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(values) - known)
    if unknown:
      raise ConfigError(f"unknown model config keys {unknown}; expected a subset of {sorted(known)}")
    return cls(**dict(values))

  def to_json(self) -> str:
    return json.dumps(self.to_dict(), indent=2, sort_keys=True)

  @classmethod
  def from_json_file(cls, path: str) -> "ModelConfig":
    try:
      with open(path, encoding="utf-8") as f:
        values = json.load(f)
    except FileNotFoundError as e:
      raise ConfigError(f"{path}: no such model config file") from e
    except json.JSONDecodeError as e:
      raise ConfigError(f"{path}: line {e.lineno}: not valid JSON ({e.msg})") from e
    try:
      return cls.from_dict(values)
    except (ConfigError, TypeError) as e:
      raise ConfigError(f"{path}: {e}") from e


def _bert(num_layers: int, hidden_size: int, num_heads: int, **kw) -> ModelConfig:
  return ModelConfig(num_layers=num_layers, hidden_size=hidden_size, num_heads=num_heads,
                     intermediate_size=4 * hidden_size, **kw)


# The paper's two sizes (section 3) and the small grid released with "Well-Read Students Learn Better".
MODEL_PRESETS: dict[str, ModelConfig] = {
    "bert_tiny": _bert(2, 128, 2),
    "bert_mini": _bert(4, 256, 4),
    "bert_small": _bert(4, 512, 8),
    "bert_medium": _bert(8, 512, 8),
    "bert_base": _bert(12, 768, 12),
    "bert_large": _bert(24, 1024, 16),
}


def get_model_config(name: str, **overrides: Any) -> ModelConfig:
  """Returns the named preset, with optional field overrides (e.g. vocab_size of a learned vocab)."""
  if name not in MODEL_PRESETS:
    raise ConfigError(f"unknown model preset {name!r}; expected one of {sorted(MODEL_PRESETS)}")
  return MODEL_PRESETS[name].replace(**overrides)
