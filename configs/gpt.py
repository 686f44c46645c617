"""GPT-1 (Radford et al., 2018) model presets and its pretraining / fine-tuning hyperparameters.

The decoder reuses `ModelConfig` (one vocabulary for one idea): GPT-1 is `attention="causal"`,
`type_vocab_size=0` (no segment embeddings), tanh-GELU and LayerNorm epsilon 1e-5 as in the released
code (finetune-transformer-lm), 512 learned positions and a 40,000-merge BPE vocabulary (section 4.1).
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any, Mapping

from configs.model import ConfigError, ModelConfig

# 40,000 BPE merges on top of the 478 base symbols of the released encoder; plus the three special
# tokens (start, delimiter, extract) that fine-tuning appends (section 3.3).
GPT1_BPE_VOCAB_SIZE = 40478
NUM_SPECIAL_TOKENS = 3


def _gpt(num_layers: int, hidden_size: int, num_heads: int, **kw) -> ModelConfig:
  values = dict(vocab_size=GPT1_BPE_VOCAB_SIZE + NUM_SPECIAL_TOKENS, num_layers=num_layers,
                hidden_size=hidden_size, num_heads=num_heads, intermediate_size=4 * hidden_size,
                hidden_act="gelu_tanh", dropout_rate=0.1, attention_dropout_rate=0.1,
                max_position_embeddings=512, type_vocab_size=0, initializer_range=0.02,
                layer_norm_epsilon=1e-5, attention="causal")
  values.update(kw)
  return ModelConfig(**values)


# "gpt1" is the paper's (section 4.1: 12 layers, 768 states, 12 heads, 3072 feed-forward). The small
# presets share BERT's small grid so the ablations compare like with like at tiny scale.
GPT_PRESETS: dict[str, ModelConfig] = {
    "gpt_nano": _gpt(1, 64, 2, max_position_embeddings=128),
    "gpt_tiny": _gpt(2, 128, 2),
    "gpt_mini": _gpt(4, 256, 4),
    "gpt_small": _gpt(4, 512, 8),
    "gpt1": _gpt(12, 768, 12),
}


def get_gpt_config(name: str, **overrides: Any) -> ModelConfig:
  """The named GPT preset with field overrides (e.g. `vocab_size` of a trained BPE model)."""
  if name not in GPT_PRESETS:
    raise ConfigError(f"unknown GPT preset {name!r}; expected one of {sorted(GPT_PRESETS)}")
  return GPT_PRESETS[name].replace(**overrides)


class _JsonConfig:
  """to_dict / from_dict / to_json with unknown keys rejected (configs are data, never code)."""

  def replace(self, **changes: Any):
    return dataclasses.replace(self, **changes)

  def to_dict(self) -> dict:
    return dataclasses.asdict(self)

  def to_json(self) -> str:
    return json.dumps(self.to_dict(), indent=2, sort_keys=True)

  @classmethod
  def from_dict(cls, values: Mapping[str, Any]):
    if not isinstance(values, Mapping):
      raise ConfigError(f"{cls.__name__} must be a JSON object, got {type(values).__name__}")
    known = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(values) - known)
    if unknown:
      raise ConfigError(f"unknown {cls.__name__} keys {unknown}; expected a subset of {sorted(known)}")
    return cls(**dict(values))


def _check_positive(obj, *names):
  for name in names:
    value = getattr(obj, name)
    if not isinstance(value, (int, float)) or isinstance(value, bool) or value <= 0:
      raise ConfigError(f"{name}={value!r} must be > 0")


@dataclasses.dataclass(frozen=True)
class GPTPretrainingConfig(_JsonConfig):
  """Section 4.1: Adam (with the decoupled "modified L2" w=0.01 on non-bias, non-gain weights),
  max lr 2.5e-4 reached by linear warmup over 2,000 updates then cosine annealing to 0, minibatches
  of 64 contiguous sequences of 512 tokens, 100 epochs."""

  learning_rate: float = 2.5e-4
  num_warmup_steps: int = 2000
  num_train_steps: int = 100000
  decay: str = "cosine"
  optimizer: str = "adamw"
  weight_decay_rate: float = 0.01
  batch_size: int = 64
  seq_length: int = 512
  clip_global_norm: float = 1.0
  seed: int = 0

  def __post_init__(self):
    _check_positive(self, "learning_rate", "num_train_steps", "batch_size", "seq_length")
    if self.num_warmup_steps < 0 or self.num_warmup_steps > self.num_train_steps:
      raise ConfigError(f"num_warmup_steps={self.num_warmup_steps} must be in "
                        f"[0, num_train_steps={self.num_train_steps}]")
    if self.decay not in ("linear", "cosine", "constant"):
      raise ConfigError(f"decay={self.decay!r}; expected 'linear', 'cosine' or 'constant'")
    if self.optimizer not in ("adam", "adamw"):
      raise ConfigError(f"optimizer={self.optimizer!r}; expected 'adam' or 'adamw'")


@dataclasses.dataclass(frozen=True)
class GPTFinetuningConfig(_JsonConfig):
  """Section 4.1 "Fine-tuning details": lr 6.25e-5, batch 32, 3 epochs, linear decay with warmup
  over 0.2% of training, dropout 0.1 on the classifier, auxiliary LM weight lambda = 0.5
  (L3 = L2 + lambda * L1, section 3.2). lm_coef = 0 is the "without auxiliary LM" ablation (Table 5)."""

  learning_rate: float = 6.25e-5
  batch_size: int = 32
  num_epochs: float = 3.0
  warmup_fraction: float = 0.002
  decay: str = "linear"
  weight_decay_rate: float = 0.01
  lm_coef: float = 0.5
  classifier_dropout: float = 0.1
  seq_length: int = 512
  seed: int = 0

  def __post_init__(self):
    _check_positive(self, "learning_rate", "batch_size", "num_epochs", "seq_length")
    if not 0.0 <= self.warmup_fraction < 1.0:
      raise ConfigError(f"warmup_fraction={self.warmup_fraction!r} must be in [0, 1)")
    if self.lm_coef < 0:
      raise ConfigError(f"lm_coef={self.lm_coef!r} must be >= 0")
    if not 0.0 <= self.classifier_dropout < 1.0:
      raise ConfigError(f"classifier_dropout={self.classifier_dropout!r} must be in [0, 1)")
