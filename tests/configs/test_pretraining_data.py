"""PretrainingDataConfig is the one owner of the pretraining-data settings: the Beam script's flags,
the pretraining_examples component's parameters and the pipeline config all default to its values."""

import dataclasses

from bert_keras.configs.pipeline import PipelineConfig
from bert_keras.configs.pretraining_data import PretrainingDataConfig
from bert_keras.data.pretraining_data_pipeline import config_from_args, parse_args
from components.pretraining_examples.spec import PretrainingExamplesSpec

DEFAULTS = PretrainingDataConfig()
SETTINGS = [f.name for f in dataclasses.fields(PretrainingDataConfig)
            if f.name not in PretrainingDataConfig.LOCATION_FIELDS]


def test_the_beam_script_defaults_to_the_config():
  config = config_from_args(parse_args(["--output_dir=o"])[0])
  assert {n: getattr(config, n) for n in SETTINGS} == {n: getattr(DEFAULTS, n) for n in SETTINGS}
  assert (config.dupe_factor, config.num_shards) == (10, 8)  # the paper's script
  assert config.lower_case == DEFAULTS.lower_case and config.output_dir == "o"


def test_the_component_defaults_to_the_config():
  resolved = PretrainingExamplesSpec.resolve_parameters({})
  assert sorted(resolved) == sorted(SETTINGS)
  assert PretrainingDataConfig(**resolved) == DEFAULTS


def test_the_pipeline_config_defaults_to_the_config():
  config = PipelineConfig.from_dict({"corpus": {"line_corpora": ["a.txt"]}})
  assert config.pretraining.data == DEFAULTS


def test_every_flag_of_the_beam_script_sets_its_field():
  known, _ = parse_args(["--output_dir=o", "--dupe_factor=3", "--num_shards=2", "--seed=7",
                         "--whole_word_mask", "--lower_case=false", "--compression=gzip"])
  config = config_from_args(known)
  assert (config.dupe_factor, config.num_shards, config.seed) == (3, 2, 7)
  assert config.whole_word_mask and not config.lower_case and config.compression == "gzip"
