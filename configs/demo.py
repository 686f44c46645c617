"""The pipeline's recipes: the main job (`make demo`, configs/pipelines/demo.yaml, whose comments
say why each value) and the end-to-end tests' slice of it."""

from __future__ import annotations

import copy
import os

from bert_keras.configs.base import read_config_file
from bert_keras.configs.pipeline import PipelineConfig
from configs import DIR

_RECIPE = read_config_file(os.path.join(DIR, "pipelines", "demo.yaml"), "PipelineConfig")
DEMO_PRETRAIN_STEPS = _RECIPE["pretraining"]["training"]["num_train_steps"]
_EPOCHS = 3.0  # the recipe's fine-tuning budget
LEE_SERVING_PEARSON = next(t["thresholds"]["pearson"]["lower_bound"] for t in _RECIPE["tasks"]
                           if t["task"] == "lee_similarity")


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
  """The end-to-end test's slice: a dozen Wikipedia articles, a few steps, tiny fine-tuning."""
  config = demo_config(pretrain_steps=4, finetune_epochs=1.0, max_documents=max_documents)
  pretraining = config.pretraining
  return config.replace(
      name="bert_smoke",
      pretraining=pretraining.replace(
          vocab_size=600, max_input_words=2000,
          data=pretraining.data.replace(max_seq_length=32, max_predictions_per_seq=5, dupe_factor=1),
          training=dict(pretraining.training, num_train_steps=4, num_warmup_steps=1,
                        train_batch_size=8, checkpoint_every=4, log_every=2, eval_every=2)),
      tasks=tuple(t.replace(task_config=t.task_config.replace(max_seq_length=32, train_batch_size=8),
                            max_train_examples=32, bases=("pretrained",), base_task_config={},
                            thresholds={})
                  for t in config.tasks))
