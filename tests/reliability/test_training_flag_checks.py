"""run_pretraining's flags and TrainingConfig: unknown model overrides, dynamic masking's ids against
the model's vocabulary, the range of every numeric field, a --help that explains each flag, and a
module docstring whose quickstart matches the data pipeline. Errors name the field (= flag) and value
and come before TensorFlow loads."""

import fnmatch
import json
import os
import re
import shlex
import subprocess
import sys

import pytest

from bert_keras.configs.pretraining_data import PretrainingDataConfig
from bert_keras.configs.model import ConfigError, ModelConfig, get_model_config
from bert_keras.configs.training import DECAYS, DISTRIBUTIONS, OBJECTIVES, OPTIMIZERS, PRECISIONS
from bert_keras.configs.training import TrainingConfig
from tests.reliability import bad_inputs as B


def _run_without_tensorflow(*args):
  """scripts/run_pretraining.py with TensorFlow unimportable: flag checks must not need it."""
  argv = ["run_pretraining.py", *args]
  driver = ("import runpy, sys; sys.modules['tensorflow'] = None; "
            f"sys.argv = {argv!r}; "
            f"runpy.run_path({os.path.join(B.SCRIPTS, 'run_pretraining.py')!r}, run_name='__main__')")
  return subprocess.run([sys.executable, "-c", driver], cwd=B.ROOT, capture_output=True, text=True,
                        timeout=240, env=dict(os.environ, PYTHONPATH=B.ROOT))


# === Unknown model overrides ===

def test_unknown_model_override_names_the_key_and_the_fields():
  with pytest.raises(ConfigError, match=r"^model_overrides.nope: unknown key in ModelConfig") as info:
    TrainingConfig.from_flat(model_overrides={"nope": 1, "num_layers": 1})
  assert "num_layers" in str(info.value) and "vocab_size" in str(info.value)
  with pytest.raises(ConfigError, match=r"num_layer: unknown key .*'num_layers'"):
    get_model_config("bert_tiny", num_layer=1)
  with pytest.raises(ConfigError, match="nope"):
    ModelConfig().replace(nope=1)


def test_unknown_model_override_in_config_json_names_the_file(tmp_path):
  path = tmp_path / "training_config.json"
  path.write_text(json.dumps({"model": {"model": "bert_tiny", "model_overrides": {"nope": 1}}}))
  with pytest.raises(ConfigError, match=r"training_config.json: model_overrides.nope: unknown key"):
    TrainingConfig.from_file(str(path))


def test_unknown_model_override_flag_is_one_error_line_before_tensorflow():
  B.user_error_line(_run_without_tensorflow('--model_overrides={"nope": 1}',
                                            "--output_dir=/nonexistent/never_written"),
                    "model_overrides.nope: unknown key in ModelConfig", "'num_layers'")


# === Dynamic masking against the model's vocabulary ===

def test_masking_vocab_size_defaults_to_the_models():
  c = TrainingConfig.from_flat(model="bert_tiny", dynamic_masking=True,
                     model_overrides={"vocab_size": 8000})
  assert c.data.vocab_size == 0 and c.masking_vocab_size() == 8000
  assert c.override(vocab_size=5000).masking_vocab_size() == 5000
  assert TrainingConfig.from_flat(dynamic_masking=True).masking_vocab_size() == 30522


@pytest.mark.parametrize("changes, needles", [
    (dict(vocab_size=40000), ["vocab_size=40000", "vocab_size=30522"]),
    (dict(vocab_size=30522, model_overrides={"vocab_size": 8000}), ["vocab_size=30522", "8000"]),
    (dict(mask_token_id=30522), ["mask_token_id=30522", "30522"]),
    (dict(model_overrides={"vocab_size": 100}), ["mask_token_id=103", "vocab_size=100"]),
    (dict(mask_token_id=-1), ["mask_token_id=-1"]),
    (dict(vocab_size=-5), ["vocab_size=-5"]),
])
def test_masking_ids_outside_the_model_vocabulary_are_refused(changes, needles):
  B.raises(lambda: TrainingConfig.from_flat(dynamic_masking=True, **changes), *needles)


def test_dynamic_masking_draws_from_the_models_vocab_size():
  """The input pipeline's random replacement tokens (make_dataset reads this) with vocab_size 0."""
  config = TrainingConfig.from_flat(model="bert_tiny", dynamic_masking=True,
                                    model_overrides={"vocab_size": 8000})
  assert config.masking_vocab_size() == 8000


# === Ranges of the numeric fields ===

@pytest.mark.parametrize("changes, needle", [
    (dict(learning_rate=-1.0), "learning_rate=-1.0"),
    (dict(learning_rate=0.0), "learning_rate=0.0"),
    (dict(epsilon=-1.0), "epsilon=-1.0"),
    (dict(epsilon=0.0), "epsilon=0.0"),
    (dict(beta_1=1.5), "beta_1=1.5"),
    (dict(beta_1=1.0), "beta_1=1.0"),
    (dict(beta_2=-1.0), "beta_2=-1.0"),
    (dict(weight_decay_rate=-0.5), "weight_decay_rate=-0.5"),
    (dict(end_learning_rate=1e-3), "end_learning_rate=0.001"),
    (dict(end_learning_rate=-1e-5), "end_learning_rate=-1e-05"),
    (dict(num_gpus=-3), "num_gpus=-3"),
    (dict(clip_global_norm=-1.0), "clip_global_norm=-1.0"),
    (dict(seed=-1), "seed=-1"),
    (dict(seed=2**32), "seed=4294967296"),
    (dict(num_warmup_steps=-1), "num_warmup_steps=-1"),
    (dict(eval_every=-1), "eval_every=-1"),
    (dict(eval_batch_size=-2), "eval_batch_size=-2"),
    (dict(unigram_baseline_records=0), "unigram_baseline_records=0"),
    (dict(unigram_baseline_records=-1), "unigram_baseline_records=-1"),
    (dict(max_seq_length=16, max_predictions_per_seq=20), "max_predictions_per_seq=20"),
    (dict(distribution_strategy="one_device", num_gpus=2), "num_gpus=2"),
])
def test_out_of_range_values_are_named(changes, needle):
  B.raises(lambda: TrainingConfig.from_flat(**changes), needle)


def test_range_limits_themselves_are_accepted():
  TrainingConfig.from_flat(beta_1=0.0, beta_2=0.0, weight_decay_rate=0.0, clip_global_norm=0.0, seed=0,
                 end_learning_rate=1e-4, num_gpus=0, num_warmup_steps=0)
  TrainingConfig.from_flat(seed=2**32 - 1, distribution_strategy="one_device", num_gpus=1)


def test_out_of_range_flag_is_one_error_line_before_tensorflow():
  B.user_error_line(_run_without_tensorflow("--learning_rate=-1",
                                            "--output_dir=/nonexistent/never_written"),
                    "learning_rate=-1.0", "> 0")


# === --help ===

def test_help_explains_every_flag():
  result = _run_without_tensorflow("--helpshort")
  assert result.returncode == 0, result.stderr[-2000:]
  text = result.stdout
  assert "TrainingConfig." not in text
  blocks = {}  # flag name -> its help text (up to the next flag)
  for match in re.finditer(r"^  --(?:\[no\])?(\w+): (.*?)(?=^  --|\Z)", text, re.M | re.S):
    blocks[match.group(1)] = " ".join(match.group(2).split())
  for name in TrainingConfig.sections():
    assert name in blocks, f"--{name} missing from --help"
    assert len(blocks[name]) > 30 and "(default" in blocks[name], (name, blocks[name])
  for name, choices in (("objective", OBJECTIVES), ("optimizer", OPTIMIZERS), ("decay", DECAYS),
                        ("distribution_strategy", DISTRIBUTIONS),
                        ("mixed_precision", PRECISIONS)):
    for choice in choices:
      assert choice in blocks[name], (name, choice, blocks[name])
  for boundary in ("log_every", "checkpoint_every", "eval_every"):
    assert boundary in blocks["steps_per_execution"], blocks["steps_per_execution"]
  assert "configs/training/" in blocks["config_file"]


# === The docstring's quickstart ===

def _docstring_commands():
  """The shell commands of scripts/run_pretraining.py's docstring (continuation lines joined)."""
  import ast  # pylint: disable=g-import-not-at-top
  with open(os.path.join(B.SCRIPTS, "run_pretraining.py"), encoding="utf-8") as f:
    doc = ast.get_docstring(ast.parse(f.read()))
  joined = re.sub(r"\\\n\s*", " ", doc)
  commands = {}
  for line in joined.splitlines():
    if line.strip().startswith("python "):
      words = shlex.split(line.split("#")[0])
      commands.setdefault(os.path.basename(words[1]), words[2:])  # the first one: the quickstart
  return commands


def _flag(words, name):
  values = [w.split("=", 1)[1] for w in words if w.startswith(f"--{name}=")]
  assert len(values) == 1, (name, words)
  return values[0]


def test_docstring_quickstart_data_matches_the_preset_and_the_shard_names():
  commands = _docstring_commands()
  data, train = commands["create_pretraining_data.py"], commands["run_pretraining.py"]
  preset = TrainingConfig.from_file(os.path.join(B.ROOT, _flag(train, "config_file")))
  assert int(_flag(data, "max_seq_length")) == preset.data.max_seq_length
  assert int(_flag(data, "max_predictions_per_seq")) == preset.data.max_predictions_per_seq
  pattern = _flag(train, "input_files")
  assert os.path.dirname(pattern) == _flag(data, "output_dir")
  shard = PretrainingDataConfig(input_files="x", output_dir="y").shard_name(0)
  assert fnmatch.fnmatch(shard, os.path.basename(pattern)), (shard, pattern)
  assert not fnmatch.fnmatch("summary.json", os.path.basename(pattern))
