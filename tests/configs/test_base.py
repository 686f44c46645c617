"""The Config base class, through every config of bert_keras/configs/: a dict and JSON round trip (nested
configs and tuples included), an unknown key named with its class on one line, and renamed keys
accepted with a deprecation warning."""

import dataclasses
import json
import os

import pytest

from configs.ablations import ABLATIONS, STUDY_PRESETS, StudyConfig
from bert_keras.configs.base import Config, ConfigError
from bert_keras.configs.export import ExportConfig
from bert_keras.configs.finetuning import RunConfig
from bert_keras.configs.gpt import GPTFinetuningConfig, GPTPretrainingConfig
from bert_keras.configs.model import GPT_PRESETS, MODEL_PRESETS, ModelConfig
from bert_keras.configs.pipeline import PipelineConfig
from configs.demo import demo_config, smoke_config
from bert_keras.configs.pretraining_data import PretrainingDataConfig
from bert_keras.configs.tasks import TASK_PRESETS, TaskConfig
from bert_keras.configs.training import TRAINING_PRESETS, TrainingConfig

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures")

# One or more instances of every config class, presets included; not the defaults only.
EXAMPLES = [
    *MODEL_PRESETS.values(), *GPT_PRESETS.values(), *TRAINING_PRESETS.values(),
    *TASK_PRESETS.values(), *ABLATIONS.values(), *STUDY_PRESETS.values(),
    GPTPretrainingConfig(train_batch_size=8), GPTFinetuningConfig(warmup_proportion=0.01),
    demo_config(), smoke_config(),
    RunConfig(data_dir="d", output_dir="o", lower_case=False, max_train_examples=5),
    ExportConfig(output_dir="o", finetune_dir="f", jit_compile="auto", head_groups=2),
    PretrainingDataConfig(input_pattern="x", max_seq_length=512),
]


def _config_classes(module_dir):
  """Every dataclass defined in bert_keras/configs/*.py."""
  import importlib  # pylint: disable=import-outside-toplevel
  out = set()
  for name in sorted(os.listdir(module_dir)):
    if name.endswith(".py") and name != "__init__.py":
      module = importlib.import_module(f"bert_keras.configs.{name[:-3]}")
      out.update(v for v in vars(module).values() if isinstance(v, type)
                 and dataclasses.is_dataclass(v) and v.__module__ == module.__name__)
  return out


def test_every_config_class_derives_from_the_base_and_is_exercised():
  from bert_keras import configs  # pylint: disable=import-outside-toplevel
  classes = _config_classes(os.path.dirname(configs.__file__))
  assert classes, "no config classes found"
  outside = sorted(c.__name__ for c in classes if not issubclass(c, Config))
  assert not outside, f"config classes not on the Config base: {outside}"
  nested = {type(getattr(e, f.name)) for e in EXAMPLES for f in dataclasses.fields(e)}
  nested |= {type(t) for e in EXAMPLES if isinstance(e, PipelineConfig) for t in e.tasks}
  covered = {type(e) for e in EXAMPLES} | nested
  missing = sorted(c.__name__ for c in classes - covered)
  assert not missing, f"config classes with no round-trip example: {missing}"


@pytest.mark.parametrize("config", EXAMPLES, ids=lambda c: type(c).__name__)
def test_dict_and_json_round_trip(config, tmp_path):
  cls = type(config)
  assert cls.from_dict(config.to_dict()) == config
  path = tmp_path / "config.json"
  path.write_text(config.to_json())
  assert cls.from_json_file(str(path)) == config
  json.loads(config.to_json())  # plain JSON: no tuples or configs left in it


@pytest.mark.parametrize("cls, values, key, where", [
    (ModelConfig, {"num_layer": 2}, "num_layer", "ModelConfig"),
    (TaskConfig, {"learning_rte": 1e-5}, "learning_rte", "TaskConfig"),
    (RunConfig, {"output_dri": "x"}, "output_dri", "RunConfig"),
    (ExportConfig, {"output_dir": "o", "finetune_dir": "f", "rowgroups": 1}, "rowgroups",
     "ExportConfig"),
    (PretrainingDataConfig, {"dupe_factr": 2}, "dupe_factr", "PretrainingDataConfig"),
    (GPTPretrainingConfig, {"lr": 1.0}, "lr", "GPTPretrainingConfig"),
    (StudyConfig, {"seeds": [0], "vocab": 9}, "vocab", "StudyConfig"),
    (TrainingConfig, {"optimizer": {"typo": "lamb"}}, "typo", "OptimizerConfig"),
    (TrainingConfig, {"learning_rte": 1.0}, "learning_rte", "TrainingConfig"),
    (PipelineConfig, {"corpus": {"line_corpora": ["a"], "num_shard": 2}}, "num_shard",
     "CorpusConfig"),
])
def test_unknown_key_names_the_key_and_the_class_on_one_line(cls, values, key, where):
  with pytest.raises(ConfigError) as info:
    cls.from_dict(values)
  message = str(info.value)
  assert message.startswith(f"unknown key '{key}' in {where}; expected one of "), message
  assert "\n" not in message and info.value.key == key


def test_unknown_key_in_a_file_names_the_file(tmp_path):
  path = tmp_path / "model.json"
  path.write_text('{"hidden_size": 64, "num_layer": 2}')
  with pytest.raises(ConfigError, match=rf"{path}: unknown key 'num_layer' in ModelConfig"):
    ModelConfig.from_json_file(str(path))


@pytest.mark.parametrize("cls, old, new, value", [
    (TaskConfig, "batch_size", "train_batch_size", 8),
    (GPTPretrainingConfig, "seq_length", "max_seq_length", 64),
    (GPTFinetuningConfig, "warmup_fraction", "warmup_proportion", 0.01),
    (StudyConfig, "seq_length", "max_seq_length", 24),
    (PretrainingDataConfig, "random_seed", "seed", 7),
])
def test_renamed_key_loads_with_a_deprecation_warning(cls, old, new, value):
  with pytest.warns(FutureWarning, match=rf"'{old}' is deprecated, use '{new}'"):
    config = cls.from_dict({old: value})
  assert getattr(config, new) == value
  with pytest.raises(ConfigError, match=f"both '{old}'"):
    cls.from_dict({old: value, new: value})


def test_gpt_config_json_written_before_the_renames_loads():
  # Written by GPTFinetuningConfig(batch_size=16, seq_length=64, warmup_fraction=0.01).to_json()
  # before the renames (fixtures/gpt_finetuning_config.json).
  with pytest.warns(FutureWarning):
    config = GPTFinetuningConfig.from_json_file(os.path.join(FIXTURES,
                                                             "gpt_finetuning_config.json"))
  assert (config.train_batch_size, config.max_seq_length, config.warmup_proportion) == (16, 64, 0.01)
