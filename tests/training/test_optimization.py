"""WarmupDecaySchedule's polynomial decay: closed-form values, power 1 is the linear decay bit for bit,
serialization (schedule get_config, optimizer, TrainingConfig JSON) and bad powers named."""

import math

import keras
import numpy as np
import pytest

from bert_keras.errors import UserError
from bert_keras.training.optimization import WarmupDecaySchedule, create_optimizer
from bert_keras.configs.model import ConfigError
from bert_keras.configs.training import OptimizerConfig, TrainingConfig

PEAK, END, STEPS, WARMUP = 2e-3, 1e-5, 2000, 200
# Steps in the warmup, at its end, through the decay, at and past num_train_steps.
CHECK_STEPS = [0, 1, 100, 199, 200, 201, 500, 800, 1000, 1400, 1999, 2000, 2500]


def _values(schedule, steps=CHECK_STEPS):
  return np.array([float(schedule(s)) for s in steps], np.float64)


def _closed_form(power, steps=CHECK_STEPS):
  """Keras PolynomialDecay / Model Garden "polynomial" after a linear warmup, in float64."""
  out = []
  for s in steps:
    if s < WARMUP:
      out.append(PEAK * s / WARMUP)
    else:
      remaining = min(max((STEPS - s) / (STEPS - WARMUP), 0.0), 1.0)
      out.append(END + (PEAK - END) * remaining ** power)
  return np.array(out)


@pytest.mark.parametrize("power", [0.5, 2.0, 3.0])
def test_polynomial_matches_the_closed_form(power):
  schedule = WarmupDecaySchedule(PEAK, STEPS, WARMUP, decay="polynomial", end_learning_rate=END,
                                 decay_power=power)
  np.testing.assert_allclose(_values(schedule), _closed_form(power), rtol=2e-6, atol=1e-12)


def test_power_three_is_three_tenths_of_the_peak_a_third_into_the_decay():
  schedule = WarmupDecaySchedule(PEAK, STEPS, WARMUP, decay="polynomial", decay_power=3.0)
  assert float(schedule(800)) == pytest.approx(PEAK * (2 / 3) ** 3, rel=1e-6)  # 0.296 of the peak
  linear = WarmupDecaySchedule(PEAK, STEPS, WARMUP)
  assert float(schedule(800)) < 0.45 * float(linear(800))


def test_power_one_is_the_linear_decay_bit_for_bit():
  steps = list(range(0, STEPS + 50, 7))
  linear = WarmupDecaySchedule(PEAK, STEPS, WARMUP, decay="linear", end_learning_rate=END)
  poly = WarmupDecaySchedule(PEAK, STEPS, WARMUP, decay="polynomial", end_learning_rate=END,
                             decay_power=1.0)
  np.testing.assert_array_equal(_values(poly, steps), _values(linear, steps))
  # The default is still the linear decay, with the closed form of power 1.
  default = WarmupDecaySchedule(PEAK, STEPS, WARMUP, end_learning_rate=END)
  assert default.decay == "linear" and default.decay_power == 1.0
  np.testing.assert_array_equal(_values(default, steps), _values(linear, steps))
  np.testing.assert_allclose(_values(default), _closed_form(1.0), rtol=2e-6, atol=1e-12)


def test_schedule_and_optimizer_serialization_keep_the_power():
  schedule = WarmupDecaySchedule(PEAK, STEPS, WARMUP, decay="polynomial", decay_power=3.0)
  assert schedule.get_config()["decay_power"] == 3.0
  again = WarmupDecaySchedule.from_config(schedule.get_config())
  np.testing.assert_array_equal(_values(again), _values(schedule))
  optimizer = create_optimizer(OptimizerConfig(
      learning_rate=PEAK, num_train_steps=STEPS, num_warmup_steps=WARMUP, decay="polynomial",
      decay_power=3.0), fused=False)
  restored = keras.optimizers.deserialize(keras.optimizers.serialize(optimizer))
  assert isinstance(restored._learning_rate, WarmupDecaySchedule)
  assert restored._learning_rate.decay_power == 3.0
  np.testing.assert_array_equal(_values(restored._learning_rate), _values(schedule))


@pytest.mark.parametrize("power", [0.0, -1.0, math.nan, math.inf])
def test_bad_power_is_named(power):
  with pytest.raises(UserError, match=f"decay_power={power!r}"):
    WarmupDecaySchedule(PEAK, STEPS, WARMUP, decay="polynomial", decay_power=power)
  with pytest.raises(UserError, match=f"decay_power={power!r}"):
    create_optimizer(OptimizerConfig(learning_rate=PEAK, num_train_steps=STEPS,
                                     num_warmup_steps=WARMUP, decay="polynomial",
                                     decay_power=power))
  with pytest.raises(ConfigError, match="decay_power="):
    TrainingConfig.from_flat(decay="polynomial", decay_power=power)


def test_power_other_than_one_needs_the_polynomial_decay():
  with pytest.raises(UserError, match="decay_power=3.0 applies only to decay='polynomial'"):
    WarmupDecaySchedule(PEAK, STEPS, WARMUP, decay="linear", decay_power=3.0)
  with pytest.raises(ConfigError, match="decay_power=3.0 applies only"):
    TrainingConfig.from_flat(decay="cosine", decay_power=3.0)


def test_training_config_round_trip_and_optimizer(tmp_path):
  config = TrainingConfig.from_flat(model="bert_tiny", decay="polynomial", decay_power=3.0,
                          learning_rate=PEAK, num_train_steps=STEPS, num_warmup_steps=WARMUP)
  path = tmp_path / "training_config.json"
  path.write_text(config.to_json())
  loaded = TrainingConfig.from_file(str(path))
  assert loaded == config and loaded.optimizer.decay_power == 3.0
  # A config written before the field existed loads as the linear decay.
  old = config.to_dict()
  del old["optimizer"]["decay_power"]
  old["optimizer"]["decay"] = "linear"
  assert TrainingConfig.from_dict(old).optimizer.decay_power == 1.0
  # The pretrainer's optimizer gets the power.
  from bert_keras.training.pretrain import build_optimizer  # pylint: disable=import-outside-toplevel
  schedule = build_optimizer(loaded)._learning_rate
  assert isinstance(schedule, WarmupDecaySchedule) and schedule.decay_power == 3.0
  np.testing.assert_allclose(float(schedule(800)), PEAK * (2 / 3) ** 3, rtol=1e-6)
