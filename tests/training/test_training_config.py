"""TrainingConfig: validation with values in the messages, recipes, JSON round trip, phases."""

import pytest

from bert_keras.configs.model import ConfigError
from bert_keras.configs.training import TrainingConfig
from configs import recipe_names, recipe_path


def get_training_config(name, **overrides):
  """The training recipe configs/training/<name>.json with flat-name overrides."""
  return TrainingConfig.from_file(recipe_path("training", name)).override(**overrides)


def test_defaults_are_the_papers_optimizer():
  c = TrainingConfig.from_flat()
  o = c.optimizer
  assert (o.learning_rate, o.beta_1, o.beta_2, o.epsilon) == (1e-4, 0.9, 0.999, 1e-6)
  assert (o.weight_decay_rate, o.num_warmup_steps, o.clip_global_norm) == (0.01, 10_000, 1.0)
  assert o.decay == "linear" and o.optimizer == "adamw"


@pytest.mark.parametrize("changes, message", [
    (dict(objective="bidi"), "objective='bidi'"),
    (dict(train_batch_size=10, gradient_accumulation_steps=4), "not divisible"),
    (dict(phase=2), "init_checkpoint"),
    (dict(distribution_strategy="tpu"), "tpu address"),
    (dict(mixed_precision="float16"), "mixed_precision='float16'"),
    (dict(steps_per_execution=0), "steps_per_execution=0"),
    (dict(model="bert_huge"), "bert_huge"),
    (dict(objective="ltr", dynamic_masking=True), "dynamic_masking"),
])
def test_invalid_values_are_named(changes, message):
  with pytest.raises(ConfigError, match=message):
    TrainingConfig.from_flat(**changes)


def test_json_round_trip(tmp_path):
  c = get_training_config("tiny_debug", model_overrides={"vocab_size": 99}, input_files="a*")
  path = tmp_path / "c.json"
  path.write_text(c.to_json())
  assert TrainingConfig.from_file(str(path)) == c
  path.write_text('{"optimizer": {"learning_rate": 1, "nope": 2}}')
  with pytest.raises(ConfigError, match="nope"):
    TrainingConfig.from_file(str(path))


def test_phases_split_the_schedule_90_10():
  c = TrainingConfig.from_flat(num_train_steps=1000)
  assert c.phase_steps() == (0, 1000)
  assert c.override(phase=1).phase_steps() == (0, 900)
  assert c.override(phase=2, init_checkpoint="x").phase_steps() == (900, 1000)


def test_presets_and_ltr_is_causal():
  for name in recipe_names("training"):
    assert get_training_config(name).model_config().vocab_size > 0
  assert get_training_config("ablation_ltr_no_nsp").model_config().attention == "causal"
  assert get_training_config("bert_base_phase2").data.max_seq_length == 512
