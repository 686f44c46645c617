"""The Config base class, through every config of bert_keras/configs/: a dict and JSON round trip (nested
configs and tuples included), an unknown key named by its path and class on one line, and the names
of earlier versions refused as unknown keys (no release shipped them)."""

import dataclasses
import json
import os

import pytest
import yaml

from studies.bert_gpt_ablation.study_config import ABLATIONS, STUDY_PRESETS, StudyConfig
from bert_keras.configs.base import Config, ConfigError
from bert_keras.configs.export import ExportConfig
from bert_keras.configs.finetuning import FinetuningConfig, RunConfig
from bert_keras.configs.model import GPT_PRESETS, MODEL_PRESETS, ModelConfig
from bert_keras.configs.pipeline import PipelineConfig
from configs.demo import demo_config, smoke_config
from bert_keras.configs.pretraining_data import PretrainingDataConfig
from bert_keras.configs.tasks import TASK_PRESETS, TaskConfig, get_task_config
from bert_keras.configs.training import TrainingConfig
from configs import recipe_names, recipe_path

TRAINING_RECIPES = [TrainingConfig.from_file(recipe_path("training", name))
                    for name in recipe_names("training")]

# One or more instances of every config class, presets included; not the defaults only.
EXAMPLES = [
    *MODEL_PRESETS.values(), *GPT_PRESETS.values(), *TRAINING_RECIPES,
    *TASK_PRESETS.values(), *ABLATIONS.values(), *STUDY_PRESETS.values(),
    get_task_config("glue/mrpc", approach="feature_based", lstm_units=8),
    get_task_config("gpt/swag", lm_coef=0.0),
    demo_config(), smoke_config(),
    RunConfig(data_dir="d", output_dir="o", lower_case=False, max_train_examples=5),
    FinetuningConfig(task=get_task_config("glue/mrpc", approach="feature_based"),
                     run=RunConfig(output_dir="o"), model={"num_layers": 2}, total_steps=4),
    ExportConfig(output_dir="o", finetuned_dir="f", jit_compile="auto", head_groups=2),
    PretrainingDataConfig(input_files="x", max_seq_length=512),
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
  assert cls.from_file(str(path)) == config
  (tmp_path / "config.yaml").write_text(yaml.safe_dump(config.to_dict()))
  assert cls.from_file(str(tmp_path / "config.yaml")) == config
  json.loads(config.to_json())  # plain JSON: no tuples or configs left in it


@pytest.mark.parametrize("cls, values, key, where", [
    (ModelConfig, {"num_layer": 2}, "num_layer", "ModelConfig"),
    (TaskConfig, {"learning_rte": 1e-5}, "learning_rte", "TaskConfig"),
    (TaskConfig, {"task": "squad_v1", "tagging_scheme": "iob2"}, "tagging_scheme",
     "SpanTaskConfig"),
    (RunConfig, {"output_dri": "x"}, "output_dri", "RunConfig"),
    (ExportConfig, {"output_dir": "o", "finetuned_dir": "f", "rowgroups": 1}, "rowgroups",
     "ExportConfig"),
    (PretrainingDataConfig, {"dupe_factr": 2}, "dupe_factr", "PretrainingDataConfig"),
    (TaskConfig, {"task": "gpt/polarity", "lm_cof": 1.0}, "lm_cof", "GPTTaskConfig"),
    (StudyConfig, {"seeds": [0], "vocab": 9}, "vocab", "StudyConfig"),
    (TrainingConfig, {"optimizer": {"typo": "lamb"}}, "optimizer.typo", "OptimizerConfig"),
    (TrainingConfig, {"learning_rte": 1.0}, "learning_rte", "TrainingConfig"),
    (PipelineConfig, {"corpus": {"line_corpora": ["a"], "num_shard": 2}}, "corpus.num_shard",
     "CorpusConfig"),
])
def test_unknown_key_names_its_path_and_class_on_one_line(cls, values, key, where):
  with pytest.raises(ConfigError) as info:
    cls.from_dict(values)
  message = str(info.value)
  assert message.startswith(f"{key}: unknown key in {where}; expected one of "), message
  assert "\n" not in message and info.value.key == key


def test_unknown_key_in_a_file_names_the_file(tmp_path):
  path = tmp_path / "model.json"
  path.write_text('{"hidden_size": 64, "num_layer": 2}')
  with pytest.raises(ConfigError, match=rf"{path}: num_layer: unknown key in ModelConfig"):
    ModelConfig.from_file(str(path))


@pytest.mark.parametrize("cls, old", [
    (TaskConfig, "batch_size"), (StudyConfig, "seq_length"),
    (PretrainingDataConfig, "random_seed"),
    (ExportConfig, "row_groups"),
])
def test_names_of_earlier_versions_are_unknown_keys(cls, old):
  values = {"output_dir": "o", "finetuned_dir": "f"} if cls is ExportConfig else {}
  with pytest.raises(ConfigError, match=f"^{old}: unknown key in {cls.__name__}"):
    cls.from_dict({**values, old: 1})


def test_type_and_range_are_checked_with_the_value():
  with pytest.raises(ConfigError, match=r"^num_layers='2' must be an integer"):
    ModelConfig(num_layers="2")
  with pytest.raises(ConfigError, match=r"^dropout_rate=1.0 must be in \[0, 1\)"):
    ModelConfig(dropout_rate=1.0)
  with pytest.raises(ConfigError, match=r"^hidden_act='tanh'; expected one of"):
    ModelConfig(hidden_act="tanh")
