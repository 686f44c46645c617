from unittest import mock

import keras
import numpy as np
import pytest

from bert_keras.models.bert_encoder import BertEncoder
from bert_keras.configs.model import ConfigError, ModelConfig, get_model_config
from tests.models import harness

TINY = dict(vocab_size=100, hidden_size=32, num_layers=2, num_heads=4, intermediate_size=64)


def _encoder(**overrides):
  return BertEncoder(**{**TINY, **overrides})


def test_outputs_have_the_documented_shapes():
  encoder = _encoder()
  outputs = encoder(harness.random_inputs(batch=3, seq=10))
  assert tuple(outputs["sequence_output"].shape) == (3, 10, 32)
  assert tuple(outputs["pooled_output"].shape) == (3, 32)
  assert len(outputs["encoder_outputs"]) == 2
  np.testing.assert_allclose(outputs["encoder_outputs"][-1], outputs["sequence_output"])


@pytest.mark.parametrize("preset,paper_millions", [("bert_base", 110), ("bert_large", 340)])
def test_parameter_count_matches_the_paper(preset, paper_millions):
  # Paper, section 3: BERT-Base 110M, BERT-Large 340M (the figures are rounded). Only the shapes
  # count: the weights start at zero instead of 335M truncated-normal draws (8 of Large's 11 CPU-s).
  zeros = lambda self, shape, dtype=None: keras.ops.zeros(shape, dtype)
  with mock.patch.object(keras.initializers.TruncatedNormal, "__call__", zeros):
    encoder = BertEncoder.from_model_config(get_model_config(preset))
  millions = encoder.count_params() / 1e6
  assert abs(millions - paper_millions) / paper_millions < 0.02, millions


def test_padding_does_not_change_real_tokens():
  encoder = _encoder(dropout_rate=0.0, attention_dropout_rate=0.0)
  short = harness.random_inputs(batch=2, seq=8, seed=1)
  padded = {k: np.concatenate([v, np.zeros((2, 5), "int32")], axis=1) for k, v in short.items()}
  out_short = encoder(short)["sequence_output"]
  out_padded = encoder(padded)["sequence_output"][:, :8]
  np.testing.assert_allclose(out_padded, out_short, atol=1e-5)


def test_causal_encoder_does_not_look_ahead():
  encoder = _encoder(attention="causal")
  a = harness.random_inputs(batch=1, seq=12, seed=2)
  b = {k: v.copy() for k, v in a.items()}
  b["input_word_ids"][0, 6:] = 7  # change only the future
  out_a = encoder(a)["sequence_output"][:, :6]
  out_b = encoder(b)["sequence_output"][:, :6]
  np.testing.assert_allclose(out_a, out_b, atol=1e-5)
  # ...while a bidirectional encoder does see it.
  bidi = _encoder()
  assert np.abs(bidi(a)["sequence_output"][:, :6] - bidi(b)["sequence_output"][:, :6]).max() > 1e-4


def test_config_and_keras_file_round_trip(tmp_path):
  encoder = _encoder(hidden_act="gelu_tanh")
  harness.assert_config_round_trip(encoder)
  restored = harness.assert_save_load_round_trip(
      encoder, harness.random_inputs(), tmp_path, "pooled_output")
  assert restored.hidden_act == "gelu_tanh"


def test_exact_gelu_is_the_default():
  assert ModelConfig().hidden_act == "gelu"
  x = np.array([-1.0, 0.5, 2.0], "float32")
  from bert_keras.models.activations import get_activation
  import math
  expected = [v * 0.5 * (1 + math.erf(v / math.sqrt(2))) for v in x]
  np.testing.assert_allclose(get_activation("gelu")(x), expected, atol=1e-6)


@pytest.mark.parametrize("policy", ["mixed_bfloat16", "mixed_float16"])
def test_mixed_precision_builds_and_runs(policy):
  keras.mixed_precision.set_global_policy(policy)
  try:
    encoder = _encoder()
    out = encoder(harness.random_inputs(), training=True)
    assert out["sequence_output"].dtype.name == policy.split("_")[1]
    assert encoder.weights[0].dtype == "float32"  # variables stay float32
  finally:
    keras.mixed_precision.set_global_policy("float32")


@pytest.mark.parametrize("bad,message", [
    (dict(hidden_size=100, num_heads=12), "hidden_size=100 is not divisible by num_heads=12"),
    (dict(hidden_act="swish"), "hidden_act='swish'"),
    (dict(attention="sideways"), "attention='sideways'"),
    (dict(num_layers=0), "num_layers=0"),
])
def test_bad_config_fails_fast_naming_the_value(bad, message):
  with pytest.raises(ConfigError, match=message.replace("(", r"\(")):
    _encoder(**bad)


def test_config_from_dict_rejects_unknown_keys():
  with pytest.raises(ConfigError, match="unknown key in ModelConfig"):
    ModelConfig.from_dict({"hidden_size": 128, "exec": "rm -rf /"})
