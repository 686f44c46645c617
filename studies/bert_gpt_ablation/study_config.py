"""The schema of the ablation study (`python -m studies.bert_gpt_ablation.run_ablation`), whose
recipes are data in configs/: the ablations of BERT section 5.1 and GPT-1 section 5
(configs/ablations.json: the variants, those each task runs, the papers' claims as contrasts "claim,
variant A, variant B": the report gives A - B per seed) and the budgets (configs/studies/*.json,
described in its README.md).
"""

from __future__ import annotations

import dataclasses
import json
import os
from typing import Any, Mapping

from bert_keras.configs.base import Config, ConfigError, read_config_file
from configs import DIR, recipe_names, recipe_path


@dataclasses.dataclass(frozen=True)
class AblationVariant(Config):
  """One row of BERT Table 5 / GPT-1 Table 5. family "elmo": separately pretrained LTR and RTL
  BertEncoders, token states concatenated; size: a width multiplier of the study's model (5.2)."""

  name: str
  family: str
  objective: str
  attention: str = "bidirectional"
  pretrained: bool = True
  lm_coef: float = 0.0  # GPT-1 fine-tuning: L3 = L2 + lm_coef * L1 (0.5 in the paper)
  span_bilstm: bool = False  # BERT 5.1: "we added a randomly initialized BiLSTM on top"
  size: float = 1.0
  paper: str = ""

  RANGES = dict(lm_coef=">= 0", size="> 0")
  CHOICES = dict(family=("bert", "gpt", "elmo"), objective=("mlm_nsp", "mlm", "ltr", "lm"))

  def validate(self):
    if self.objective in ("ltr", "lm") and self.attention != "causal":
      raise ConfigError(f"{self.name}: objective={self.objective!r} needs attention='causal'")


_DATA = read_config_file(os.path.join(DIR, "ablations.json"), "ablations")
ABLATIONS = {v["name"]: AblationVariant.from_dict(v) for v in _DATA["variants"]}
# The feature-based tasks (PROBE_*) read frozen features of each pretrained model (BERT 5.3).
DEFAULT_TASK_VARIANTS = {k: tuple(v) for k, v in _DATA["task_variants"].items()}
PROBE_TASK_VARIANTS = {k: tuple(v) for k, v in _DATA["probe_task_variants"].items()}
CLAIMS = tuple(tuple(c) for c in _DATA["claims"])


def get_ablation(name: str) -> AblationVariant:
  if name not in ABLATIONS:
    raise ConfigError(f"unknown ablation {name!r}; expected one of {sorted(ABLATIONS)}")
  return ABLATIONS[name]


@dataclasses.dataclass(frozen=True)
class StudyConfig(Config):
  """One budget for every variant: vocabulary, corpus, steps, seeds and model size. The defaults
  (configs/studies/small.json) fit three seeds of every variant in a short CPU budget."""

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
  lee_train_pairs: int = 160  # of the 980 training pairs
  span_examples: int = 300
  span_per_sentence: int = 1  # questions per passage sentence (more: a larger span dev set)
  seeds: tuple = (0, 1, 2)
  zero_shot_points: int = 4  # GPT-1 Figure 2 right: probes along pretraining (0: none)
  tasks: Mapping[str, tuple] = dataclasses.field(default_factory=lambda: dict(DEFAULT_TASK_VARIANTS))
  layer_transfer_task: str = "polarity"  # GPT-1 Figure 2 left: k = 0..num_layers

  RANGES = dict({name: "> 0" for name in (
      "vocab_size", "max_seq_length", "hidden_size", "num_layers", "num_heads", "pretrain_steps",
      "pretrain_batch_size", "finetune_batch_size", "lee_train_pairs", "span_examples",
      "span_per_sentence")}, pretrain_warmup_steps="[0, pretrain_steps]")

  def validate(self):
    object.__setattr__(self, "seeds", tuple(int(s) for s in self.seeds))
    object.__setattr__(self, "tasks", {k: tuple(v) for k, v in self.tasks.items()})
    if not self.seeds:
      raise ConfigError("seeds must name at least one seed")
    if self.layer_transfer_task in PROBE_TASK_VARIANTS:
      raise ConfigError(f"layer_transfer_task={self.layer_transfer_task!r} is a frozen-feature "
                        "probe; layer transfer fine-tunes (GPT-1 Figure 2 left)")
    if self.layer_transfer_task and self.layer_transfer_task not in self.tasks:
      raise ConfigError(f"layer_transfer_task={self.layer_transfer_task!r} is not one of the "
                        f"study's tasks {sorted(self.tasks)}")
    study_tasks = (*DEFAULT_TASK_VARIANTS, *PROBE_TASK_VARIANTS)
    for task, variants in self.tasks.items():
      if task not in study_tasks:
        raise ConfigError(f"unknown study task {task!r}; expected one of {sorted(study_tasks)}")
      for v in variants:
        get_ablation(v)

  def only_variants(self, names) -> "StudyConfig":
    """The same budget running only `names`; tasks left without variants go, and GPT-1's layer
    transfer and zero-shot probes ride on `gpt1`."""
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
    """study_config.json: the fields and, for the reader, the variants run (`from_dict` skips them)."""
    variants = {n: ABLATIONS[n].to_dict() for n in sorted({v for vs in self.tasks.values() for v in vs})}
    return json.dumps({**self.to_dict(), "variants": variants}, indent=2, sort_keys=True)

  @classmethod
  def from_dict(cls, values: Mapping[str, Any]) -> "StudyConfig":
    if isinstance(values, Mapping):
      values = {k: v for k, v in values.items() if k != "variants"}
    return super().from_dict(values)


def get_study_config(name: str, **overrides: Any) -> StudyConfig:
  """configs/studies/<name>.json with field overrides."""
  return StudyConfig.from_file(recipe_path("studies", name)).replace(**overrides)


STUDY_PRESETS = {name: get_study_config(name) for name in recipe_names("studies")}
