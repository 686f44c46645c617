"""GPT-1 (Radford et al., 2018) pretraining and fine-tuning hyperparameters.

The GPT-1 model presets (gpt_nano ... gpt1) are ModelConfigs and live with the others in
bert_keras/configs/model.py; they are re-exported here for readers of GPT code.
"""

from __future__ import annotations

import dataclasses

from bert_keras.configs.base import Config, ConfigError
from bert_keras.configs.model import (GPT1_BPE_VOCAB_SIZE, GPT_PRESETS,  # pylint: disable=unused-import
                           NUM_SPECIAL_TOKENS, get_gpt_config)


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

  RANGES = dict(learning_rate="> 0", num_train_steps="> 0", train_batch_size="> 0",
                max_seq_length="> 0", num_warmup_steps=">= 0")
  CHOICES = dict(decay=("linear", "cosine", "constant"), optimizer=("adam", "adamw"))

  def validate(self):
    if self.num_warmup_steps > self.num_train_steps:
      raise ConfigError(f"num_warmup_steps={self.num_warmup_steps} must be in "
                        f"[0, num_train_steps={self.num_train_steps}]")


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

  RANGES = dict(learning_rate="> 0", train_batch_size="> 0", num_epochs="> 0",
                max_seq_length="> 0", warmup_proportion="[0, 1)", lm_coef=">= 0",
                classifier_dropout="[0, 1)")
