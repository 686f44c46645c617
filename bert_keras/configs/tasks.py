"""Typed fine-tuning task configs and their named presets (glue/*, squad_v1, squad_v2, swag, ...).

Defaults are the paper's fine-tuning hyperparameters (Devlin et al., 2018, section 4 and appendix
A.3): batch 32, 3 epochs, Adam lr in {5e-5, 4e-5, 3e-5, 2e-5}, 10% linear warmup, dropout 0.1.
One preset per task; `TaskConfig.task` names the registered task (bert_keras.tasks) that reads the
data, builds the head and computes the metrics.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from bert_keras.configs.base import Config, ConfigError

APPROACHES = ("fine_tuning", "feature_based")
TAGGING_SCHEMES = ("iob1", "iob2")


def _layer_index(value) -> int:
  """An int, or a string of one (flags give strings); floats and bools are not layer indices."""
  if isinstance(value, bool) or not isinstance(value, (int, str)):
    raise TypeError(value)
  return int(value)


@dataclasses.dataclass(frozen=True)
class TaskConfig(Config):
  """Everything a fine-tuning run needs besides the encoder and the data location."""

  task: str = "polarity"  # registered task name (bert_keras.tasks.get_task).
  max_seq_length: int = 128
  learning_rate: float = 2e-5
  train_batch_size: int = 32
  eval_batch_size: int = 64
  num_epochs: float = 3.0
  warmup_proportion: float = 0.1
  dropout_rate: float = 0.1  # applied in the head; the encoder keeps its own config's rate.
  weight_decay_rate: float = 0.01
  seed: int = 0
  # Fine-tune everything (sections 4.1-4.4) or train a BiLSTM over frozen features (section 5.3).
  approach: str = "fine_tuning"
  feature_layers: tuple = (-4, -3, -2, -1)  # encoder_outputs indices concatenated (5.3 default).
  lstm_units: int = 768  # per direction, two layers (section 5.3).
  # Reading-comprehension settings (section 4.2, 4.3 and the released run_squad.py).
  doc_stride: int = 128
  max_query_length: int = 64
  n_best_size: int = 20
  max_answer_length: int = 30
  null_score_diff_threshold: float = 0.0  # SQuAD v2: predict "" when s_null - s_best > this.
  # Sequence labelling (section 5.3): scheme of the input files; the model is trained on IOB2.
  tagging_scheme: str = "iob1"
  # Embedded sets without an official split (polarity, lee_similarity): every k-th item is dev.
  dev_every: int = 5

  RENAMED_KEYS = {"batch_size": "train_batch_size"}  # the pretraining config's name

  def __post_init__(self):
    layers = self.feature_layers
    if isinstance(layers, (str, bytes)) or not hasattr(layers, "__iter__"):
      raise ConfigError(f"feature_layers={layers!r} must be a list of encoder layer indices")
    try:
      layers = tuple(_layer_index(i) for i in layers)
    except (TypeError, ValueError):
      raise ConfigError(f"feature_layers={list(layers)!r} must be integer encoder layer indices, "
                        "e.g. -4,-3,-2,-1") from None
    object.__setattr__(self, "feature_layers", layers)
    self.validate()

  def validate(self) -> None:
    for name in ("max_seq_length", "train_batch_size", "eval_batch_size", "lstm_units",
                 "doc_stride", "max_query_length", "n_best_size", "max_answer_length", "dev_every"):
      value = getattr(self, name)
      if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise ConfigError(f"{name}={value!r} must be a positive integer")
    seed = self.seed
    if not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed < 2**32:
      # keras.utils.set_random_seed seeds numpy, whose seeds are 32-bit unsigned.
      raise ConfigError(f"seed={seed!r} must be an integer in [0, {2**32 - 1}]")
    if self.max_seq_length < 8:
      raise ConfigError(f"max_seq_length={self.max_seq_length} must be >= 8")
    if not self.learning_rate > 0:
      raise ConfigError(f"learning_rate={self.learning_rate!r} must be > 0")
    if not self.num_epochs > 0:
      raise ConfigError(f"num_epochs={self.num_epochs!r} must be > 0")
    if not 0.0 <= self.warmup_proportion < 1.0:
      raise ConfigError(f"warmup_proportion={self.warmup_proportion!r} must be in [0, 1)")
    if not 0.0 <= self.dropout_rate < 1.0:
      raise ConfigError(f"dropout_rate={self.dropout_rate!r} must be in [0, 1)")
    if self.approach not in APPROACHES:
      raise ConfigError(f"approach={self.approach!r}; expected one of {APPROACHES}")
    if self.tagging_scheme not in TAGGING_SCHEMES:
      raise ConfigError(f"tagging_scheme={self.tagging_scheme!r}; expected one of {TAGGING_SCHEMES}")
    if not self.feature_layers:
      raise ConfigError("feature_layers must name at least one encoder layer")


_GLUE = dict(max_seq_length=128, learning_rate=2e-5, train_batch_size=32, num_epochs=3.0)

# Section 4.1 (GLUE): batch 32, 3 epochs, best lr of {5e-5, 4e-5, 3e-5, 2e-5} on dev; 2e-5 default.
# Section 4.2/4.3 (SQuAD): lr 5e-5, batch 32 (v1.1, 3 epochs) / 48 (v2.0, 2 epochs), seq 384.
# Section 4.4 (SWAG): lr 2e-5, batch 16, 3 epochs.  Section 5.3 (CoNLL-2003): cased, seq 128.
TASK_PRESETS: dict[str, TaskConfig] = {
    "glue/cola": TaskConfig(task="glue/cola", **_GLUE),
    "glue/sst2": TaskConfig(task="glue/sst2", **_GLUE),
    "glue/mrpc": TaskConfig(task="glue/mrpc", **_GLUE),
    "glue/stsb": TaskConfig(task="glue/stsb", **_GLUE),
    "glue/qqp": TaskConfig(task="glue/qqp", **_GLUE),
    "glue/mnli": TaskConfig(task="glue/mnli", **_GLUE),
    "glue/qnli": TaskConfig(task="glue/qnli", **_GLUE),
    "glue/rte": TaskConfig(task="glue/rte", **_GLUE),
    "glue/wnli": TaskConfig(task="glue/wnli", **_GLUE),
    "squad_v1": TaskConfig(task="squad_v1", max_seq_length=384, learning_rate=5e-5,
                           train_batch_size=32, num_epochs=3.0),
    "squad_v2": TaskConfig(task="squad_v2", max_seq_length=384, learning_rate=5e-5,
                           train_batch_size=48, num_epochs=2.0),
    "swag": TaskConfig(task="swag", max_seq_length=128, learning_rate=2e-5, train_batch_size=16,
                       num_epochs=3.0),
    "conll2003": TaskConfig(task="conll2003", max_seq_length=128, learning_rate=5e-5,
                            train_batch_size=32, num_epochs=3.0, tagging_scheme="iob1"),
    # The embedded real sets (README, "Data"): small, so a higher lr and more epochs.
    # 160 training sentences: batch 16 and 5 epochs give 50 updates instead of 15 (the paper
    # notes small sets need care, section 4.1); 64 pieces hold 99% of the sentences.
    "polarity": TaskConfig(task="polarity", max_seq_length=64, learning_rate=5e-5,
                           train_batch_size=16, num_epochs=5.0),
    "lee_similarity": TaskConfig(task="lee_similarity", max_seq_length=128,
                                 learning_rate=5e-5, train_batch_size=32, num_epochs=3.0),
}
# Section 5.3's feature-based variant, named so runs can cite it.
TASK_PRESETS["conll2003_feature_based"] = TASK_PRESETS["conll2003"].replace(
    approach="feature_based", learning_rate=1e-3)


def get_task_config(name: str, **overrides: Any) -> TaskConfig:
  """Returns the named preset with optional field overrides."""
  if name not in TASK_PRESETS:
    raise ConfigError(f"unknown task preset {name!r}; expected one of {sorted(TASK_PRESETS)}")
  return TASK_PRESETS[name].replace(**overrides)
