"""Model configs with wrongly typed values (from a ModelConfig JSON, bert_config.json or an HF
config.json), sequence lengths longer than the model's positions, and fine-tuning's --model
file: each is a one-line UserError naming the key (the file's own key) and what was expected."""

import json
import os

import pytest

from tests.reliability import bad_inputs as B


# --- ModelConfig field types (open bug 10) --------------------------------------------------------

MODEL_CASES = {
    "initializer_range list": ({"initializer_range": []}, "initializer_range=[] must be a finite number"),
    "layer_norm_epsilon string": ({"layer_norm_epsilon": "x"}, "layer_norm_epsilon='x' must be a finite number"),
    "dropout_rate bool": ({"dropout_rate": True}, "dropout_rate=True must be a finite number"),
    "dropout_rate nan": ({"dropout_rate": float("nan")}, "dropout_rate=nan must be a finite number"),
    "hidden_act list": ({"hidden_act": []}, "hidden_act=[] must be a string"),
    "hidden_act dict": ({"hidden_act": {}}, "hidden_act={} must be a string"),
    "attention number": ({"attention": 1}, "attention=1 must be a string"),
    "num_layers bool": ({"num_layers": True}, "num_layers=True must be an integer"),
    "num_heads float": ({"num_heads": 2.0}, "num_heads=2.0 must be an integer"),
    "type_vocab_size bool": ({"type_vocab_size": False}, "type_vocab_size=False must be an integer"),
    "type_vocab_size string": ({"type_vocab_size": "2"}, "type_vocab_size='2' must be an integer"),
}


@pytest.mark.parametrize("case", sorted(MODEL_CASES))
def test_model_config_json_field_types(tmp_path, case):
  from bert_keras.configs.model import ModelConfig
  change, needle = MODEL_CASES[case]
  path = B.write_model_config(str(tmp_path / "model.json"), **change)
  B.raises(lambda: ModelConfig.from_file(path), path, needle)


HF_BASE = {"model_type": "bert", "vocab_size": 20, "hidden_size": 16, "num_hidden_layers": 1,
           "num_attention_heads": 2, "intermediate_size": 32}


@pytest.mark.parametrize("change, needle", [
    ({"layer_norm_eps": "x"}, "key 'layer_norm_eps': layer_norm_epsilon='x' must be a finite number"),
    ({"initializer_range": []}, "key 'initializer_range': initializer_range=[]"),
    ({"hidden_act": []}, "hidden_act=[] is not supported"),
    ({"hidden_act": {}}, "hidden_act={} is not supported"),
    ({"num_hidden_layers": "2"}, "key 'num_hidden_layers': num_layers='2' must be an integer"),
    ({"hidden_dropout_prob": None}, "key 'hidden_dropout_prob': dropout_rate=None"),
])
def test_hf_config_field_types(change, needle):
  from bert_keras.interop.hf_checkpoint import config_from_hf
  B.raises(lambda: config_from_hf(dict(HF_BASE, **change), "x/config.json"), "x/config.json", needle)


@pytest.mark.parametrize("change, needle", [
    ({"hidden_act": []}, "hidden_act=[] is not supported"),
    ({"hidden_act": {"f": 1}}, "hidden_act={'f': 1} is not supported"),
    ({"initializer_range": "0.02"}, "key 'initializer_range': initializer_range='0.02'"),
    ({"type_vocab_size": 2.5}, "key 'type_vocab_size'"),
    ({"attention_probs_dropout_prob": [0.1]}, "key 'attention_probs_dropout_prob'"),
])
def test_google_config_field_types(change, needle):
  from bert_keras.interop.google_checkpoint import config_from_google
  values = {k: v for k, v in HF_BASE.items() if k != "model_type"}
  B.raises(lambda: config_from_google(dict(values, **change), "g/bert_config.json"),
          "g/bert_config.json", needle)


# --- max_seq_length against max_position_embeddings (open bug 8) ---------------------------------

def test_training_config_sequence_longer_than_positions(tmp_path):
  from bert_keras.configs.training import TrainingConfig
  from configs import recipe_path
  tiny = TrainingConfig.from_file(recipe_path("training", "tiny_debug"))
  B.raises(lambda: tiny.override(max_seq_length=1024),
          "max_seq_length=1024 exceeds max_position_embeddings=512")
  B.raises(lambda: TrainingConfig.from_flat(model="bert_tiny", max_seq_length=128,
                                 model_overrides={"max_position_embeddings": 64}),
          "max_seq_length=128 exceeds max_position_embeddings=64")
  path = B.write(str(tmp_path / "train.json"), json.dumps(
      {"model": {"model": "bert_tiny"}, "data": {"max_seq_length": 600}}))
  B.raises(lambda: TrainingConfig.from_file(path), path, "max_seq_length=600 exceeds")
  assert tiny.override(max_seq_length=512).data.max_seq_length == 512


def test_finetuning_checks_sequence_length_before_reading_anything(tmp_path):
  """max_seq_length=128 with a 64-position model: the error comes before the (missing) data is
  read and before any model is built."""
  from bert_keras.tasks.finetuning import RunConfig, run_finetuning
  from bert_keras.configs.tasks import get_task_config
  config = B.write_model_config(str(tmp_path / "model.json"), max_position_embeddings=64)
  run = RunConfig(data_dir=str(tmp_path / "no_data"), output_dir=str(tmp_path / "out"),
                  model=config, vocab_file=B.write_vocab(str(tmp_path)))
  B.raises(lambda: run_finetuning(get_task_config("glue/mrpc", max_seq_length=128), run),
          "max_seq_length=128 exceeds max_position_embeddings=64", config)
  assert not os.path.exists(run.output_dir)


def test_finetuning_checks_sequence_length_of_a_checkpoint(tmp_path):
  from bert_keras.tasks.finetuning import ModelFamily, RunConfig
  from bert_keras.configs.tasks import get_task_config
  directory = tmp_path / "hf"
  B.write(str(directory / "config.json"), json.dumps(dict(HF_BASE, max_position_embeddings=32)))
  B.write(str(directory / "model.safetensors"), b"")  # never read: only the config is
  run = RunConfig(init_checkpoint=str(directory))
  B.raises(lambda: ModelFamily().resolve(run, get_task_config("polarity", max_seq_length=64)),
           "max_seq_length=64 exceeds max_position_embeddings=32")
  ModelFamily().resolve(run, get_task_config("polarity", max_seq_length=32))


# --- fine-tuning's --model file (open bug 9) -----------------------------------------------

@pytest.mark.parametrize("content, needle", [
    ('{\n  "vocab_size": 20,\n  hidden_size: 16\n}', "x.json:3: not valid JSON"),
    (b'{"vocab_size": 20, "hidden_act": "g\xe9lu"}', "x.json:1: not valid UTF-8"),
    ("[1, 2]", "expected an object at the top level of the JSON, got an array"),
    ("[" * 100000, "nested too deeply"),
])
def test_finetuning_model_config_file(tmp_path, content, needle):
  from bert_keras.tasks.finetuning import resolve_model_config
  path = B.write(str(tmp_path / "x.json"), content)
  B.raises(lambda: resolve_model_config(path), path, needle)


def test_task_config_feature_layers_must_be_integers():
  from bert_keras.configs.tasks import TaskConfig  # pylint: disable=g-import-not-at-top
  for bad, needle in ((["a", "b"], "feature_layers=['a', 'b'] must be integer"),
                      ([1.5], "feature_layers=[1.5] must be integer"),
                      ("-1", "feature_layers='-1' must be a list"),
                      (7, "feature_layers=7 must be a list")):
    B.raises(lambda: TaskConfig.from_dict({"approach": "feature_based", "feature_layers": bad}),
             needle)
  assert TaskConfig.from_dict({"approach": "feature_based",
                               "feature_layers": ["-2", -1]}).feature_layers == (-2, -1)


def test_run_config_max_train_examples_not_negative():
  from bert_keras.tasks.finetuning import RunConfig  # pylint: disable=g-import-not-at-top
  B.raises(lambda: RunConfig(max_train_examples=-5), "max_train_examples=-5", ">= 0")
  for bad in (2.5, True):
    B.raises(lambda: RunConfig(max_train_examples=bad), f"max_train_examples={bad!r}", "integer")
  assert RunConfig(max_train_examples=0).max_train_examples == 0
