import json
import os

import numpy as np
import pytest

from bert_keras import interop
from bert_keras.errors import UserError
from bert_keras.models.bert_encoder import BertEncoder
from bert_keras.models.bert_pretrainer import BertPretrainer
from bert_keras.configs.model import ModelConfig
from tests.interop import interop_fixtures as fx

TINY = ModelConfig(vocab_size=50, hidden_size=16, num_layers=2, num_heads=2, intermediate_size=24,
                   max_position_embeddings=32, type_vocab_size=2, dropout_rate=0.0,
                   attention_dropout_rate=0.0)


def _inputs(seed=0):
  ids, mask, types = fx.sample_inputs({"vocab_size": 50, "type_vocab_size": 2}, seed=seed)
  return fx.as_model_inputs(ids, mask, types)


def _same_outputs(a, b):
  inputs = _inputs()
  np.testing.assert_allclose(np.asarray(a(inputs)["sequence_output"]),
                             np.asarray(b(inputs)["sequence_output"]), atol=1e-6)


def test_keras_file_of_an_encoder_and_of_a_pretrainer(tmp_path):
  encoder = BertEncoder.from_model_config(TINY)
  encoder.save(str(tmp_path / "encoder.keras"))
  loaded, info = interop.load_encoder(str(tmp_path))  # a directory holding encoder.keras
  assert info.format == "keras" and info.config == TINY
  _same_outputs(encoder, loaded)

  pretrainer = BertPretrainer(BertEncoder.from_model_config(TINY), "mlm_nsp")
  pretrainer.save(str(tmp_path / "p.keras"))
  restored, info = interop.load_pretrainer(str(tmp_path / "p.keras"))
  assert info.missing == []
  for a, b in zip(pretrainer.weights, restored.weights):
    np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
  # An "mlm" pretrainer from an "mlm_nsp" file: the NSP head is simply not used.
  mlm_only, info = interop.load_pretrainer(str(tmp_path / "p.keras"), objective="mlm")
  assert "cls/seq_relationship/output_weights" in info.unused


def test_weights_h5_with_model_config_json_beside_it(tmp_path):
  pretrainer = BertPretrainer(BertEncoder.from_model_config(TINY), "mlm")
  pretrainer.save_weights(str(tmp_path / "pretrainer.weights.h5"))
  (tmp_path / "model_config.json").write_text(TINY.to_json())
  encoder, info = interop.load_encoder(str(tmp_path / "pretrainer.weights.h5"))
  assert info.format == "keras_weights"
  _same_outputs(pretrainer.encoder, encoder)
  # A resolved run config with the model config under "model" is found too.
  os.remove(tmp_path / "model_config.json")
  (tmp_path / "run_config.json").write_text(json.dumps({"model": TINY.to_dict(), "steps": 3}))
  encoder, _ = interop.load_encoder(str(tmp_path / "pretrainer.weights.h5"))
  _same_outputs(pretrainer.encoder, encoder)


def test_weights_h5_errors(tmp_path):
  BertEncoder.from_model_config(TINY).save_weights(str(tmp_path / "e.weights.h5"))
  with pytest.raises(UserError, match=r"e.weights.h5: no model config JSON beside it"):
    interop.load_encoder(str(tmp_path / "e.weights.h5"))
  (tmp_path / "model_config.json").write_text(TINY.replace(num_layers=3).to_json())
  with pytest.raises(UserError, match="matches neither an encoder nor a pretrainer"):
    interop.load_encoder(str(tmp_path / "e.weights.h5"))
  (tmp_path / "model_config.json").write_text(TINY.to_json())
  with open(tmp_path / "e.weights.h5", "r+b") as f:
    f.truncate(300)
  with pytest.raises(UserError, match=r"e.weights.h5: cannot read"):
    interop.load_encoder(str(tmp_path / "e.weights.h5"))


def test_corrupt_keras_file_names_the_file(tmp_path):
  path = tmp_path / "model.keras"
  path.write_bytes(b"PK\x03\x04 this is not a zip")
  with pytest.raises(UserError, match=r"model.keras: cannot load the .keras file"):
    interop.load_encoder(str(path))


def test_load_encoder_weights_into_an_existing_encoder(tmp_path):
  source = BertEncoder.from_model_config(TINY)
  interop.save_google_checkpoint(source, str(tmp_path / "g"))
  target = BertEncoder.from_model_config(TINY.replace(hidden_act="gelu_tanh"))
  info = interop.load_encoder_weights(target, str(tmp_path / "g"))
  assert len(info.loaded) == 5 + 16 * TINY.num_layers + 2  # embeddings, blocks, pooler tensors
  for a, b in zip(source.weights, target.weights):
    np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
  wrong_heads = BertEncoder.from_model_config(TINY.replace(num_heads=4))
  with pytest.raises(UserError, match=r"bert_config.json: checkpoint has num_heads=2 but the model "
                     r"has num_heads=4"):
    interop.load_encoder_weights(wrong_heads, str(tmp_path / "g"))


def test_overrides(tmp_path):
  interop.save_google_checkpoint(BertEncoder.from_model_config(TINY), str(tmp_path))
  encoder, info = interop.load_encoder(str(tmp_path), dropout_rate=0.3, hidden_act="gelu")
  assert encoder.dropout_rate == 0.3 and info.config.hidden_act == "gelu"
  with pytest.raises(UserError, match=r"override num_heads=4 disagrees with the checkpoint's "
                     r"num_heads=2"):
    interop.load_encoder(str(tmp_path), num_heads=4)
  with pytest.raises(UserError, match=r"unknown override\(s\) \['hidden'\]"):
    interop.load_encoder(str(tmp_path), hidden=3)


def test_detect_format(tmp_path):
  interop.save_google_checkpoint(BertEncoder.from_model_config(TINY), str(tmp_path / "g"))
  prefix = str(tmp_path / "g" / "bert_model.ckpt")
  assert interop.detect_format(str(tmp_path / "g")) == ("google", prefix)
  assert interop.detect_format(prefix) == ("google", prefix)
  assert interop.detect_format(prefix + ".index") == ("google", prefix)
  config = interop.open_checkpoint(prefix, read_weights=False).info.config
  assert config == TINY.replace(hidden_act="gelu_tanh")
  with pytest.raises(UserError, match="no such checkpoint file or directory"):
    interop.detect_format(str(tmp_path / "nothing"))
  (tmp_path / "empty").mkdir()
  with pytest.raises(UserError, match="empty: no checkpoint found"):
    interop.detect_format(str(tmp_path / "empty"))
  (tmp_path / "model.pt").write_bytes(b"x")
  with pytest.raises(UserError, match="pickle-based weights are never loaded"):
    interop.detect_format(str(tmp_path / "model.pt"))
