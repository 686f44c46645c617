"""Shared test harness for layers and models: build, call, one training step, save/load."""

import os

import keras
import numpy as np


def random_inputs(batch=2, seq=16, vocab_size=100, num_padding=0, seed=0):
  rng = np.random.default_rng(seed)
  ids = rng.integers(5, vocab_size, size=(batch, seq)).astype("int32")
  mask = np.ones((batch, seq), "int32")
  if num_padding:
    mask[:, -num_padding:] = 0
    ids[:, -num_padding:] = 0
  types = np.zeros((batch, seq), "int32")
  types[:, seq // 2:] = 1
  return {"input_word_ids": ids, "input_mask": mask, "input_type_ids": types}


def assert_save_load_round_trip(model, inputs, tmp_path, key):
  """Saves a `.keras` file, loads it, and checks the output `key` is unchanged."""
  path = os.path.join(str(tmp_path), "model.keras")
  expected = keras.ops.convert_to_numpy(model(inputs, training=False)[key])
  model.save(path)
  restored = keras.saving.load_model(path)
  actual = keras.ops.convert_to_numpy(restored(inputs, training=False)[key])
  np.testing.assert_allclose(actual, expected, atol=1e-6)
  return restored


def assert_config_round_trip(model):
  config = model.get_config()
  clone = model.__class__.from_config(config)
  assert clone.get_config() == config
  return clone
