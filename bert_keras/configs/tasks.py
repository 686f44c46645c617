"""Fine-tuning task configs, one class per task family; defaults: the paper's (section 4, A.3)."""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping

from bert_keras.configs.base import Config, presets, require


@dataclasses.dataclass(frozen=True)
class TaskConfig(Config):
  task: str = "polarity"  # a registered task (bert_keras.tasks.get_task)
  max_seq_length: int = 128
  learning_rate: float = 2e-5
  train_batch_size: int = 32
  eval_batch_size: int = 64
  num_epochs: float = 3.0
  warmup_proportion: float = 0.1
  dropout_rate: float = 0.1  # of the head; the encoder keeps its own config's
  weight_decay_rate: float = 0.01
  seed: int = 0  # keras.utils.set_random_seed seeds numpy, whose seeds are 32-bit unsigned
  # Fine-tune all (4.1-4.4), or (5.3) a 2-layer BiLSTM (lstm_units per direction) over frozen feature_layers.
  approach: str = "fine_tuning"
  feature_layers: tuple = (-4, -3, -2, -1)
  lstm_units: int = 768
  dev_every: int = 5  # sets without an official split (polarity, lee_similarity): every k-th is dev
  RANGES = dict(max_seq_length=">= 8", train_batch_size="> 0", eval_batch_size="> 0",
                learning_rate="> 0", num_epochs="> 0", warmup_proportion="[0, 1)",
                dropout_rate="[0, 1)", seed=f"[0, {2**32 - 1}]", dev_every="> 0", lstm_units="> 0")
  CHOICES = dict(approach=("fine_tuning", "feature_based"))

  def validate(self):
    require(self.approach == "fine_tuning" or type(self) in (TaskConfig, TaggingTaskConfig),
            f"approach='feature_based': task {self.task!r} has no feature-based head", key="approach")
    layers = self.feature_layers  # flags give strings; floats and bools are not layer indices
    require(isinstance(layers, tuple), f"feature_layers={layers!r} must be a list of encoder layer indices",
            key="feature_layers")
    require(layers and all(type(i) in (int, str) and str(i).lstrip("-").isdigit() for i in layers),
            f"feature_layers={list(layers)!r} must be integer encoder layer indices, at least one, "
            "e.g. -4,-3,-2,-1", key="feature_layers")
    object.__setattr__(self, "feature_layers", tuple(int(i) for i in layers))
    given = [f for f in ("feature_layers", "lstm_units") if f in self.given()]
    require(self.approach == "feature_based" or not given, f"{', '.join(given)}: applies to "
            "approach='feature_based' only", key=given[0] if given else None)

  @classmethod
  def from_dict(cls, values: Mapping[str, Any]):
    """The class of the task in `values` (a recorded config.json), from the base."""
    if cls is TaskConfig and isinstance(values, Mapping):
      cls = task_config_class(values.get("task", cls.task))
    return super(TaskConfig, cls).from_dict(values)


@dataclasses.dataclass(frozen=True)
class SpanTaskConfig(TaskConfig):
  """Reading comprehension (sections 4.2, 4.3 and the released run_squad.py)."""
  doc_stride: int = 128
  max_query_length: int = 64
  n_best_size: int = 20
  max_answer_length: int = 30
  null_score_diff_threshold: float = 0.0  # SQuAD v2: "" when s_null - s_best > this
  RANGES = dict(doc_stride="> 0", max_query_length="> 0", n_best_size="> 0", max_answer_length="> 0")


@dataclasses.dataclass(frozen=True)
class TaggingTaskConfig(TaskConfig):
  """Sequence labelling (section 5.3): the scheme of the input files; the model trains on IOB2."""
  tagging_scheme: str = "iob1"
  CHOICES = dict(tagging_scheme=("iob1", "iob2"))


@dataclasses.dataclass(frozen=True)
class GPTTaskConfig(TaskConfig):
  """GPT-1 fine-tuning (gpt/<task>): loss L2 + lm_coef * L1 (3.2); lm_coef = 0: Table 5's no-aux-LM."""
  lm_coef: float = 0.5
  RANGES = dict(lm_coef=">= 0")


_FAMILIES = {"squad_v1": SpanTaskConfig, "squad_v2": SpanTaskConfig, "conll2003": TaggingTaskConfig}


def task_config_class(task: str) -> type:
  return GPTTaskConfig if task.startswith("gpt/") else _FAMILIES.get(task, TaskConfig)


TASK_PRESETS: dict[str, TaskConfig] = {
    name: task_config_class(v.get("task", name))(**{"task": name, **v})
    for name, v in presets()["tasks"].items()}


def get_task_config(name: str, **overrides: Any) -> TaskConfig:
  """The named preset with field overrides."""
  require(name in TASK_PRESETS, f"unknown task preset {name!r}; expected one of {sorted(TASK_PRESETS)}")
  return TASK_PRESETS[name].replace(**overrides)
