"""Typed pretraining config (BERT section 3.1, appendix A.2); its recipes are configs/training/*.json.

`TrainingConfig` nests five configs by concern, as Model Garden nests its experiment configs:
`data`, `model`, `optimizer`, `runtime`, `outputs`. Every field is also a flag of scripts/run_pretraining.py
under its flat name (the field's name): `TrainingConfig.from_flat`,
`override` and `to_flat` are the one place that maps the flat names onto the nested fields.

The defaults are the paper's optimizer: Adam (decoupled weight decay 0.01, not on LayerNorm weights
or biases), beta1 0.9, beta2 0.999, epsilon 1e-6, lr 1e-4, 10,000 warmup steps then linear decay,
clipping by global norm 1.0. Sequence length 128 for 90% of the steps, then 512 (phase 2).
"""

from __future__ import annotations

import dataclasses
import functools
import json
from typing import Any, Mapping

from bert_keras.configs.base import Config, ConfigError, field as _field, is_int, plain_data
from bert_keras.configs.model import ModelConfig, get_model_config

OBJECTIVES = ("mlm_nsp", "mlm", "ltr")
OPTIMIZERS = ("adamw", "lamb", "adam")
DECAYS = ("linear", "polynomial", "cosine", "constant")
DISTRIBUTIONS = ("default", "one_device", "mirrored", "multi_worker_mirrored", "tpu")
# Those fine-tuning supports (Keras `fit`; no cluster or TPU address): scripts/run_finetuning.py's,
# the pipeline's (whose runs include the fine-tuner) and the component CLIs' (the pretrainer's CLI
# adds multi_worker_mirrored).
FINETUNE_DISTRIBUTIONS = ("default", "one_device", "mirrored")
PRECISIONS = ("float32", "mixed_bfloat16", "mixed_float16")


def field_help(name: str) -> str:
  """The help of the TrainingConfig field of flat name `name` (its flag), with its default."""
  field = TrainingConfig.flat_fields()[name]
  default = field.default_factory() if field.default is dataclasses.MISSING else field.default
  shown = ",".join(map(str, default)) if isinstance(default, tuple) else json.dumps(default)
  return f"{field.metadata['help']} (default {shown})"


@dataclasses.dataclass(frozen=True)
class TrainingDataConfig(Config):
  """What the pretrainer reads: the records, their lengths, the batches, dynamic masking.

  `train_batch_size` is the GLOBAL batch of one optimizer update. With gradient accumulation it is
  split into `gradient_accumulation_steps` micro-batches (each divided among the replicas), and the
  update equals the one of a single batch of `train_batch_size` (section "Gradient accumulation" in
  trainer.py).
  """

  input_files: str = _field("", "comma-separated glob patterns of the training TFRecords (e.g. "
                            "'data/pretraining-*.tfrecord'; not summary.json)")
  eval_input_files: str = _field("", "comma-separated glob patterns of held-out TFRecords for "
                                 "masked-LM / NSP accuracy; empty: no evaluation")
  max_seq_length: int = _field(128, "tokens per example; must equal the records' length "
                               "(create_pretraining_data --max_seq_length)")
  max_predictions_per_seq: int = _field(20, "masked positions per example; must equal the records' "
                                        "(create_pretraining_data --max_predictions_per_seq)")
  train_batch_size: int = _field(256, "GLOBAL batch of one optimizer update (all replicas and "
                                 "accumulation micro-batches together)")
  eval_batch_size: int = _field(0, "batch of evaluation (>= 0); 0: train_batch_size")
  shuffle_buffer_size: int = _field(10000, "examples in the shuffle buffer of the training stream")
  cycle_length: int = _field(8, "input files read in parallel by the interleave")
  dynamic_masking: bool = _field(False, "re-mask every time an example is read (RoBERTa-style) "
                                 "instead of using the masks stored in the records")
  masked_lm_prob: float = _field(0.15, "fraction of the tokens masked by dynamic masking, in (0, 1)")
  mask_token_id: int = _field(103, "id of [MASK] for dynamic masking (103 in the bert-base-uncased "
                              "vocabulary); must be inside the model's vocabulary")
  special_token_ids: tuple = _field((0, 100, 101, 102, 103), "token ids dynamic masking never masks "
                                    "([PAD] [UNK] [CLS] [SEP] [MASK] of bert-base-uncased)")
  vocab_size: int = _field(0, "range [0, vocab_size) of the random replacement tokens of dynamic "
                           "masking; 0: the model's vocab_size (at most that)")
  vocab_file: str = _field("", "the vocab.txt the records were made with, copied to "
                           "output_dir/export/ beside the encoder (its line count must be the "
                           "model's vocab_size); empty: the one the records' summary.json names "
                           "(create_pretraining_data), else none")

  RANGES = dict(max_seq_length="> 0", max_predictions_per_seq="> 0", train_batch_size="> 0",
                eval_batch_size=">= 0", shuffle_buffer_size="> 0", cycle_length="> 0",
                masked_lm_prob="(0, 1)", mask_token_id=">= 0", vocab_size=">= 0")

  def validate(self):
    ids = self.special_token_ids
    if not isinstance(ids, (list, tuple)) or not all(is_int(i) for i in ids):
      raise ConfigError(f"special_token_ids={ids!r} must be a list of integers",
                        key="special_token_ids")
    if self.max_predictions_per_seq > self.max_seq_length:
      raise ConfigError(f"max_predictions_per_seq={self.max_predictions_per_seq!r} must be at "
                        f"most max_seq_length={self.max_seq_length}", key="max_predictions_per_seq")


@dataclasses.dataclass(frozen=True)
class TrainingModelConfig(Config):
  """Which encoder, with which heads and loss, starting from which weights."""

  model: str = _field("bert_base", "model preset of bert_keras/configs/model.py (bert_tiny, bert_mini, "
                             "bert_small, bert_medium, bert_base, bert_large, gpt_*)")
  model_overrides: Mapping[str, Any] = _field(
      {}, "ModelConfig fields replacing the preset's, as a JSON object (e.g. "
      "'{\"vocab_size\": 8000, \"num_layers\": 4}')")
  objective: str = _field("mlm_nsp", f"pretraining objective, one of {'|'.join(OBJECTIVES)}: masked "
                          "LM + next sentence (the paper), masked LM only, or left-to-right LM "
                          "(the ablations of section 5.1; logged as lm_loss / lm_accuracy, the "
                          "others as mlm_loss / mlm_accuracy)")
  # Weight of the NSP cross-entropy in the loss (the paper sums both terms: 1.0). A larger weight
  # moves more of a small encoder's shared capacity to NSP, at a cost in masked LM (measured in
  # studies/pretraining_evidence/README.md); it changes nothing for objectives without NSP.
  nsp_loss_weight: float = _field(1.0, "weight of the NSP cross-entropy in the loss (>= 0; the "
                                  "paper: 1.0)")
  init_checkpoint: str = _field("", "start from this checkpoint: the phase-1 output_dir for phase 2, "
                                "or a Google / Hugging Face / .keras encoder checkpoint")

  RANGES = dict(nsp_loss_weight=">= 0")
  CHOICES = dict(objective=OBJECTIVES)

  def validate(self):
    if not isinstance(self.model_overrides, Mapping):
      raise ConfigError(f"model_overrides={self.model_overrides!r} must be an object of ModelConfig "
                        "fields", key="model_overrides")
    object.__setattr__(self, "model_overrides", dict(self.model_overrides))


@dataclasses.dataclass(frozen=True)
class OptimizerConfig(Config):
  """The update: optimizer, learning-rate schedule, clipping, accumulation, phases."""

  optimizer: str = _field("adamw", f"optimizer, one of {'|'.join(OPTIMIZERS)}: Adam with decoupled "
                          "weight decay (the paper's), LAMB (You et al. 2019), or Adam without "
                          "decay")
  learning_rate: float = _field(1e-4, "peak learning rate, reached after the warmup (> 0)")
  num_train_steps: int = _field(1_000_000, "optimizer steps of the whole schedule (both phases)")
  num_warmup_steps: int = _field(10_000, "steps of linear warmup from 0 to learning_rate (>= 0)")
  end_learning_rate: float = _field(0.0, "learning rate at the end of the decay, in [0, "
                                    "learning_rate]")
  decay: str = _field("linear", f"learning rate decay after the warmup, one of {'|'.join(DECAYS)}")
  # Exponent of decay="polynomial": end + (peak - end) * (1 - progress) ** decay_power after the
  # warmup (Keras PolynomialDecay's `power`); 1.0 is the linear decay. Must stay 1.0 for the others.
  decay_power: float = _field(1.0, "exponent of --decay=polynomial (> 0); must stay 1.0 for the "
                              "other decays")
  weight_decay_rate: float = _field(0.01, "weight decay (>= 0; not on LayerNorm weights or "
                                    "biases): decoupled for adamw, inside the trust ratio for "
                                    "lamb, unused by adam")
  beta_1: float = _field(0.9, "first-moment decay of Adam / AdamW / LAMB, in [0, 1)")
  beta_2: float = _field(0.999, "second-moment decay of Adam / AdamW / LAMB, in [0, 1)")
  epsilon: float = _field(1e-6, "epsilon of Adam / AdamW / LAMB (> 0)")
  clip_global_norm: float = _field(1.0, "clip the gradient to this global norm (> 0); 0 turns "
                                   "clipping off")
  gradient_accumulation_steps: int = _field(1, "micro-batches summed into one update "
                                            "(train_batch_size must be divisible by it)")
  phase: int = _field(0, "0: the whole schedule; 1: its first phase1_fraction of the steps; 2: the "
                      "rest, from init_checkpoint")
  phase1_fraction: float = _field(0.9, "fraction of num_train_steps run by phase 1, in (0, 1) (the "
                                  "paper: 0.9 at length 128)")

  # Out-of-range values are not harmless: a negative learning rate trains by gradient ascent, a
  # negative clip_global_norm would turn clipping off, beta_1 >= 1 never forgets the first gradient.
  RANGES = dict(learning_rate="> 0", num_train_steps="> 0", num_warmup_steps=">= 0",
                end_learning_rate=">= 0", decay_power="> 0", weight_decay_rate=">= 0",
                beta_1="[0, 1)", beta_2="[0, 1)", epsilon="> 0", clip_global_norm=">= 0",
                gradient_accumulation_steps="> 0", phase1_fraction="(0, 1)")
  CHOICES = dict(optimizer=OPTIMIZERS, decay=DECAYS, phase=(0, 1, 2))

  def validate(self):
    if self.end_learning_rate > self.learning_rate:
      raise ConfigError(f"end_learning_rate={self.end_learning_rate!r} must be in [0, "
                        f"learning_rate={self.learning_rate!r}]", key="end_learning_rate")
    if self.decay != "polynomial" and self.decay_power != 1.0:
      raise ConfigError(f"decay_power={self.decay_power!r} applies only to decay='polynomial' "
                        f"(decay={self.decay!r}); expected 1.0 or --decay=polynomial",
                        key="decay_power")


@dataclasses.dataclass(frozen=True)
class RuntimeConfig(Config):
  """Where and how the steps run: strategy, devices, precision, compilation, seed."""

  distribution_strategy: str = _field("default", "tf.distribute strategy, one of "
                                      f"{'|'.join(DISTRIBUTIONS)}")
  tpu: str = _field("", "TPU address for --distribution_strategy=tpu (grpc://host:port or a Cloud "
                    "TPU name)")
  num_gpus: int = _field(0, "GPUs to use (>= 0): mirrored uses that many (0: all visible), "
                         "one_device uses /gpu:0 when 1 (0: the CPU)")
  mixed_precision: str = _field("float32", f"compute precision (the Keras mixed-precision policy), "
                                f"one of {'|'.join(PRECISIONS)} (mixed_* keep float32 weights; "
                                "float16 adds loss scaling)")
  jit_compile: bool = _field(False, "compile the train step with XLA")
  steps_per_execution: int = _field(1, "train steps per tf.function call (fewer host round trips); "
                                    "capped so that no call crosses a log_every, checkpoint_every "
                                    "or eval_every boundary")
  seed: int = _field(42, "random seed of initialisation, shuffling and dynamic masking, in "
                     "[0, 2**32 - 1]")
  deterministic: bool = _field(False, "make TensorFlow ops deterministic "
                               "(tf.config.experimental.enable_op_determinism; slower)")

  RANGES = dict(num_gpus=">= 0", steps_per_execution="> 0", seed=f"[0, {2**32 - 1}]")
  CHOICES = dict(distribution_strategy=DISTRIBUTIONS, mixed_precision=PRECISIONS)

  def validate(self):
    if self.distribution_strategy == "tpu" and not self.tpu:
      raise ConfigError("distribution_strategy='tpu' needs a tpu address (--tpu)", key="tpu")
    if self.distribution_strategy == "one_device" and self.num_gpus > 1:
      raise ConfigError(f"num_gpus={self.num_gpus} with distribution_strategy='one_device', which "
                        "uses one device; expected 0 (the CPU) or 1 (/gpu:0), or "
                        "--distribution_strategy=mirrored", key="num_gpus")


@dataclasses.dataclass(frozen=True)
class OutputsConfig(Config):
  """What the run writes, and how often: output_dir, checkpoints, logs, evaluations."""

  output_dir: str = _field("", "output directory: checkpoints, tensorboard/, training_config.json, "
                          "history.jsonl, export/; re-running resumes from it")
  checkpoint_every: int = _field(1000, "steps between checkpoints")
  keep_checkpoints: int = _field(3, "checkpoints kept in output_dir (older ones are deleted)")
  log_every: int = _field(100, "steps between logged / TensorBoard training metrics")
  eval_every: int = _field(0, "steps between evaluations on eval_input_files (>= 0); 0: only at "
                           "the end")
  eval_steps: int = _field(20, "batches per evaluation")
  unigram_baseline_records: int = _field(100_000, "training records scanned for the unigram "
                                         "baseline's most frequent target (eval only; > 0)")

  RANGES = dict(checkpoint_every="> 0", keep_checkpoints="> 0", log_every="> 0", eval_every=">= 0",
                eval_steps="> 0", unigram_baseline_records="> 0")


@dataclasses.dataclass(frozen=True)
class TrainingConfig(Config):
  """Everything `bert_keras.training.pretrain.run_pretraining` needs; written next to its outputs
  (output_dir/training_config.json).

  `optimizer.phase` 0 runs the whole schedule; 1 runs its first `phase1_fraction` of the steps (the
  paper: 90% at length 128); 2 runs the rest from `model.init_checkpoint` (the phase-1 checkpoint,
  longer data).
  """

  data: TrainingDataConfig = TrainingDataConfig()
  model: TrainingModelConfig = TrainingModelConfig()
  optimizer: OptimizerConfig = OptimizerConfig()
  runtime: RuntimeConfig = RuntimeConfig()
  outputs: OutputsConfig = OutputsConfig()

  # --- Flat names: the flags and the pipeline's `training` parameters.

  @classmethod
  def flat_fields(cls) -> dict[str, dataclasses.Field]:
    """{flat name (the field's name): field}, in section order."""
    return {name: field for name, (_, field) in _flat_map().items()}

  def to_flat(self) -> dict:
    """{flat name: value} of every field (JSON-ready values)."""
    return {name: plain_data(getattr(getattr(self, section), field.name))
            for name, (section, field) in _flat_map().items()}

  def override(self, **flat: Any) -> "TrainingConfig":
    """A copy with fields given by their flat names (flags); unknown names are refused naming
    them."""
    changes: dict[str, dict] = {}
    for name, value in TrainingOverrides(flat).items():
      section, field = _flat_map()[name]
      changes.setdefault(section, {})[field.name] = value
    return dataclasses.replace(self, **{
        section: dataclasses.replace(getattr(self, section), **values)
        for section, values in changes.items()})

  @classmethod
  def from_flat(cls, flat: Mapping[str, Any] = (), **more: Any) -> "TrainingConfig":
    """The defaults with fields given by their flat names (see `override`)."""
    return cls().override(**dict(flat), **more)

  def flat(self, name: str) -> Any:
    """The value of the field of flat name `name`."""
    section, field = _flat_map()[name]
    return getattr(getattr(self, section), field.name)

  def validate(self) -> None:
    """The checks across sections (each section checked its own fields)."""
    d, m, o = self.data, self.model, self.optimizer
    if d.train_batch_size % o.gradient_accumulation_steps:
      raise ConfigError(
          f"train_batch_size={d.train_batch_size} is not divisible by "
          f"gradient_accumulation_steps={o.gradient_accumulation_steps}")
    if o.phase == 2 and not m.init_checkpoint:
      raise ConfigError("phase=2 needs init_checkpoint (the phase-1 checkpoint)")
    if m.objective == "ltr" and d.dynamic_masking:
      raise ConfigError("dynamic_masking does not apply to objective='ltr' (nothing is masked)")
    model = self.model_config()  # validates the preset and overrides
    if d.max_seq_length > model.max_position_embeddings:
      raise ConfigError(
          f"max_seq_length={d.max_seq_length} exceeds max_position_embeddings="
          f"{model.max_position_embeddings} of model={m.model!r}; expected at most "
          "that many positions (or a model_overrides max_position_embeddings)",
          key="max_seq_length")
    if d.dynamic_masking:
      # Dynamic masking writes mask_token_id and random ids below vocab_size into the inputs: both
      # must lie inside the model's embedding table, or the run fails mid-way on a gather.
      where = (f"the model's vocabulary (vocab_size={model.vocab_size} of "
               f"model={m.model!r} and model_overrides)")
      if d.vocab_size > model.vocab_size:
        raise ConfigError(f"vocab_size={d.vocab_size} (dynamic masking's random tokens) exceeds "
                          f"{where}; expected at most that, or 0 for the model's", key="vocab_size")
      if d.mask_token_id >= model.vocab_size:
        raise ConfigError(f"mask_token_id={d.mask_token_id} is outside {where}",
                          key="mask_token_id")

  def masking_vocab_size(self) -> int:
    """The range [0, n) of dynamic masking's random replacement tokens: vocab_size, or the model's
    vocab_size when it is 0."""
    return self.data.vocab_size or self.model_config().vocab_size

  def model_config(self) -> ModelConfig:
    """The encoder config: the preset, the overrides, and causal attention for the LTR ablation."""
    overrides = dict(self.model.model_overrides)
    if self.model.objective == "ltr":
      overrides["attention"] = "causal"
    try:
      return get_model_config(self.model.model, **overrides)
    except ConfigError as e:
      raise (e.under("model_overrides") if e.key in overrides else e) from None

  def phase_steps(self) -> tuple[int, int]:
    """[first, last) global steps of this run within the `num_train_steps` schedule."""
    o = self.optimizer
    split = int(round(o.phase1_fraction * o.num_train_steps))
    return {0: (0, o.num_train_steps), 1: (0, split), 2: (split, o.num_train_steps)}[o.phase]


class TrainingOverrides(dict):
  """TrainingConfig fields by flat name over its defaults (the pipeline's pretrainer settings); the
  names are checked when it is built, the values by whoever builds the config (`config`)."""

  def __init__(self, values: Mapping[str, Any] = (), **more: Any):
    super().__init__(values, **more)
    for name in self:
      if name not in _flat_map():
        raise ConfigError(f"{name}: unknown key in TrainingConfig; expected one of "
                          f"{sorted(_flat_map())}", key=name)

  @classmethod
  def from_dict(cls, values: Mapping[str, Any]) -> "TrainingOverrides":
    if not isinstance(values, Mapping):
      raise ConfigError(f"must be an object of TrainingConfig fields, got {type(values).__name__}")
    return cls(values)

  def config(self, **more: Any) -> TrainingConfig:
    """The TrainingConfig of these fields and `more` (checked)."""
    return TrainingConfig.from_flat(self, **more)


@functools.lru_cache(maxsize=None)
def _flat_map() -> dict[str, tuple[str, dataclasses.Field]]:
  """{flat name: (section, field)} of TrainingConfig: the one map of flags onto nested fields."""
  out = {}
  for section in dataclasses.fields(TrainingConfig):
    for field in dataclasses.fields(section.default):
      out[field.name] = (section.name, field)
  return out


def flat_values(values: Mapping[str, Any]) -> dict:
  """{flat name: value} of a training_config.json's (nested) object, without validating it: what a
  resume compares with the recorded run."""
  return {name: values[section][field.name] for name, (section, field) in _flat_map().items()
          if isinstance(values.get(section), Mapping) and field.name in values[section]}
