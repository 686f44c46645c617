"""Typed pretraining config and its named presets (BERT section 3.1, appendix A.2).

`TrainingConfig` nests five configs by concern, as Model Garden nests its experiment configs:
`data`, `model`, `optimizer`, `runtime`, `outputs`. Every field is also a flag of scripts/run_pretraining.py
under its flat name (the field's name; `optimizer.type` is --optimizer): `TrainingConfig.from_flat`,
`override` and `to_flat` are the one place that maps the flat names onto the nested fields.
training_config.json files written flat (before the nesting) still load, with a deprecation warning.

The defaults are the paper's optimizer: Adam (decoupled weight decay 0.01, not on LayerNorm weights
or biases), beta1 0.9, beta2 0.999, epsilon 1e-6, lr 1e-4, 10,000 warmup steps then linear decay,
clipping by global norm 1.0. Sequence length 128 for 90% of the steps, then 512 (phase 2).
"""

from __future__ import annotations

import dataclasses
import functools
import json
import types
from typing import Any, Mapping

from bert_keras.configs.base import (Config, ConfigError, is_int, is_number, plain_data, warn_deprecated,
                          warn_renamed)
from bert_keras.configs.model import ModelConfig, check_model_config_keys, get_model_config

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


def _field(default: Any, help_text: str) -> Any:
  """A TrainingConfig field with its one-line help (metadata "help"): the one place that documents
  it, read by scripts/run_pretraining.py for --help."""
  metadata = {"help": help_text}
  if isinstance(default, dict):
    return dataclasses.field(default_factory=lambda: dict(default), metadata=metadata)
  return dataclasses.field(default=default, metadata=metadata)


def _check_types(config) -> None:
  """Every scalar field has its declared JSON type (configs come from JSON files and flags)."""
  for field in dataclasses.fields(config):
    check, expected = _FIELD_TYPES.get(field.type, (None, None))
    value = getattr(config, field.name)
    if check is not None and not check(value):
      raise ConfigError(f"{field.name}={value!r} must be {expected}", key=field.name)


def field_help(name: str) -> str:
  """The help of the TrainingConfig field of flat name `name` (its flag), with its default."""
  field = TrainingConfig.flat_fields()[name]
  default = field.default_factory() if field.default is dataclasses.MISSING else field.default
  if isinstance(default, tuple):
    shown = ",".join(str(v) for v in default)
  elif isinstance(default, dict):
    shown = json.dumps(default)
  elif isinstance(default, str):
    shown = repr(default)
  else:
    shown = str(default).lower() if isinstance(default, bool) else str(default)
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
                           "model_dir/export/ beside the encoder (its line count must be the "
                           "model's vocab_size); empty: the one the records' summary.json names "
                           "(create_pretraining_data), else none")

  def __post_init__(self):
    ids = self.special_token_ids
    if not isinstance(ids, (list, tuple)) or not all(is_int(i) for i in ids):
      raise ConfigError(f"special_token_ids={ids!r} must be a list of integers",
                        key="special_token_ids")
    # JSON turns tuples into lists; keep the dataclass hashable-looking and comparable.
    object.__setattr__(self, "special_token_ids", tuple(ids))
    _check_types(self)


@dataclasses.dataclass(frozen=True)
class TrainingModelConfig(Config):
  """Which encoder, with which heads and loss, starting from which weights."""

  model_preset: str = _field("bert_base", "model preset of bert_keras/configs/model.py (bert_tiny, bert_mini, "
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
  init_checkpoint: str = _field("", "start from this checkpoint: the phase-1 model_dir for phase 2, "
                                "or a Google / Hugging Face / .keras encoder checkpoint")

  def __post_init__(self):
    if not isinstance(self.model_overrides, Mapping):
      raise ConfigError(f"model_overrides={self.model_overrides!r} must be an object of ModelConfig "
                        "fields", key="model_overrides")
    object.__setattr__(self, "model_overrides", dict(self.model_overrides))
    _check_types(self)


@dataclasses.dataclass(frozen=True)
class OptimizerConfig(Config):
  """The update: optimizer, learning-rate schedule, clipping, accumulation, phases."""

  type: str = _field("adamw", f"optimizer, one of {'|'.join(OPTIMIZERS)}: Adam with decoupled "
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

  def __post_init__(self):
    _check_types(self)


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

  def __post_init__(self):
    _check_types(self)


@dataclasses.dataclass(frozen=True)
class OutputsConfig(Config):
  """What the run writes, and how often: model_dir, checkpoints, logs, evaluations."""

  model_dir: str = _field("", "output directory: checkpoints, tensorboard/, training_config.json, "
                          "history.jsonl, export/; re-running resumes from it")
  checkpoint_every: int = _field(1000, "steps between checkpoints")
  keep_checkpoints: int = _field(3, "checkpoints kept in model_dir (older ones are deleted)")
  log_every: int = _field(100, "steps between logged / TensorBoard training metrics")
  eval_every: int = _field(0, "steps between evaluations on eval_input_files (>= 0); 0: only at "
                           "the end")
  eval_steps: int = _field(20, "batches per evaluation")
  unigram_baseline_records: int = _field(100_000, "training records scanned for the unigram "
                                         "baseline's most frequent target (eval only; > 0)")

  def __post_init__(self):
    _check_types(self)


@dataclasses.dataclass(frozen=True)
class TrainingConfig(Config):
  """Everything `bert_keras.training.pretrain.run_pretraining` needs; written next to its outputs
  (model_dir/training_config.json).

  `optimizer.phase` 0 runs the whole schedule; 1 runs its first `phase1_fraction` of the steps (the
  paper: 90% at length 128); 2 runs the rest from `model.init_checkpoint` (the phase-1 checkpoint,
  longer data).
  """

  data: TrainingDataConfig = TrainingDataConfig()
  model: TrainingModelConfig = TrainingModelConfig()
  optimizer: OptimizerConfig = OptimizerConfig()
  runtime: RuntimeConfig = RuntimeConfig()
  outputs: OutputsConfig = OutputsConfig()

  # Flat names renamed since (old flag / JSON key -> current), accepted with a warning.
  RENAMED_FLAT = {"distribution": "distribution_strategy", "precision": "mixed_precision"}

  def __post_init__(self):
    self.validate()

  # --- Flat names: the flags, the pipeline's `training` parameters, JSON written before nesting.

  @classmethod
  def flat_fields(cls) -> dict[str, dataclasses.Field]:
    """{flat name: field}, in section order: each field's name, but `optimizer.type` is
    "optimizer"."""
    return {name: field for name, (_, field) in _flat_map().items()}

  def to_flat(self) -> dict:
    """{flat name: value} of every field (JSON-ready values)."""
    return {name: plain_data(getattr(getattr(self, section), field.name))
            for name, (section, field) in _flat_map().items()}

  def override(self, **flat: Any) -> "TrainingConfig":
    """A copy with fields given by their flat names (flags); unknown names are refused naming
    them, renamed ones are accepted with a deprecation warning."""
    changes: dict[str, dict] = {}
    for name, value in _current_flat(flat, "TrainingConfig").items():
      section, field = _flat_map()[name]
      changes.setdefault(section, {})[field.name] = value
    return dataclasses.replace(self, **{
        section: dataclasses.replace(getattr(self, section), **values)
        for section, values in changes.items()})

  @classmethod
  def from_flat(cls, flat: Mapping[str, Any] = (), **more: Any) -> "TrainingConfig":
    """The defaults with fields given by their flat names (see `override`)."""
    return cls().override(**dict(flat), **more)

  @classmethod
  def from_dict(cls, values: Mapping[str, Any]) -> "TrainingConfig":
    """Nested (data, model, optimizer, runtime, outputs), or flat as written before the nesting
    (a deprecation warning): flat keys are mapped onto the sections."""
    if not isinstance(values, Mapping):
      raise ConfigError(f"TrainingConfig must be a JSON object, got {type(values).__name__}")
    sections = {f.name for f in dataclasses.fields(cls)}
    nested = {k: v for k, v in values.items() if k in sections and isinstance(v, Mapping)}
    flat = {k: v for k, v in values.items() if k not in nested}
    if not flat:
      return super().from_dict(nested)
    flat = _current_flat(flat, "TrainingConfig")
    warn_deprecated(f"TrainingConfig: flat keys {sorted(flat)[:3]}... are deprecated; nest them by "
                    f"section ({', '.join(_SECTIONS)}), as to_json writes them (flat keys still "
                    "load for now)")
    config = super().from_dict(nested) if nested else cls()
    return config.override(**flat)

  def flat(self, name: str) -> Any:
    """The value of the field of flat name `name`."""
    section, field = _flat_map()[name]
    return getattr(getattr(self, section), field.name)

  def validate(self) -> None:
    """The checks across fields (each section checked its own types), naming the flat field."""
    f = types.SimpleNamespace(**self.to_flat())
    choices = dict(objective=OBJECTIVES, optimizer=OPTIMIZERS, decay=DECAYS,
                   distribution_strategy=DISTRIBUTIONS, mixed_precision=PRECISIONS)
    for name, allowed in choices.items():
      if getattr(f, name) not in allowed:
        raise ConfigError(f"{name}={getattr(f, name)!r}; expected one of {allowed}")
    for name in ("max_seq_length", "max_predictions_per_seq", "train_batch_size",
                 "num_train_steps", "gradient_accumulation_steps", "steps_per_execution",
                 "checkpoint_every", "keep_checkpoints", "log_every", "shuffle_buffer_size",
                 "cycle_length", "eval_steps", "unigram_baseline_records"):
      value = getattr(f, name)
      if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise ConfigError(f"{name}={value!r} must be a positive integer", key=name)
    self._check_ranges(f)
    if not f.nsp_loss_weight >= 0.0:
      raise ConfigError(f"nsp_loss_weight={f.nsp_loss_weight!r} must be >= 0",
                        key="nsp_loss_weight")
    if not 0.0 < f.decay_power < float("inf"):
      raise ConfigError(f"decay_power={f.decay_power!r} must be a finite number > 0",
                        key="decay_power")
    if f.decay != "polynomial" and f.decay_power != 1.0:
      raise ConfigError(f"decay_power={f.decay_power!r} applies only to decay='polynomial' "
                        f"(decay={f.decay!r}); expected 1.0 or --decay=polynomial",
                        key="decay_power")
    if f.train_batch_size % f.gradient_accumulation_steps:
      raise ConfigError(
          f"train_batch_size={f.train_batch_size} is not divisible by "
          f"gradient_accumulation_steps={f.gradient_accumulation_steps}")
    if f.phase not in (0, 1, 2):
      raise ConfigError(f"phase={f.phase!r}; expected 0 (whole schedule), 1 or 2")
    if f.phase == 2 and not f.init_checkpoint:
      raise ConfigError("phase=2 needs init_checkpoint (the phase-1 checkpoint)")
    if not 0.0 < f.phase1_fraction < 1.0:
      raise ConfigError(f"phase1_fraction={f.phase1_fraction!r} must be in (0, 1)")
    if not 0.0 < f.masked_lm_prob < 1.0:
      raise ConfigError(f"masked_lm_prob={f.masked_lm_prob!r} must be in (0, 1)")
    if f.distribution_strategy == "tpu" and not f.tpu:
      raise ConfigError("distribution_strategy='tpu' needs a tpu address (--tpu)")
    if f.objective == "ltr" and f.dynamic_masking:
      raise ConfigError("dynamic_masking does not apply to objective='ltr' (nothing is masked)")
    if f.distribution_strategy == "one_device" and f.num_gpus > 1:
      raise ConfigError(f"num_gpus={f.num_gpus} with distribution_strategy='one_device', which "
                        "uses one device; expected 0 (the CPU) or 1 (/gpu:0), or "
                        "--distribution_strategy=mirrored",
                        key="num_gpus")
    model = self.model_config()  # validates the preset and overrides
    if f.max_seq_length > model.max_position_embeddings:
      raise ConfigError(
          f"max_seq_length={f.max_seq_length} exceeds max_position_embeddings="
          f"{model.max_position_embeddings} of model_preset={f.model_preset!r}; expected at most "
          "that many positions (or a model_overrides max_position_embeddings)",
          key="max_seq_length")
    if f.dynamic_masking:
      self._check_masking_ids(f, model.vocab_size)

  def _check_ranges(self, f) -> None:
    """Numeric fields inside their meaningful range, each error naming the field (= flag) and value.

    Out-of-range values are not harmless: a negative learning rate trains by gradient ascent, a
    negative clip_global_norm would turn clipping off, beta_1 >= 1 never forgets the first gradient.
    """
    def check(name, ok, expected):
      if not ok:
        raise ConfigError(f"{name}={getattr(f, name)!r} must be {expected}", key=name)

    check("learning_rate", f.learning_rate > 0, "> 0")
    check("end_learning_rate", 0 <= f.end_learning_rate <= f.learning_rate,
          f"in [0, learning_rate={f.learning_rate!r}]")
    check("epsilon", f.epsilon > 0, "> 0")
    check("beta_1", 0 <= f.beta_1 < 1, "in [0, 1)")
    check("beta_2", 0 <= f.beta_2 < 1, "in [0, 1)")
    check("weight_decay_rate", f.weight_decay_rate >= 0, ">= 0")
    check("clip_global_norm", f.clip_global_norm >= 0, ">= 0 (0 turns clipping off)")
    check("num_gpus", f.num_gpus >= 0, ">= 0")
    check("seed", 0 <= f.seed <= 2**32 - 1, "in [0, 2**32 - 1]")
    for name in ("num_warmup_steps", "eval_every", "eval_batch_size", "vocab_size", "mask_token_id"):
      check(name, getattr(f, name) >= 0, ">= 0")
    check("max_predictions_per_seq", f.max_predictions_per_seq <= f.max_seq_length,
          f"at most max_seq_length={f.max_seq_length}")

  def _check_masking_ids(self, f, model_vocab_size: int) -> None:
    """Dynamic masking writes mask_token_id and random ids below vocab_size into the inputs: both
    must lie inside the model's embedding table, or the run fails mid-way on a gather."""
    where = (f"the model's vocabulary (vocab_size={model_vocab_size} of "
             f"model_preset={f.model_preset!r} and model_overrides)")
    if f.vocab_size > model_vocab_size:
      raise ConfigError(f"vocab_size={f.vocab_size} (dynamic masking's random tokens) exceeds "
                        f"{where}; expected at most that, or 0 for the model's", key="vocab_size")
    if f.mask_token_id >= model_vocab_size:
      raise ConfigError(f"mask_token_id={f.mask_token_id} is outside {where}",
                        key="mask_token_id")

  def masking_vocab_size(self) -> int:
    """The range [0, n) of dynamic masking's random replacement tokens: vocab_size, or the model's
    vocab_size when it is 0."""
    return self.data.vocab_size or self.model_config().vocab_size

  def model_config(self) -> ModelConfig:
    """The encoder config: the preset, the overrides, and causal attention for the LTR ablation."""
    overrides = dict(self.model.model_overrides)
    check_model_config_keys(overrides, "model_overrides", key="model_overrides")
    if self.model.objective == "ltr":
      overrides["attention"] = "causal"
    return get_model_config(self.model.model_preset, **overrides)

  def phase_steps(self) -> tuple[int, int]:
    """[first, last) global steps of this run within the `num_train_steps` schedule."""
    o = self.optimizer
    split = int(round(o.phase1_fraction * o.num_train_steps))
    return {0: (0, o.num_train_steps), 1: (0, split), 2: (split, o.num_train_steps)}[o.phase]



@functools.lru_cache(maxsize=None)
def _flat_map() -> dict[str, tuple[str, dataclasses.Field]]:
  """{flat name: (section, field)} of TrainingConfig: the one map of flags onto nested fields."""
  out = {}
  for section in dataclasses.fields(TrainingConfig):
    for field in dataclasses.fields(section.default):
      name = "optimizer" if (section.name, field.name) == ("optimizer", "type") else field.name
      out[name] = (section.name, field)
  return out


def _current_flat(values: Mapping[str, Any], where: str) -> dict:
  """Flat names renamed since under their current name (with a warning); unknown names refused."""
  out = {}
  for name, value in values.items():
    if name in TrainingConfig.RENAMED_FLAT:
      new = TrainingConfig.RENAMED_FLAT[name]
      if new in values:
        raise ConfigError(f"{where}: both {name!r} (deprecated) and {new!r} are given; keep "
                          f"{new!r}", key=new)
      warn_renamed(name, new, where)
      name = new
    if name not in _flat_map():
      raise ConfigError(f"unknown key {name!r} in {where}; expected one of "
                        f"{sorted(_flat_map())}", key=name)
    out[name] = value
  return out


def flat_values(values: Mapping[str, Any]) -> dict:
  """{flat name: value} of a training_config.json's object, nested or flat (renamed keys under
  their current name), without validating it: what a resume compares with the recorded run."""
  out = {}
  for key, value in values.items():
    if key in _SECTIONS and isinstance(value, Mapping):
      for name, (section, field) in _flat_map().items():
        if section == key and field.name in value:
          out[name] = value[field.name]
    else:
      out[TrainingConfig.RENAMED_FLAT.get(key, key)] = value
  return out


_SECTIONS = ("data", "model", "optimizer", "runtime", "outputs")


# The paper's runs (section 3.1, appendix A.2): batch 256, 1M steps, lr 1e-4, 10k warmup; 90% of the
# steps at length 128 (20 predictions), then 512 (80 predictions). Ablations of section 5.1 keep the
# same schedule with another objective. "tiny_debug" is a seconds-long smoke run.
_flat = TrainingConfig.from_flat
TRAINING_PRESETS: dict[str, TrainingConfig] = {
    "bert_base_phase1": _flat(model_preset="bert_base", phase=1, max_seq_length=128,
                              max_predictions_per_seq=20),
    "bert_base_phase2": _flat(model_preset="bert_base", phase=2, max_seq_length=512,
                              max_predictions_per_seq=80, init_checkpoint="<phase-1 model_dir>"),
    "bert_large_phase1": _flat(model_preset="bert_large", phase=1),
    "bert_large_phase2": _flat(model_preset="bert_large", phase=2, max_seq_length=512,
                               max_predictions_per_seq=80, init_checkpoint="<phase-1 model_dir>"),
    "ablation_no_nsp": _flat(model_preset="bert_base", objective="mlm"),
    "ablation_ltr_no_nsp": _flat(model_preset="bert_base", objective="ltr"),
    "tiny_debug": _flat(model_preset="bert_tiny", train_batch_size=16, num_train_steps=100,
                        num_warmup_steps=10, learning_rate=1e-3, max_seq_length=64,
                        max_predictions_per_seq=10, checkpoint_every=50, log_every=10,
                        shuffle_buffer_size=1000),
}


def get_training_config(name: str, **overrides: Any) -> TrainingConfig:
  """Returns the named preset with field overrides by flat name (e.g. input_files, model_dir)."""
  if name not in TRAINING_PRESETS:
    raise ConfigError(f"unknown training preset {name!r}; expected one of {sorted(TRAINING_PRESETS)}")
  return TRAINING_PRESETS[name].override(**overrides)
