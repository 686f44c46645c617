"""Typed config of BERT-style encoders and GPT-style decoders, and its named presets.

Defaults are BERT-Base (Devlin et al., 2018, section 3): L=12, H=768, A=12, feed-forward 4H, erf
GELU, dropout 0.1, 512 learned positions, 2 segment types, N(0, 0.02) initialisation, LayerNorm
epsilon 1e-12 (the released TF code).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from bert_keras.configs.base import Config, ConfigError


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
    if self.hidden_size % self.num_heads:
      raise ConfigError(
          f"hidden_size={self.hidden_size} is not divisible by num_heads={self.num_heads}")


def _sized(num_layers: int, hidden_size: int, num_heads: int, **kw) -> ModelConfig:
  return ModelConfig(num_layers=num_layers, hidden_size=hidden_size, num_heads=num_heads,
                     intermediate_size=4 * hidden_size, **kw)


# The paper's two sizes (section 3) and the small grid of "Well-Read Students Learn Better".
MODEL_PRESETS: dict[str, ModelConfig] = {
    "bert_tiny": _sized(2, 128, 2), "bert_mini": _sized(4, 256, 4), "bert_small": _sized(4, 512, 8),
    "bert_medium": _sized(8, 512, 8), "bert_base": _sized(12, 768, 12),
    "bert_large": _sized(24, 1024, 16),
}

# GPT-1 (Radford et al., 2018): causal, no segment embeddings, tanh GELU and LayerNorm epsilon 1e-5
# (finetune-transformer-lm), a BPE of 40,000 merges over 478 base symbols (section 4.1) plus the
# start, delimiter and extract tokens of fine-tuning (section 3.3). "gpt1" is section 4.1's size;
# the small ones share BERT's grid, so that the ablations compare like with like.
GPT1_BPE_VOCAB_SIZE = 40478
NUM_SPECIAL_TOKENS = 3
_GPT = dict(vocab_size=GPT1_BPE_VOCAB_SIZE + NUM_SPECIAL_TOKENS, hidden_act="gelu_tanh",
            type_vocab_size=0, layer_norm_epsilon=1e-5, attention="causal")
GPT_PRESETS: dict[str, ModelConfig] = {
    "gpt_nano": _sized(1, 64, 2, **_GPT, max_position_embeddings=128),
    "gpt_tiny": _sized(2, 128, 2, **_GPT), "gpt_mini": _sized(4, 256, 4, **_GPT),
    "gpt_small": _sized(4, 512, 8, **_GPT), "gpt1": _sized(12, 768, 12, **_GPT),
}


def get_model_config(name: str, **overrides: Any) -> ModelConfig:
  """The named preset (bert_tiny ... bert_large, gpt_nano ... gpt1) with field overrides."""
  presets = {**MODEL_PRESETS, **GPT_PRESETS}
  if name not in presets:
    raise ConfigError(f"unknown model preset {name!r}; expected one of {sorted(presets)}")
  return presets[name].replace(**overrides)


def get_gpt_config(name: str, **overrides: Any) -> ModelConfig:
  if name not in GPT_PRESETS:
    raise ConfigError(f"unknown GPT preset {name!r}; expected one of {sorted(GPT_PRESETS)}")
  return GPT_PRESETS[name].replace(**overrides)
