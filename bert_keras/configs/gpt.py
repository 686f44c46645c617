"""GPT-1 (Radford et al., 2018) pretraining and fine-tuning hyperparameters.

The GPT-1 model presets (gpt_nano ... gpt1) are ModelConfigs and live with the others in
bert_keras/configs/model.py; they are re-exported here for readers of GPT code.
"""

from __future__ import annotations

import dataclasses

from bert_keras.configs.base import Config, ConfigError
from bert_keras.configs.model import (GPT1_BPE_VOCAB_SIZE, GPT_PRESETS,  # pylint: disable=unused-import
                           NUM_SPECIAL_TOKENS, get_gpt_config)

# The names of the BERT configs (one name per idea); files written before the rename still load.
_RENAMED = {"batch_size": "train_batch_size", "seq_length": "max_seq_length",
            "warmup_fraction": "warmup_proportion"}


def _check_positive(obj, *names):
  for name in names:
    value = getattr(obj, name)
    if not isinstance(value, (int, float)) or isinstance(value, bool) or value <= 0:
      raise ConfigError(f"{name}={value!r} must be > 0")


@dataclasses.dataclass(frozen=True)
class GPTPretrainingConfig(Config):
  """Section 4.1: Adam (with the decoupled "modified L2" w=0.01 on non-bias, non-gain weights),
  max lr 2.5e-4 reached by linear warmup over 2,000 updates then cosine annealing to 0, minibatches
  of 64 contiguous sequences of 512 tokens, 100 epochs."""

  learning_rate: float = 2.5e-4
  num_warmup_steps: int = 2000
  num_train_steps: int = 100000
  decay: str = "cosine"
  optimizer: str = "adamw"
  weight_decay_rate: float = 0.01
  train_batch_size: int = 64
  max_seq_length: int = 512
  clip_global_norm: float = 1.0
  seed: int = 0

  RENAMED_KEYS = _RENAMED

  def __post_init__(self):
    _check_positive(self, "learning_rate", "num_train_steps", "train_batch_size", "max_seq_length")
    if self.num_warmup_steps < 0 or self.num_warmup_steps > self.num_train_steps:
      raise ConfigError(f"num_warmup_steps={self.num_warmup_steps} must be in "
                        f"[0, num_train_steps={self.num_train_steps}]")
    if self.decay not in ("linear", "cosine", "constant"):
      raise ConfigError(f"decay={self.decay!r}; expected 'linear', 'cosine' or 'constant'")
    if self.optimizer not in ("adam", "adamw"):
      raise ConfigError(f"optimizer={self.optimizer!r}; expected 'adam' or 'adamw'")


@dataclasses.dataclass(frozen=True)
class GPTFinetuningConfig(Config):
  """Section 4.1 "Fine-tuning details": lr 6.25e-5, batch 32, 3 epochs, linear decay with warmup
  over 0.2% of training, dropout 0.1 on the classifier, auxiliary LM weight lambda = 0.5
  (L3 = L2 + lambda * L1, section 3.2). lm_coef = 0 is the "without auxiliary LM" ablation (Table 5)."""

  learning_rate: float = 6.25e-5
  train_batch_size: int = 32
  num_epochs: float = 3.0
  warmup_proportion: float = 0.002
  decay: str = "linear"
  weight_decay_rate: float = 0.01
  lm_coef: float = 0.5
  classifier_dropout: float = 0.1
  max_seq_length: int = 512
  seed: int = 0

  RENAMED_KEYS = _RENAMED

  def __post_init__(self):
    _check_positive(self, "learning_rate", "train_batch_size", "num_epochs", "max_seq_length")
    if not 0.0 <= self.warmup_proportion < 1.0:
      raise ConfigError(f"warmup_proportion={self.warmup_proportion!r} must be in [0, 1)")
    if self.lm_coef < 0:
      raise ConfigError(f"lm_coef={self.lm_coef!r} must be >= 0")
    if not 0.0 <= self.classifier_dropout < 1.0:
      raise ConfigError(f"classifier_dropout={self.classifier_dropout!r} must be in [0, 1)")
