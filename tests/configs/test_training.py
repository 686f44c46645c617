"""TrainingConfig nested by concern: the flat names (flags) map onto the sections, every field is a
flag, JSON is read nested only, and the recipes of configs/training/ are the paper's runs."""

import json

import pytest

from bert_keras.configs.base import ConfigError
from bert_keras.configs.training import TrainingConfig
from configs import recipe_path


def _recipe(name, **overrides):
  return TrainingConfig.from_file(recipe_path("training", name)).override(**overrides)


def test_sections_and_flat_names():
  config = TrainingConfig.from_flat(model="bert_tiny", optimizer="lamb", max_seq_length=64,
                                    mixed_precision="mixed_bfloat16", output_dir="m")
  assert (config.data.max_seq_length, config.model.model) == (64, "bert_tiny")
  assert (config.optimizer.optimizer, config.runtime.mixed_precision) == ("lamb", "mixed_bfloat16")
  assert config.outputs.output_dir == "m"
  assert config.to_flat()["optimizer"] == "lamb" and config.to_flat()["max_seq_length"] == 64
  assert TrainingConfig.from_flat(config.to_flat()) == config
  assert sorted(config.to_dict()) == ["data", "model", "optimizer", "outputs", "runtime"]
  assert len(TrainingConfig.sections()) == 51  # every field, each under one flat name
  assert TrainingConfig.flat_values(json.loads(config.to_json())) == config.to_flat()  # a resume


@pytest.mark.parametrize("values, needle", [
    ({"num_train_steps": 3}, "num_train_steps: unknown key in TrainingConfig"),  # flat: no more
    ({"runtime": {"precision": "float32"}}, "runtime.precision: unknown key in RuntimeConfig"),
    ({"runtime": {"distribution": "default"}}, "runtime.distribution: unknown key"),
])
def test_flat_and_old_names_are_unknown_keys(values, needle):
  with pytest.raises(ConfigError) as info:
    TrainingConfig.from_dict(values)
  assert str(info.value).startswith(needle), info.value


def test_unknown_flat_name_is_named():
  with pytest.raises(ConfigError, match="num_train_step: unknown key in TrainingConfig"):
    _recipe("tiny_debug", num_train_step=3)


def test_recipes_are_the_papers_runs():
  phase2 = _recipe("bert_base_phase2")
  assert (phase2.optimizer.phase, phase2.data.max_seq_length) == (2, 512)
  assert phase2.data.max_predictions_per_seq == 80 and phase2.model.model == "bert_base"
  tiny = _recipe("tiny_debug")
  assert (tiny.model.model, tiny.data.train_batch_size, tiny.optimizer.num_train_steps,
          tiny.optimizer.learning_rate, tiny.data.max_seq_length) == ("bert_tiny", 16, 100, 1e-3, 64)
  assert _recipe("ablation_no_nsp").model.objective == "mlm"
