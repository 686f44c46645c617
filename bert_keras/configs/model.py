"""Config of BERT encoders and GPT decoders; defaults: BERT-Base (LayerNorm epsilon: the released code's)."""

from __future__ import annotations

import dataclasses
from typing import Any

from bert_keras.configs.base import Config, ConfigError, presets, require  # noqa: F401 (re-exported)


@dataclasses.dataclass(frozen=True)
class ModelConfig(Config):
  vocab_size: int = 30522
  hidden_size: int = 768
  num_layers: int = 12
  num_heads: int = 12
  intermediate_size: int = 3072
  hidden_act: str = "gelu"  # erf GELU; "gelu_tanh" is the tanh approximation
  dropout_rate: float = 0.1
  attention_dropout_rate: float = 0.1
  max_position_embeddings: int = 512
  type_vocab_size: int = 2
  initializer_range: float = 0.02
  layer_norm_epsilon: float = 1e-12
  attention: str = "bidirectional"  # "causal": left-to-right (GPT-1, the LTR ablation)
  RANGES = dict(vocab_size="> 0", hidden_size="> 0", num_layers="> 0", num_heads="> 0",
                intermediate_size="> 0", max_position_embeddings="> 0", type_vocab_size=">= 0",
                dropout_rate="[0, 1)", attention_dropout_rate="[0, 1)", initializer_range="> 0",
                layer_norm_epsilon="> 0")
  CHOICES = dict(hidden_act=("gelu", "gelu_tanh", "relu"), attention=("bidirectional", "causal"))

  def validate(self) -> None:
    require(self.hidden_size % self.num_heads == 0,
            f"hidden_size={self.hidden_size} is not divisible by num_heads={self.num_heads}")


_MODELS = {name: ModelConfig(**values) for name, values in presets()["models"].items()}
MODEL_PRESETS = {name: c for name, c in _MODELS.items() if not name.startswith("gpt")}
GPT_PRESETS = {name: c for name, c in _MODELS.items() if name.startswith("gpt")}


def get_model_config(name: str, **overrides: Any) -> ModelConfig:
  """The named preset (bert_tiny ... bert_large, gpt_nano ... gpt1) with field overrides."""
  require(name in _MODELS, f"unknown model preset {name!r}; expected one of {sorted(_MODELS)}")
  return _MODELS[name].replace(**overrides)

