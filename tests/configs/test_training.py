"""TrainingConfig nested by concern: the flat names (flags) map onto the sections, every field is a
flag, and flat JSON written before the nesting (and the old names) still loads, with a warning."""

import json
import os
import subprocess
import sys
import warnings

import pytest

from bert_keras.configs.base import ConfigError
from bert_keras.configs.training import TrainingConfig, flat_values, get_training_config

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FLAT_JSON = os.path.join(ROOT, "tests", "configs", "fixtures", "training_config_flat.json")


def test_sections_and_flat_names():
  config = TrainingConfig.from_flat(model_preset="bert_tiny", optimizer="lamb", max_seq_length=64,
                                    mixed_precision="mixed_bfloat16", model_dir="m")
  assert (config.data.max_seq_length, config.model.model_preset) == (64, "bert_tiny")
  assert (config.optimizer.type, config.runtime.mixed_precision) == ("lamb", "mixed_bfloat16")
  assert config.outputs.model_dir == "m"
  assert config.flat("optimizer") == "lamb" and config.to_flat()["max_seq_length"] == 64
  assert TrainingConfig.from_flat(config.to_flat()) == config
  assert sorted(config.to_dict()) == ["data", "model", "optimizer", "outputs", "runtime"]
  assert len(TrainingConfig.flat_fields()) == 49  # every field, each under one flat name


def test_unknown_flat_name_is_named():
  with pytest.raises(ConfigError, match="unknown key 'num_train_step' in TrainingConfig"):
    get_training_config("tiny_debug", num_train_step=3)


def test_flat_json_written_before_the_nesting_loads_with_a_warning():
  """fixtures/training_config_flat.json: a training_config.json as run_pretraining wrote it before
  the nesting (get_training_config("tiny_debug", ..., precision="mixed_bfloat16",
  distribution="one_device").to_json())."""
  with pytest.warns(FutureWarning) as caught:
    config = TrainingConfig.from_json_file(FLAT_JSON)
  messages = " ".join(str(w.message) for w in caught)
  assert "flat keys" in messages and "'precision' is deprecated" in messages
  assert "'distribution' is deprecated" in messages
  assert config == get_training_config(
      "tiny_debug", input_files="data/pretraining-*.tfrecord", model_dir="out/tiny",
      model_overrides={"vocab_size": 8000}, mixed_precision="mixed_bfloat16",
      distribution_strategy="one_device")
  with open(FLAT_JSON, encoding="utf-8") as f:
    assert flat_values(json.load(f)) == config.to_flat()  # what a resume compares
  assert flat_values(json.loads(config.to_json())) == config.to_flat()


def test_nested_json_loads_without_a_warning(tmp_path):
  config = get_training_config("tiny_debug", input_files="x")
  with warnings.catch_warnings():
    warnings.simplefilter("error")
    assert TrainingConfig.from_dict(json.loads(config.to_json())) == config


def test_a_bad_flag_value_is_named_by_its_field():
  """run_pretraining's config check names the field of a bad flag value, before TensorFlow."""
  driver = ("import runpy, sys; sys.modules['tensorflow'] = None; "
            "sys.argv = ['run_pretraining.py', '--mixed_precision=float16', "
            "'--output_dir=/nonexistent/never_written']; "
            f"runpy.run_path({os.path.join(ROOT, 'scripts', 'run_pretraining.py')!r}, "
            "run_name='__main__')")
  result = subprocess.run([sys.executable, "-c", driver], cwd=ROOT, capture_output=True, text=True,
                          timeout=240, env=dict(os.environ, PYTHONPATH=ROOT))
  assert result.returncode == 2, result.stderr[-2000:]
  assert "mixed_precision='float16'" in result.stderr.splitlines()[-1]
