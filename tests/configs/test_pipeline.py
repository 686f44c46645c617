"""PipelineConfig holds typed configs: a bad key or value anywhere in it is refused when the config
is built or loaded, naming the key's path."""

import pytest

from bert_keras.configs.base import ConfigError
from bert_keras.configs.pipeline import PipelineConfig
from bert_keras.configs.tasks import SpanTaskConfig, TaskConfig

CORPUS = {"line_corpora": ["a.txt"]}


def _load(**values):
  return PipelineConfig.from_dict({"corpus": CORPUS, **values})


@pytest.mark.parametrize("values, needle", [
    ({"pretraining": {"training": {"learning_rte": 1e-3}}},
     "pretraining.training.learning_rte: unknown key in TrainingConfig"),
    ({"pretraining": {"training": {"learning_rate": "fast"}}},
     "pretraining.training.learning_rate='fast' must be a finite number"),
    ({"pretraining": {"training": {"max_seq_length": 64}}},
     "pretraining.training.max_seq_length: set by the pipeline"),
    ({"pretraining": {"data": {"dupe_factr": 2}}},
     "pretraining.data.dupe_factr: unknown key in PretrainingDataConfig"),
    ({"pretraining": {"data": {"dupe_factor": 0}}}, "pretraining.data.dupe_factor=0 must be >= 1"),
    ({"pretraining": {"data": {"output_dir": "x"}}}, "pretraining.data.output_dir: set by the pipeline"),
    ({"tasks": [{"task": "polarity", "task_config": {"doc_stride": 64}}]},
     "tasks[0].task_config.doc_stride: unknown key in TaskConfig"),
    ({"tasks": [{"task": "polarity", "bases": ["pretrained"],
                 "base_task_config": {"pretrained": {"learning_rte": 1.0}}}]},
     "tasks[0].base_task_config.pretrained.learning_rte: unknown key in TaskConfig"),
    ({"tasks": [{"task": "squad_v1", "task_config": {"max_answer_length": 0}}]},
     "tasks[0].task_config.max_answer_length=0 must be > 0"),
    ({"tasks": [{"task": "glue/nope"}]}, "tasks[0].task: unknown task preset 'glue/nope'"),
])
def test_a_bad_key_or_value_is_refused_at_load_time_with_its_path(values, needle):
  with pytest.raises(ConfigError) as info:
    _load(**values)
  assert str(info.value).startswith(needle), info.value


def test_task_configs_are_typed_by_the_task_preset():
  config = _load(tasks=[{"task": "squad_v1", "task_config": {"doc_stride": 64}, "bases": ["pretrained"]},
                        {"task": "polarity", "task_config": {"learning_rate": 1e-4}}],
                 checkpoint_dir="ckpt")
  squad, polarity = config.tasks
  assert type(squad.task_config) is SpanTaskConfig and squad.task_config.doc_stride == 64
  assert type(polarity.task_config) is TaskConfig and polarity.task_config.learning_rate == 1e-4
  assert PipelineConfig.from_dict(config.to_dict()) == config
  assert config.pretraining.training == {}


def test_training_is_checked_with_the_data_lengths():
  """The pretrainer runs at pretraining.data's lengths: a model too short for them is refused when
  the config is loaded, not when the pretrainer starts."""
  values = {"data": {"max_seq_length": 256},
            "training": {"model": "bert_tiny",
                         "model_overrides": {"max_position_embeddings": 128}}}
  with pytest.raises(ConfigError, match=r"^pretraining.data.max_seq_length=256 exceeds "
                                        r"max_position_embeddings=128"):
    _load(pretraining=values)
  values["data"]["max_seq_length"] = 64
  assert _load(pretraining=values).pretraining.data.max_seq_length == 64
