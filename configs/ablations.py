"""The ablations of BERT section 5.1 and GPT-1 section 5 as named configurations, and the budget of
the small-scale study that runs them (`python -m studies.bert_gpt_ablation.run_ablation`).

Every variant is data: which model family, which pretraining objective, which attention, whether it
is pretrained at all, the auxiliary-LM weight at fine-tuning, and (span tasks) a BiLSTM on top.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any, Mapping

from bert_keras.configs.base import Config, ConfigError

FAMILIES = ("bert", "gpt", "elmo")
OBJECTIVES = ("mlm_nsp", "mlm", "ltr", "lm")


@dataclasses.dataclass(frozen=True)
class AblationVariant(Config):
  """One row of BERT Table 5 / GPT-1 Table 5.

  family: "bert" (BertEncoder + BertPretrainer objective), "gpt" (GPTDecoder + LM), or "elmo"
  (separately pretrained LTR and RTL BertEncoders whose token states are concatenated).
  size: a hidden-size multiplier of the study's base model (model-size sweep, BERT section 5.2).
  """

  name: str
  family: str
  objective: str
  attention: str = "bidirectional"
  pretrained: bool = True
  lm_coef: float = 0.0  # GPT-1 fine-tuning: L3 = L2 + lm_coef * L1 (0.5 in the paper)
  span_bilstm: bool = False  # BERT 5.1: "we added a randomly initialized BiLSTM on top"
  size: float = 1.0
  paper: str = ""

  def __post_init__(self):
    if self.family not in FAMILIES:
      raise ConfigError(f"{self.name}: family={self.family!r}; expected one of {FAMILIES}")
    if self.objective not in OBJECTIVES:
      raise ConfigError(f"{self.name}: objective={self.objective!r}; expected one of {OBJECTIVES}")
    if self.objective in ("ltr", "lm") and self.attention != "causal":
      raise ConfigError(f"{self.name}: objective={self.objective!r} needs attention='causal'")
    if self.lm_coef < 0 or self.size <= 0:
      raise ConfigError(f"{self.name}: lm_coef={self.lm_coef} must be >= 0 and size={self.size} > 0")


ABLATIONS: dict[str, AblationVariant] = {v.name: v for v in [
    # BERT section 5.1, Table 5.
    AblationVariant("bert_base", "bert", "mlm_nsp", paper="BERT Table 5 'BERTBASE'"),
    AblationVariant("bert_no_nsp", "bert", "mlm", paper="BERT Table 5 'No NSP'"),
    AblationVariant("bert_no_pretraining", "bert", "mlm_nsp", pretrained=False,
                    paper="BERT, random init (the baseline 'pre-training helps' is measured against)"),
    AblationVariant("bert_ltr_no_nsp", "bert", "ltr", attention="causal",
                    paper="BERT Table 5 'LTR & No NSP'"),
    AblationVariant("bert_ltr_no_nsp_bilstm", "bert", "ltr", attention="causal", span_bilstm=True,
                    paper="BERT Table 5 '+ BiLSTM' (span tasks only)"),
    AblationVariant("elmo_ltr_rtl", "elmo", "ltr", attention="causal",
                    paper="BERT 5.1: separate LTR and RTL models, token states concatenated"),
    # GPT-1 section 5, Table 5.
    AblationVariant("gpt1", "gpt", "lm", attention="causal", lm_coef=0.5,
                    paper="GPT-1 Table 5 'Transformer w/ aux LM (full)'"),
    AblationVariant("gpt1_no_pretraining", "gpt", "lm", attention="causal", pretrained=False,
                    lm_coef=0.5, paper="GPT-1 Table 5 'Transformer w/o pre-training'"),
    AblationVariant("gpt1_no_aux_lm", "gpt", "lm", attention="causal", lm_coef=0.0,
                    paper="GPT-1 Table 5 'Transformer w/o aux LM'"),
    # Model size (BERT section 5.2, Table 6), over the small presets' scale.
    AblationVariant("gpt1_size_half", "gpt", "lm", attention="causal", lm_coef=0.5, size=0.5,
                    paper="BERT Table 6 / size sweep (smaller)"),
    AblationVariant("gpt1_size_double", "gpt", "lm", attention="causal", lm_coef=0.5, size=2.0,
                    paper="BERT Table 6 / size sweep (larger)"),
]}

# Which variants each study task runs. Span extraction is where BERT claims LTR hurts most.
DEFAULT_TASK_VARIANTS = {
    "polarity": ("bert_base", "bert_no_nsp", "bert_ltr_no_nsp", "gpt1", "gpt1_no_pretraining",
                 "gpt1_no_aux_lm", "gpt1_size_half", "gpt1_size_double"),
    "lee_similarity": ("bert_base", "bert_no_nsp", "gpt1", "gpt1_no_pretraining",
                       "gpt1_no_aux_lm"),
    "span": ("bert_base", "bert_ltr_no_nsp", "bert_ltr_no_nsp_bilstm", "elmo_ltr_rtl"),
}

# Feature-based tasks (BERT section 5.3): frozen features of each pretrained model, no fine-tuning.
# lee_probe: cosine of mean-pooled document features vs the 1,225 human ratings (Spearman);
# polarity_probe: logistic regression on mean-pooled sentence features, 10-fold CV over all 200.
PROBE_TASK_VARIANTS = {
    "lee_probe": ("bert_base", "bert_no_nsp", "bert_ltr_no_nsp", "elmo_ltr_rtl",
                  "bert_no_pretraining", "gpt1", "gpt1_no_pretraining", "gpt1_size_half",
                  "gpt1_size_double"),
    "polarity_probe": ("bert_base", "bert_no_nsp", "bert_ltr_no_nsp", "elmo_ltr_rtl",
                       "bert_no_pretraining", "gpt1", "gpt1_no_pretraining", "gpt1_size_half",
                       "gpt1_size_double"),
}
STUDY_TASKS = (*DEFAULT_TASK_VARIANTS, *PROBE_TASK_VARIANTS)

# The papers' claims as paired contrasts (claim, variant A, variant B): the report gives A - B per
# seed (same seed = same data order, vocabulary and dev split) for every task both were run on.
CLAIMS = (
    ("pre-training helps (BERT)", "bert_base", "bert_no_pretraining"),
    ("pre-training helps (GPT-1 Table 5)", "gpt1", "gpt1_no_pretraining"),
    ("MLM beats LTR (BERT Table 5)", "bert_no_nsp", "bert_ltr_no_nsp"),
    ("NSP helps (BERT Table 5)", "bert_base", "bert_no_nsp"),
    ("+BiLSTM helps LTR (BERT Table 5)", "bert_ltr_no_nsp_bilstm", "bert_ltr_no_nsp"),
    ("MLM beats ELMo-style LTR+RTL (BERT 5.1)", "bert_no_nsp", "elmo_ltr_rtl"),
    ("RTL half helps LTR (ELMo-style vs LTR)", "elmo_ltr_rtl", "bert_ltr_no_nsp"),
    ("larger is better (2x vs 0.5x width)", "gpt1_size_double", "gpt1_size_half"),
    ("aux LM helps (GPT-1 Table 5)", "gpt1", "gpt1_no_aux_lm"),
)


def get_ablation(name: str) -> AblationVariant:
  if name not in ABLATIONS:
    raise ConfigError(f"unknown ablation {name!r}; expected one of {sorted(ABLATIONS)}")
  return ABLATIONS[name]


@dataclasses.dataclass(frozen=True)
class StudyConfig(Config):
  """One fixed budget for every variant: same vocabulary, corpus, steps, seeds and model size.

  The defaults are deliberately tiny so three seeds of every variant fit a short CPU budget: a
  2-layer, 64-wide model (size 1.0), an 800-piece BPE vocabulary, 32-token sequences, 60
  pretraining steps of 16 sequences, 3 fine-tuning epochs.
  """

  corpora: tuple = ("lee_background", "wikipedia")
  vocab_size: int = 800
  max_seq_length: int = 32
  hidden_size: int = 64
  num_layers: int = 2
  num_heads: int = 2
  pretrain_steps: int = 60
  pretrain_batch_size: int = 16
  pretrain_learning_rate: float = 1e-3
  pretrain_warmup_steps: int = 6
  finetune_learning_rate: float = 5e-4
  finetune_batch_size: int = 16
  finetune_epochs: float = 3.0
  lee_train_pairs: int = 160  # of the 980 training pairs, to keep the budget
  span_examples: int = 300
  span_per_sentence: int = 1  # questions per passage sentence (more = a larger span dev set)
  seeds: tuple = (0, 1, 2)
  zero_shot_points: int = 4  # GPT-1 Figure 2 right: probes along pretraining (0 = off)
  tasks: Mapping[str, tuple] = dataclasses.field(
      default_factory=lambda: dict(DEFAULT_TASK_VARIANTS))
  layer_transfer_task: str = "polarity"  # GPT-1 Figure 2 left: k = 0..num_layers

  RENAMED_KEYS = {"seq_length": "max_seq_length"}  # the name of the other configs

  def __post_init__(self):
    object.__setattr__(self, "corpora", tuple(self.corpora))
    object.__setattr__(self, "seeds", tuple(int(s) for s in self.seeds))
    object.__setattr__(self, "tasks", {k: tuple(v) for k, v in dict(self.tasks).items()})
    if not 0 <= self.pretrain_warmup_steps <= self.pretrain_steps:
      raise ConfigError(f"pretrain_warmup_steps={self.pretrain_warmup_steps} must be in "
                        f"[0, pretrain_steps={self.pretrain_steps}]")
    for name in ("vocab_size", "max_seq_length", "hidden_size", "num_layers", "num_heads",
                 "pretrain_steps", "pretrain_batch_size", "finetune_batch_size", "lee_train_pairs",
                 "span_examples", "span_per_sentence"):
      value = getattr(self, name)
      if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise ConfigError(f"{name}={value!r} must be a positive integer")
    if not self.seeds:
      raise ConfigError("seeds must name at least one seed")
    if self.layer_transfer_task in PROBE_TASK_VARIANTS:
      raise ConfigError(f"layer_transfer_task={self.layer_transfer_task!r} is a frozen-feature "
                        "probe; layer transfer fine-tunes (GPT-1 Figure 2 left)")
    if self.layer_transfer_task and self.layer_transfer_task not in self.tasks:
      raise ConfigError(f"layer_transfer_task={self.layer_transfer_task!r} is not one of the "
                        f"study's tasks {sorted(self.tasks)}")
    for task, variants in self.tasks.items():
      if task not in STUDY_TASKS:
        raise ConfigError(f"unknown study task {task!r}; expected one of {sorted(STUDY_TASKS)}")
      for v in variants:
        get_ablation(v)

  def only_variants(self, names) -> "StudyConfig":
    """The same budget running only `names` (e.g. to re-measure one variant after a fix).

    Tasks left without variants are dropped; GPT-1's layer transfer and zero-shot probes ride on
    the `gpt1` variant, so they stay only if `gpt1` is kept (in the layer-transfer task).
    """
    names = list(dict.fromkeys(names))
    for name in names:
      get_ablation(name)
    measured = {v for vs in self.tasks.values() for v in vs}
    missing = [n for n in names if n not in measured]
    if missing:
      raise ConfigError(f"variants {missing} are not run by this study; it runs "
                        f"{sorted(measured)}")
    tasks = {t: tuple(v for v in vs if v in names) for t, vs in self.tasks.items()}
    tasks = {t: vs for t, vs in tasks.items() if vs}
    transfer = self.layer_transfer_task
    if transfer and "gpt1" not in tasks.get(transfer, ()):
      transfer = ""
    zero_shot = self.zero_shot_points if "gpt1" in names else 0
    return self.replace(tasks=tasks, layer_transfer_task=transfer, zero_shot_points=zero_shot)

  def to_json(self) -> str:
    """The study's record (study_config.json): its fields and, for the reader, the variants it
    runs (derived data: `from_dict` ignores them)."""
    variants = {n: ABLATIONS[n].to_dict()
                for n in sorted({v for vs in self.tasks.values() for v in vs})}
    return json.dumps({**self.to_dict(), "variants": variants}, indent=2, sort_keys=True)

  @classmethod
  def from_dict(cls, values: Mapping[str, Any]) -> "StudyConfig":
    if isinstance(values, Mapping):
      values = {k: v for k, v in values.items() if k != "variants"}
    return super().from_dict(values)


# The variants of the "pretraining" budget: pre-trained vs not (both families), aux LM vs not,
# MLM (with and without NSP) vs LTR, on classification and on span extraction.
PRETRAINING_TASK_VARIANTS = {
    "span": ("bert_base", "bert_no_nsp", "bert_ltr_no_nsp", "bert_no_pretraining"),
    "polarity": ("bert_base", "bert_no_nsp", "bert_ltr_no_nsp", "bert_no_pretraining", "gpt1",
                 "gpt1_no_pretraining", "gpt1_no_aux_lm"),
}

# Named study budgets: "smoke" is for tests (seconds), "small" the default (minutes), "pretraining"
# the smallest budget at which the pretrained models have actually learned something (LM loss well
# below its start): ~0.7 epochs of the corpora, 2-3x the windows per step of "small" and 7x the
# steps. It left every variant at chance (polarity 0.42-0.49 on 40 dev sentences, span exact
# match 0); studies/bert_gpt_ablation/ now reports the `signal` budget below.
STUDY_PRESETS = {
    "small": StudyConfig(),
    "pretraining": StudyConfig(vocab_size=1000, max_seq_length=48, pretrain_steps=400,
                               pretrain_batch_size=32, pretrain_warmup_steps=40,
                               finetune_epochs=8.0, zero_shot_points=2,
                               span_examples=400, span_per_sentence=3, seeds=(0, 1),
                               tasks=dict(PRETRAINING_TASK_VARIANTS)),
    "smoke": StudyConfig(corpora=("lee_background",), vocab_size=300, max_seq_length=24,
                         hidden_size=16, num_layers=1, num_heads=2, pretrain_steps=6, pretrain_batch_size=8,
                         pretrain_warmup_steps=1,
                         finetune_epochs=0.5, lee_train_pairs=16, span_examples=24, seeds=(0,),
                         zero_shot_points=2),
}

# "signal": the smallest budget found whose numbers separate the variants (studies/bert_gpt_ablation/).
# bert_tiny width (2 x 128), 64-piece sequences (cheaper steps), 600 pretraining steps of 32, and
# evaluations with little variance: frozen-feature probes over every rated Lee pair and all 200
# polarity sentences (BERT 5.3), span extraction scored by token F1 on a 4x larger span set, and
# fine-tuned polarity only where fine-tuning is the ablation (GPT-1's aux LM, layers transferred).
# "signal" runs the core variants (4 pretrained models per seed); "signal_extra" the ELMo-style,
# +BiLSTM and model-size variants (4 more: LTR again, RTL, GPT-1 at 0.5x and 2x width).
SIGNAL_TASK_VARIANTS = {
    "lee_probe": ("bert_base", "bert_no_nsp", "bert_ltr_no_nsp", "bert_no_pretraining", "gpt1",
                  "gpt1_no_pretraining"),
    "polarity_probe": ("bert_base", "bert_no_nsp", "bert_ltr_no_nsp", "bert_no_pretraining",
                       "gpt1", "gpt1_no_pretraining"),
    "span": ("bert_base", "bert_no_nsp", "bert_ltr_no_nsp", "bert_no_pretraining"),
    "polarity": ("gpt1", "gpt1_no_pretraining", "gpt1_no_aux_lm"),
}
STUDY_PRESETS["signal"] = StudyConfig(
    vocab_size=1000, max_seq_length=64, hidden_size=128, num_layers=2, num_heads=2,
    pretrain_steps=600, pretrain_batch_size=32, pretrain_warmup_steps=60,
    pretrain_learning_rate=1e-3, finetune_learning_rate=5e-4, finetune_batch_size=16,
    finetune_epochs=6.0, span_examples=800, span_per_sentence=6, seeds=(0, 1),
    zero_shot_points=3, tasks=dict(SIGNAL_TASK_VARIANTS))
STUDY_PRESETS["signal_extra"] = STUDY_PRESETS["signal"].replace(
    zero_shot_points=0, layer_transfer_task="",
    tasks={"lee_probe": ("elmo_ltr_rtl", "gpt1_size_half", "gpt1_size_double"),
           "polarity_probe": ("elmo_ltr_rtl", "gpt1_size_half", "gpt1_size_double"),
           "span": ("bert_ltr_no_nsp_bilstm", "elmo_ltr_rtl")})

# The GPT-1 half of "pretraining" alone, to run as separate processes next to the whole study on a
# busy machine (then --merge; a measurement present in two runs is kept once).
STUDY_PRESETS["pretraining_gpt"] = STUDY_PRESETS["pretraining"].replace(
    tasks={"polarity": ("gpt1", "gpt1_no_pretraining", "gpt1_no_aux_lm")})


def get_study_config(name: str, **overrides: Any) -> StudyConfig:
  if name not in STUDY_PRESETS:
    raise ConfigError(f"unknown study preset {name!r}; expected one of {sorted(STUDY_PRESETS)}")
  return STUDY_PRESETS[name].replace(**overrides)
