"""Typed model config for BERT-style encoders and GPT-style decoders, and its named presets.

One vocabulary across the project: `hidden_size` (H), `num_layers` (L), `num_heads` (A),
`intermediate_size` (4H in the paper), `dropout_rate`, `attention_dropout_rate`.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from bert_keras.configs.base import Config, ConfigError

HIDDEN_ACTIVATIONS = ("gelu", "gelu_tanh", "relu")
ATTENTION_KINDS = ("bidirectional", "causal")


@dataclasses.dataclass(frozen=True)
class ModelConfig(Config):
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

  RANGES = dict(vocab_size="> 0", hidden_size="> 0", num_layers="> 0", num_heads="> 0",
                intermediate_size="> 0", max_position_embeddings="> 0", type_vocab_size=">= 0",
                dropout_rate="[0, 1)", attention_dropout_rate="[0, 1)", initializer_range="> 0",
                layer_norm_epsilon="> 0")
  CHOICES = dict(hidden_act=HIDDEN_ACTIVATIONS, attention=ATTENTION_KINDS)

  def validate(self) -> None:
    if self.hidden_size % self.num_heads:
      raise ConfigError(
          f"hidden_size={self.hidden_size} is not divisible by num_heads={self.num_heads}")


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


# GPT-1 (Radford et al., 2018) reuses ModelConfig (one vocabulary for one idea): attention="causal",
# type_vocab_size=0 (no segment embeddings), tanh-GELU and LayerNorm epsilon 1e-5 as in the released
# code (finetune-transformer-lm), 512 learned positions and a 40,000-merge BPE vocabulary (section
# 4.1): 40,000 merges on top of the 478 base symbols of the released encoder, plus the three special
# tokens (start, delimiter, extract) that fine-tuning appends (section 3.3).
GPT1_BPE_VOCAB_SIZE = 40478
NUM_SPECIAL_TOKENS = 3


def _gpt(num_layers: int, hidden_size: int, num_heads: int, **kw) -> ModelConfig:
  return _bert(num_layers, hidden_size, num_heads, **dict(dict(
      vocab_size=GPT1_BPE_VOCAB_SIZE + NUM_SPECIAL_TOKENS, hidden_act="gelu_tanh",
      type_vocab_size=0, layer_norm_epsilon=1e-5, attention="causal"), **kw))


# "gpt1" is the paper's (section 4.1: 12 layers, 768 states, 12 heads, 3072 feed-forward). The small
# presets share BERT's small grid so the ablations compare like with like at tiny scale.
GPT_PRESETS: dict[str, ModelConfig] = {
    "gpt_nano": _gpt(1, 64, 2, max_position_embeddings=128),
    "gpt_tiny": _gpt(2, 128, 2),
    "gpt_mini": _gpt(4, 256, 4),
    "gpt_small": _gpt(4, 512, 8),
    "gpt1": _gpt(12, 768, 12),
}


def get_model_config(name: str, **overrides: Any) -> ModelConfig:
  """The named preset (BERT's bert_tiny ... bert_large or GPT-1's gpt_nano ... gpt1), with field
  overrides (e.g. vocab_size of a learned vocab)."""
  presets = {**MODEL_PRESETS, **GPT_PRESETS}
  if name not in presets:
    raise ConfigError(f"unknown model preset {name!r}; expected one of {sorted(presets)}")
  return presets[name].replace(**overrides)


def get_gpt_config(name: str, **overrides: Any) -> ModelConfig:
  """The named GPT preset with field overrides (e.g. `vocab_size` of a trained BPE model)."""
  if name not in GPT_PRESETS:
    raise ConfigError(f"unknown GPT preset {name!r}; expected one of {sorted(GPT_PRESETS)}")
  return GPT_PRESETS[name].replace(**overrides)
