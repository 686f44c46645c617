"""The pipeline's recipes: `make demo` (pipelines/demo.yaml) and the end-to-end tests' (smoke.yaml)."""

from __future__ import annotations

import copy
import os

from bert_keras.configs.base import read_config_file, updated
from bert_keras.configs.pipeline import PipelineConfig
from configs import DIR

_RECIPE = read_config_file(os.path.join(DIR, "pipelines", "demo.yaml"), "PipelineConfig")
DEMO_PRETRAIN_STEPS = _RECIPE["pretraining"]["training"]["num_train_steps"]
_EPOCHS = 3.0  # the recipe's fine-tuning budget


def demo_config(pretrain_steps: int = DEMO_PRETRAIN_STEPS, finetune_epochs: float = _EPOCHS,
                max_documents: int = 0) -> PipelineConfig:
  """The recipe with the embedded data's paths, at this budget (every epoch count scaled)."""
  from bert_keras import resources  # pylint: disable=import-outside-toplevel

  values = copy.deepcopy(_RECIPE)
  values["corpus"].update(wikipedia_dumps=[resources.wikipedia_dump_path()],
                          max_documents=max_documents)
  values["checkpoint_dir"] = resources.minilm_dir()
  values["pretraining"]["training"].update(
      num_train_steps=pretrain_steps, num_warmup_steps=max(1, pretrain_steps // 10),
      checkpoint_every=max(pretrain_steps, 1), log_every=max(1, min(25, pretrain_steps // 10)),
      eval_every=max(1, pretrain_steps // 5))
  for task in values["tasks"]:
    for config in (task["task_config"], *task["base_task_config"].values()):
      if "num_epochs" in config:
        config["num_epochs"] = config["num_epochs"] * finetune_epochs / _EPOCHS
  return PipelineConfig.from_dict(values)


def smoke_config(max_documents: int = 12) -> PipelineConfig:
  smoke = read_config_file(os.path.join(DIR, "pipelines", "smoke.yaml"), "smoke")
  return PipelineConfig.from_dict(updated(demo_config(4, 1.0, max_documents).to_dict(), smoke))
