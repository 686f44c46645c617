"""Typed pretraining config and its named presets (BERT section 3.1, appendix A.2).

The defaults are the paper's optimizer: Adam (decoupled weight decay 0.01, not on LayerNorm weights
or biases), beta1 0.9, beta2 0.999, epsilon 1e-6, lr 1e-4, 10,000 warmup steps then linear decay,
clipping by global norm 1.0. Sequence length 128 for 90% of the steps, then 512 (phase 2).
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any, Mapping

from configs.model import (ConfigError, ModelConfig, config_from_json_file, get_model_config,
                           is_int, is_number)

OBJECTIVES = ("mlm_nsp", "mlm", "ltr")
OPTIMIZERS = ("adamw", "lamb", "adam")
DECAYS = ("linear", "polynomial", "cosine", "constant")
DISTRIBUTIONS = ("default", "one_device", "mirrored", "multi_worker_mirrored", "tpu")
# Those fine-tuning supports (Keras `fit`; no cluster or TPU address): scripts/run_finetuning.py's,
# the pipeline's (whose runs include the fine-tuner) and the component CLIs' (the pretrainer's CLI
# adds multi_worker_mirrored).
FINETUNE_DISTRIBUTIONS = ("default", "one_device", "mirrored")
PRECISIONS = ("float32", "mixed_bfloat16", "mixed_float16")
# Declared field type (a string: `from __future__ import annotations`) -> (check, what is expected).
_FIELD_TYPES = {
    "int": (is_int, "an integer"),
    "float": (is_number, "a finite number"),
    "str": (lambda v: isinstance(v, str), "a string"),
    "bool": (lambda v: isinstance(v, bool), "true or false"),
}


@dataclasses.dataclass(frozen=True)
class TrainingConfig:
  """Everything `bert_keras.training.pretrain.run_pretraining` needs; written next to its outputs.

  `train_batch_size` is the GLOBAL batch of one optimizer update. With gradient accumulation it is
  split into `gradient_accumulation_steps` micro-batches (each divided among the replicas), and the
  update equals the one of a single batch of `train_batch_size` (section "Gradient accumulation" in
  trainer.py).
  `phase` 0 runs the whole schedule; 1 runs its first `phase1_fraction` of the steps (the paper:
  90% at length 128); 2 runs the rest from `init_checkpoint` (the phase-1 checkpoint, longer data).
  """

  # Data.
  input_files: str = ""  # comma-separated glob patterns of TFRecords
  eval_input_files: str = ""  # held-out TFRecords for masked-LM / NSP accuracy
  max_seq_length: int = 128
  max_predictions_per_seq: int = 20
  shuffle_buffer_size: int = 10000
  cycle_length: int = 8  # files read in parallel by the interleave
  dynamic_masking: bool = False  # re-mask every time an example is read, instead of stored masks
  masked_lm_prob: float = 0.15
  mask_token_id: int = 103  # [MASK] in the bert-base-uncased vocabulary
  special_token_ids: tuple = (0, 100, 101, 102, 103)  # [PAD] [UNK] [CLS] [SEP] [MASK]: never masked
  vocab_size: int = 30522  # range of the random replacement tokens of dynamic masking
  # Model.
  model_preset: str = "bert_base"
  model_overrides: Mapping[str, Any] = dataclasses.field(default_factory=dict)
  objective: str = "mlm_nsp"
  # Weight of the NSP cross-entropy in the loss (the paper sums both terms: 1.0). A larger weight
  # moves more of a small encoder's shared capacity to NSP, at a cost in masked LM (measured in
  # docs/pretraining_evidence/README.md); it changes nothing for objectives without NSP.
  nsp_loss_weight: float = 1.0
  # Optimizer.
  train_batch_size: int = 256
  num_train_steps: int = 1_000_000
  num_warmup_steps: int = 10_000
  learning_rate: float = 1e-4
  end_learning_rate: float = 0.0
  decay: str = "linear"
  # Exponent of decay="polynomial": end + (peak - end) * (1 - progress) ** decay_power after the
  # warmup (Keras PolynomialDecay's `power`); 1.0 is the linear decay. Must stay 1.0 for the others.
  decay_power: float = 1.0
  optimizer: str = "adamw"
  weight_decay_rate: float = 0.01
  beta_1: float = 0.9
  beta_2: float = 0.999
  epsilon: float = 1e-6
  clip_global_norm: float = 1.0
  gradient_accumulation_steps: int = 1
  # Phases.
  phase: int = 0
  phase1_fraction: float = 0.9
  init_checkpoint: str = ""
  # Execution.
  distribution: str = "default"
  tpu: str = ""
  num_gpus: int = 0
  precision: str = "float32"
  jit_compile: bool = False
  steps_per_execution: int = 1
  seed: int = 42
  deterministic: bool = False  # tf.config.experimental.enable_op_determinism
  # Outputs.
  model_dir: str = ""
  checkpoint_every: int = 1000
  keep_checkpoints: int = 3
  log_every: int = 100
  eval_every: int = 0  # 0: evaluate only at the end (if eval_input_files is set)
  eval_steps: int = 20
  eval_batch_size: int = 0  # 0: same as train_batch_size
  # Training records scanned for the unigram baseline's most frequent target (eval only).
  unigram_baseline_records: int = 100_000

  def __post_init__(self):
    ids = self.special_token_ids
    if not isinstance(ids, (list, tuple)) or not all(is_int(i) for i in ids):
      raise ConfigError(f"special_token_ids={ids!r} must be a list of integers",
                        key="special_token_ids")
    if not isinstance(self.model_overrides, Mapping):
      raise ConfigError(f"model_overrides={self.model_overrides!r} must be an object of ModelConfig "
                        "fields", key="model_overrides")
    # JSON turns tuples into lists; keep the dataclass hashable-looking and comparable.
    object.__setattr__(self, "special_token_ids", tuple(ids))
    object.__setattr__(self, "model_overrides", dict(self.model_overrides))
    self.validate()

  def _check_types(self) -> None:
    """Every scalar field has its declared JSON type (configs come from JSON files and flags)."""
    for field in dataclasses.fields(self):
      check, expected = _FIELD_TYPES.get(field.type, (None, None))
      value = getattr(self, field.name)
      if check is not None and not check(value):
        raise ConfigError(f"{field.name}={value!r} must be {expected}", key=field.name)

  def validate(self) -> None:
    self._check_types()
    choices = dict(objective=OBJECTIVES, optimizer=OPTIMIZERS, decay=DECAYS,
                   distribution=DISTRIBUTIONS, precision=PRECISIONS)
    for name, allowed in choices.items():
      if getattr(self, name) not in allowed:
        raise ConfigError(f"{name}={getattr(self, name)!r}; expected one of {allowed}")
    for name in ("max_seq_length", "max_predictions_per_seq", "train_batch_size",
                 "num_train_steps", "gradient_accumulation_steps", "steps_per_execution",
                 "checkpoint_every", "keep_checkpoints", "log_every", "shuffle_buffer_size",
                 "cycle_length", "eval_steps"):
      value = getattr(self, name)
      if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise ConfigError(f"{name}={value!r} must be a positive integer")
    if not self.nsp_loss_weight >= 0.0:
      raise ConfigError(f"nsp_loss_weight={self.nsp_loss_weight!r} must be >= 0",
                        key="nsp_loss_weight")
    if not 0.0 < self.decay_power < float("inf"):
      raise ConfigError(f"decay_power={self.decay_power!r} must be a finite number > 0",
                        key="decay_power")
    if self.decay != "polynomial" and self.decay_power != 1.0:
      raise ConfigError(f"decay_power={self.decay_power!r} applies only to decay='polynomial' "
                        f"(decay={self.decay!r}); expected 1.0 or --decay=polynomial",
                        key="decay_power")
    if self.num_warmup_steps < 0 or self.eval_every < 0 or self.eval_batch_size < 0:
      raise ConfigError("num_warmup_steps, eval_every and eval_batch_size must be >= 0")
    if self.train_batch_size % self.gradient_accumulation_steps:
      raise ConfigError(
          f"train_batch_size={self.train_batch_size} is not divisible by "
          f"gradient_accumulation_steps={self.gradient_accumulation_steps}")
    if self.phase not in (0, 1, 2):
      raise ConfigError(f"phase={self.phase!r}; expected 0 (whole schedule), 1 or 2")
    if self.phase == 2 and not self.init_checkpoint:
      raise ConfigError("phase=2 needs init_checkpoint (the phase-1 checkpoint)")
    if not 0.0 < self.phase1_fraction < 1.0:
      raise ConfigError(f"phase1_fraction={self.phase1_fraction!r} must be in (0, 1)")
    if not 0.0 < self.masked_lm_prob < 1.0:
      raise ConfigError(f"masked_lm_prob={self.masked_lm_prob!r} must be in (0, 1)")
    if self.distribution == "tpu" and not self.tpu:
      raise ConfigError("distribution='tpu' needs a tpu address (--tpu)")
    if self.objective == "ltr" and self.dynamic_masking:
      raise ConfigError("dynamic_masking does not apply to objective='ltr' (nothing is masked)")
    model = self.model_config()  # validates the preset and overrides
    if self.max_seq_length > model.max_position_embeddings:
      raise ConfigError(
          f"max_seq_length={self.max_seq_length} exceeds max_position_embeddings="
          f"{model.max_position_embeddings} of model_preset={self.model_preset!r}; expected at most "
          "that many positions (or a model_overrides max_position_embeddings)",
          key="max_seq_length")

  def model_config(self) -> ModelConfig:
    """The encoder config: the preset, the overrides, and causal attention for the LTR ablation."""
    overrides = dict(self.model_overrides)
    if self.objective == "ltr":
      overrides["attention"] = "causal"
    return get_model_config(self.model_preset, **overrides)

  def phase_steps(self) -> tuple[int, int]:
    """[first, last) global steps of this run within the `num_train_steps` schedule."""
    split = int(round(self.phase1_fraction * self.num_train_steps))
    return {0: (0, self.num_train_steps), 1: (0, split),
            2: (split, self.num_train_steps)}[self.phase]

  def replace(self, **changes: Any) -> "TrainingConfig":
    return dataclasses.replace(self, **changes)

  def to_dict(self) -> dict:
    values = dataclasses.asdict(self)
    values["special_token_ids"] = list(self.special_token_ids)
    return values

  def to_json(self) -> str:
    return json.dumps(self.to_dict(), indent=2, sort_keys=True)

  @classmethod
  def from_dict(cls, values: Mapping[str, Any]) -> "TrainingConfig":
    if not isinstance(values, Mapping):
      raise ConfigError(f"training config must be a JSON object, got {type(values).__name__}")
    known = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(values) - known)
    if unknown:
      raise ConfigError(f"unknown training config keys {unknown}; expected a subset of {sorted(known)}")
    return cls(**dict(values))

  @classmethod
  def from_json_file(cls, path: str) -> "TrainingConfig":
    return config_from_json_file(cls, path, "training config file")


# The paper's runs (section 3.1, appendix A.2): batch 256, 1M steps, lr 1e-4, 10k warmup; 90% of the
# steps at length 128 (20 predictions), then 512 (80 predictions). Ablations of section 5.1 keep the
# same schedule with another objective. "tiny_debug" is a seconds-long smoke run.
TRAINING_PRESETS: dict[str, TrainingConfig] = {
    "bert_base_phase1": TrainingConfig(model_preset="bert_base", phase=1, max_seq_length=128,
                                       max_predictions_per_seq=20),
    "bert_base_phase2": TrainingConfig(model_preset="bert_base", phase=2, max_seq_length=512,
                                       max_predictions_per_seq=80,
                                       init_checkpoint="<phase-1 model_dir>"),
    "bert_large_phase1": TrainingConfig(model_preset="bert_large", phase=1),
    "bert_large_phase2": TrainingConfig(model_preset="bert_large", phase=2, max_seq_length=512,
                                        max_predictions_per_seq=80,
                                        init_checkpoint="<phase-1 model_dir>"),
    "ablation_no_nsp": TrainingConfig(model_preset="bert_base", objective="mlm"),
    "ablation_ltr_no_nsp": TrainingConfig(model_preset="bert_base", objective="ltr"),
    "tiny_debug": TrainingConfig(model_preset="bert_tiny", train_batch_size=16,
                                 num_train_steps=100, num_warmup_steps=10, learning_rate=1e-3,
                                 max_seq_length=64, max_predictions_per_seq=10,
                                 checkpoint_every=50, log_every=10, shuffle_buffer_size=1000),
}


def get_training_config(name: str, **overrides: Any) -> TrainingConfig:
  """Returns the named preset with field overrides (e.g. input_files, model_dir)."""
  if name not in TRAINING_PRESETS:
    raise ConfigError(f"unknown training preset {name!r}; expected one of {sorted(TRAINING_PRESETS)}")
  return TRAINING_PRESETS[name].replace(**overrides)
