"""Pretraining config (defaults: BERT 3.1, A.2); each field a flag of scripts/run_pretraining.py."""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping

from bert_keras.configs.base import Config, ConfigError, SectionedConfig, field, require
from bert_keras.configs.model import ModelConfig, get_model_config

OBJECTIVES = ("mlm_nsp", "mlm", "ltr")
OPTIMIZERS = ("adamw", "lamb", "adam")
DECAYS = ("linear", "polynomial", "cosine", "constant")
DISTRIBUTIONS = ("default", "one_device", "mirrored", "multi_worker_mirrored", "tpu")
# Those Keras `fit` supports (fine-tuning, the pipeline, the component CLIs but the pretrainer's).
FINETUNE_DISTRIBUTIONS = ("default", "one_device", "mirrored")
PRECISIONS = ("float32", "mixed_bfloat16", "mixed_float16")


@dataclasses.dataclass(frozen=True)
class TrainingDataConfig(Config):
  """What the pretrainer reads (the batch's split into micro-batches: trainer.py)."""
  input_files: str = field("", "comma-separated globs of the training TFRecords; gpt_*: text lines")
  eval_input_files: str = field("", "globs of held-out TFRecords for MLM / NSP accuracy; empty: none")
  max_seq_length: int = field(128, "tokens per example; must equal the records' length")
  max_predictions_per_seq: int = field(20, "masked positions per example; must equal the records'")
  train_batch_size: int = field(256, "GLOBAL batch of one update (all replicas and micro-batches)")
  eval_batch_size: int = field(0, "batch of evaluation; 0: train_batch_size")
  shuffle_buffer_size: int = field(10000, "examples in the shuffle buffer of the training stream")
  cycle_length: int = field(8, "input files read in parallel by the interleave")
  dynamic_masking: bool = field(False, "re-mask each time an example is read (RoBERTa-style)")
  masked_lm_prob: float = field(0.15, "fraction of the tokens dynamic masking masks")
  mask_token_id: int = field(103, "id of [MASK] for dynamic masking (bert-base-uncased: 103)")
  special_token_ids: tuple[int, ...] = field((0, 100, 101, 102, 103), "ids dynamic masking never masks")
  vocab_size: int = field(0, "dynamic masking's random tokens are in [0, vocab_size); 0: the model's")
  vocab_file: str = field("", "vocab.txt copied to output_dir/export/; empty: summary.json's, if any")
  bpe_model: str = field("", "GPT-1 presets (gpt_*): the BPE model of scripts/train_bpe.py")
  corpora: str = field("", "gpt_*: embedded corpora read first: wikipedia,lee_background")
  RANGES = dict(max_seq_length="> 0", max_predictions_per_seq="(0, max_seq_length]",
                train_batch_size="> 0", eval_batch_size=">= 0", shuffle_buffer_size="> 0", cycle_length="> 0",
                masked_lm_prob="(0, 1)", mask_token_id=">= 0", vocab_size=">= 0")


@dataclasses.dataclass(frozen=True)
class TrainingModelConfig(Config):
  """Which encoder, with which heads and loss, from which weights."""
  model: str = field("bert_base", "model preset (bert_tiny ... bert_large, gpt_*)")
  model_overrides: Mapping[str, Any] = field({}, "ModelConfig fields over the preset's, a JSON object")
  objective: str = field("mlm_nsp", f"{'|'.join(OBJECTIVES)}: the paper's, MLM only, left-to-right")
  # A larger weight moves a small encoder's capacity to NSP, at a cost in MLM (studies/pretraining_evidence).
  nsp_loss_weight: float = field(1.0, "weight of the NSP cross-entropy in the loss (the paper: 1)")
  init_checkpoint: str = field("", "start from this checkpoint (phase 2: the phase-1 output_dir)")
  RANGES = dict(nsp_loss_weight=">= 0")
  CHOICES = dict(objective=OBJECTIVES)


@dataclasses.dataclass(frozen=True)
class OptimizerConfig(Config):
  """The update. Out of range is not harmless: a negative rate ascends, a negative clip skips clipping."""
  optimizer: str = field("adamw", f"{'|'.join(OPTIMIZERS)}: AdamW (the paper's), LAMB, Adam")
  learning_rate: float = field(1e-4, "peak learning rate, reached after the warmup")
  num_train_steps: int = field(1_000_000, "optimizer steps of the whole schedule (both phases)")
  num_warmup_steps: int = field(10_000, "steps of linear warmup from 0 to learning_rate")
  end_learning_rate: float = field(0.0, "learning rate at the end of the decay")
  decay: str = field("linear", f"decay after the warmup: {'|'.join(DECAYS)}")
  decay_power: float = field(1.0, "exponent of --decay=polynomial (1.0 for the others)")
  weight_decay_rate: float = field(0.01, "weight decay (not on LayerNorm weights or biases)")
  beta_1: float = field(0.9, "first-moment decay of Adam / AdamW / LAMB")
  beta_2: float = field(0.999, "second-moment decay of Adam / AdamW / LAMB")
  epsilon: float = field(1e-6, "epsilon of Adam / AdamW / LAMB")
  clip_global_norm: float = field(1.0, "clip the gradient to this global norm; 0: no clipping")
  gradient_accumulation_steps: int = field(1, "micro-batches summed into one update")
  phase: int = field(0, "0: the whole schedule; 1: its first phase1_fraction; 2: the rest")
  phase1_fraction: float = field(0.9, "fraction of num_train_steps in phase 1 (the paper: 0.9)")
  RANGES = dict(learning_rate="> 0", num_train_steps="> 0", num_warmup_steps=">= 0",
                end_learning_rate="[0, learning_rate]", decay_power="> 0", weight_decay_rate=">= 0",
                beta_1="[0, 1)", beta_2="[0, 1)", epsilon="> 0", clip_global_norm=">= 0",
                gradient_accumulation_steps="> 0", phase1_fraction="(0, 1)")
  CHOICES = dict(optimizer=OPTIMIZERS, decay=DECAYS, phase=(0, 1, 2))

  def validate(self):
    require(self.decay == "polynomial" or self.decay_power == 1.0,
            f"decay_power={self.decay_power!r} applies only to decay='polynomial' (decay="
            f"{self.decay!r}); expected 1.0 or --decay=polynomial", key="decay_power")


@dataclasses.dataclass(frozen=True)
class RuntimeConfig(Config):
  """Where and how the steps run."""
  distribution_strategy: str = field("default", f"tf.distribute strategy: {'|'.join(DISTRIBUTIONS)}")
  tpu: str = field("", "TPU address for --distribution_strategy=tpu (grpc://host:port or a name)")
  num_gpus: int = field(0, "GPUs: mirrored uses that many (0: all), one_device /gpu:0 when 1")
  mixed_precision: str = field("float32", f"Keras precision policy: {'|'.join(PRECISIONS)}")
  jit_compile: bool = field(False, "compile the train step with XLA")
  steps_per_execution: int = field(1, "train steps per call, capped at log_every/checkpoint_every/eval_every")
  seed: int = field(42, "random seed of initialisation, shuffling and dynamic masking")
  deterministic: bool = field(False, "deterministic TensorFlow ops (slower)")
  RANGES = dict(num_gpus=">= 0", steps_per_execution="> 0", seed=f"[0, {2**32 - 1}]")
  CHOICES = dict(distribution_strategy=DISTRIBUTIONS, mixed_precision=PRECISIONS)

  def validate(self):
    strategy = self.distribution_strategy
    require(strategy != "tpu" or self.tpu, "distribution_strategy='tpu' needs a tpu address (--tpu)",
            key="tpu")
    require(strategy != "one_device" or self.num_gpus <= 1, f"num_gpus={self.num_gpus} with "
            "distribution_strategy='one_device', which uses one device; expected 0 (the CPU) or 1 "
            "(/gpu:0), or --distribution_strategy=mirrored", key="num_gpus")


@dataclasses.dataclass(frozen=True)
class OutputsConfig(Config):
  """What the run writes, and how often."""
  output_dir: str = field("", "checkpoints, tensorboard/, history.jsonl, export/; a rerun resumes")
  checkpoint_every: int = field(1000, "steps between checkpoints")
  keep_checkpoints: int = field(3, "checkpoints kept in output_dir (older ones are deleted)")
  log_every: int = field(100, "steps between logged / TensorBoard training metrics")
  eval_every: int = field(0, "steps between evaluations on eval_input_files; 0: at the end only")
  eval_steps: int = field(20, "batches per evaluation")
  unigram_baseline_records: int = field(100_000, "training records read for the unigram baseline")
  RANGES = dict(checkpoint_every="> 0", keep_checkpoints="> 0", log_every="> 0", eval_every=">= 0",
                eval_steps="> 0", unigram_baseline_records="> 0")


@dataclasses.dataclass(frozen=True)
class TrainingConfig(SectionedConfig):
  """Everything `run_pretraining` needs, in five sections; written as output_dir/training_config.json."""
  data: TrainingDataConfig = TrainingDataConfig()
  model: TrainingModelConfig = TrainingModelConfig()
  optimizer: OptimizerConfig = OptimizerConfig()
  runtime: RuntimeConfig = RuntimeConfig()
  outputs: OutputsConfig = OutputsConfig()

  def validate(self) -> None:
    d, m, o = self.data, self.model, self.optimizer
    require(d.train_batch_size % o.gradient_accumulation_steps == 0, f"train_batch_size="
            f"{d.train_batch_size} is not divisible by gradient_accumulation_steps="
            f"{o.gradient_accumulation_steps}")
    require(o.phase != 2 or m.init_checkpoint, "phase=2 needs init_checkpoint (the phase-1 checkpoint)")
    require(m.objective != "ltr" or not d.dynamic_masking,
            "dynamic_masking does not apply to objective='ltr' (nothing is masked)")
    model = self.model_config()
    require(d.max_seq_length <= model.max_position_embeddings,
            f"max_seq_length={d.max_seq_length} exceeds max_position_embeddings="
            f"{model.max_position_embeddings} of model={m.model!r}; expected at most that many "
            "positions (or a model_overrides max_position_embeddings)", key="max_seq_length")
    if d.dynamic_masking:  # its tokens must be inside the embedding table, or a gather fails mid-run
      where = (f"the model's vocabulary (vocab_size={model.vocab_size} of model={m.model!r} and "
               "model_overrides)")
      require(d.vocab_size <= model.vocab_size, f"vocab_size={d.vocab_size} (dynamic masking's random "
              f"tokens) exceeds {where}; expected at most that, or 0 for the model's", key="vocab_size")
      require(d.mask_token_id < model.vocab_size, f"mask_token_id={d.mask_token_id} is outside {where}",
              key="mask_token_id")

  def masking_vocab_size(self) -> int:  # dynamic masking's random tokens are in [0, n)
    return self.data.vocab_size or self.model_config().vocab_size

  def model_config(self) -> ModelConfig:
    """The preset with the overrides, and causal attention for the LTR ablation."""
    overrides = dict(self.model.model_overrides)
    if self.model.objective == "ltr":
      overrides["attention"] = "causal"
    try:
      return get_model_config(self.model.model, **overrides)
    except ConfigError as e:
      raise (e.under("model_overrides") if e.key in overrides else e) from None

  def phase_steps(self) -> tuple[int, int]:  # [first, last) global steps of this run
    o = self.optimizer
    split = int(round(o.phase1_fraction * o.num_train_steps))
    return {0: (0, o.num_train_steps), 1: (0, split), 2: (split, o.num_train_steps)}[o.phase]
