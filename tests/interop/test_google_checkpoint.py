import json
import os

import numpy as np
import pytest
import tensorflow as tf

from bert_keras import interop
from bert_keras.errors import UserError
from bert_keras.interop import google_checkpoint
from tests.interop import interop_fixtures as fx

CONFIG = fx.TINY_GOOGLE_CONFIG


@pytest.fixture(scope="module")
def release(tmp_path_factory):
  """A Google-style release directory written by tf.compat.v1.train.Saver, with heads."""
  directory = str(tmp_path_factory.mktemp("google") / "uncased_L-2_H-32_A-4")
  weights = fx.random_google_weights(CONFIG, heads=True, seed=3)
  fx.write_tf1_checkpoint(weights, directory, CONFIG)
  with open(os.path.join(directory, "vocab.txt"), "w") as f:
    f.write("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
                      + [f"w{i}" for i in range(CONFIG["vocab_size"] - 5)]) + "\n")
  return directory, weights


def _copy_release(release, target, weights=None, config=None):
  directory, original = release
  fx.write_tf1_checkpoint(weights or original, str(target), config or CONFIG)
  return str(target)


def test_pretrainer_matches_the_reference_bert_on_every_output(release):
  directory, weights = release
  pretrainer, info = interop.load_pretrainer(directory)
  assert info.format == "google" and info.missing == []
  assert info.config.hidden_act == "gelu_tanh"  # the original code's gelu is the tanh form
  ids, mask, types = fx.sample_inputs(CONFIG)
  positions = np.tile(np.arange(ids.shape[1], dtype="int32"), (ids.shape[0], 1))
  outputs = pretrainer(fx.as_model_inputs(ids, mask, types, positions), training=False)
  encoded = pretrainer.encoder(fx.as_model_inputs(ids, mask, types), training=False)
  sequence, pooled, mlm, nsp = fx.numpy_bert(weights, CONFIG, ids, mask, types)
  real = mask.astype(bool)
  np.testing.assert_allclose(np.asarray(encoded["sequence_output"])[real], sequence[real],
                             atol=2e-5)
  np.testing.assert_allclose(np.asarray(encoded["pooled_output"]), pooled, atol=2e-5)
  np.testing.assert_allclose(np.asarray(outputs["mlm_logits"])[real], mlm[real], atol=2e-5)
  np.testing.assert_allclose(np.asarray(outputs["nsp_logits"]), nsp, atol=2e-5)


def test_training_state_is_skipped_and_reported_unused(release):
  directory, _ = release
  _, info = interop.load_encoder(directory)
  assert "global_step" in info.unused
  assert any(n.endswith("/adam_m") for n in info.unused)
  assert "cls/predictions/output_bias" in info.unused  # an encoder has no MLM head
  assert info.lower_case is True  # from the uncased_ directory name
  assert info.vocab_path == os.path.join(directory, "vocab.txt")


def test_google_to_keras_to_google_is_lossless(release, tmp_path):
  directory, weights = release
  pretrainer, _ = interop.load_pretrainer(os.path.join(directory, "bert_model.ckpt"))
  prefix, warnings = interop.save_google_checkpoint(pretrainer, str(tmp_path / "out"))
  assert warnings == []
  reader = tf.train.load_checkpoint(prefix)
  assert set(reader.get_variable_to_shape_map()) == set(weights)
  for name, array in weights.items():
    np.testing.assert_array_equal(reader.get_tensor(name), array, err_msg=name)
  with open(os.path.join(str(tmp_path / "out"), "bert_config.json")) as f:
    assert json.load(f) == CONFIG
  # tf.train.latest_checkpoint (what TF1 tools use on a directory) finds it.
  assert tf.train.latest_checkpoint(str(tmp_path / "out")) == prefix


def test_encoder_export_is_read_back_by_tf1_init_from_checkpoint(release, tmp_path):
  directory, weights = release
  encoder, _ = interop.load_encoder(directory)
  prefix, _ = interop.save_google_checkpoint(encoder, str(tmp_path / "enc"))
  name = "bert/encoder/layer_1/attention/self/value/kernel"
  with tf.Graph().as_default():
    variable = tf.compat.v1.get_variable(name, shape=weights[name].shape)
    tf.compat.v1.train.init_from_checkpoint(prefix, {name: name})  # the original run_classifier way
    with tf.compat.v1.Session() as session:
      session.run(tf.compat.v1.global_variables_initializer())
      np.testing.assert_array_equal(session.run(variable), weights[name])


def test_shape_disagreement_names_the_variable_and_both_shapes(release, tmp_path):
  bad = dict(release[1])
  name = "bert/encoder/layer_1/intermediate/dense/kernel"
  bad[name] = bad[name][:, :40]
  directory = _copy_release(release, tmp_path / "bad", weights=bad)
  with pytest.raises(UserError, match=rf"{name} has shape \(32, 40\) in the checkpoint but shape "
                     r"\(32, 48\) in the model"):
    interop.load_encoder(directory)


def test_vocab_size_disagreement_is_explained(release, tmp_path):
  directory = _copy_release(release, tmp_path / "vocab", config={**CONFIG, "vocab_size": 60})
  with pytest.raises(UserError, match=r"word_embeddings has shape \(57, 32\).*vocabulary has 57 "
                     r"entries, the model's vocab_size is 60"):
    interop.load_encoder(directory)


def test_vocab_file_disagreeing_with_config_is_an_error(release, tmp_path):
  directory = _copy_release(release, tmp_path / "v")
  with open(os.path.join(directory, "vocab.txt"), "w") as f:
    f.write("[PAD]\n[UNK]\n")
  with pytest.raises(UserError, match=r"vocab.txt: 2 vocabulary entries but .*vocab_size=57"):
    interop.load_encoder(directory)


def test_more_layers_than_the_config_says_is_an_error(release, tmp_path):
  directory = _copy_release(release, tmp_path / "layers",
                            config={**CONFIG, "num_hidden_layers": 1})
  with pytest.raises(UserError, match=r"layer_1.*have no place in the model"):
    interop.load_encoder(directory)


def test_missing_required_variable_and_missing_config(release, tmp_path):
  partial = {k: v for k, v in release[1].items() if "layer_0/attention/self/key" not in k}
  directory = _copy_release(release, tmp_path / "partial", weights=partial)
  with pytest.raises(UserError, match=r"lacks variable\(s\) bert/encoder/layer_0/attention/self/key"):
    interop.load_encoder(directory)
  os.remove(os.path.join(directory, "bert_config.json"))
  with pytest.raises(UserError, match=r"bert_config.json: no such file"):
    interop.load_encoder(directory)


def test_truncated_and_corrupt_files_name_the_file(release, tmp_path):
  directory = _copy_release(release, tmp_path / "trunc")
  data = os.path.join(directory, "bert_model.ckpt.data-00000-of-00001")
  with open(data, "r+b") as f:
    f.truncate(os.path.getsize(data) // 2)
  with pytest.raises(UserError, match=r"bert_model\.ckpt\.data-00000-of-00001: cannot read"):
    interop.load_encoder(directory)
  index = os.path.join(directory, "bert_model.ckpt.index")
  with open(index, "wb") as f:
    f.write(b"not a checkpoint index")
  with pytest.raises(UserError, match=r"bert_model\.ckpt\.index: cannot read the checkpoint"):
    interop.load_encoder(directory)


def test_bad_config_values_name_the_file(tmp_path):
  path = tmp_path / "bert_config.json"
  path.write_text(json.dumps({**CONFIG, "hidden_act": "swish"}))
  with pytest.raises(UserError, match=r"bert_config.json: hidden_act='swish'"):
    google_checkpoint.read_config(str(path))
  path.write_text(json.dumps({k: v for k, v in CONFIG.items() if k != "hidden_size"}))
  with pytest.raises(UserError, match=r"missing key\(s\) \['hidden_size'\]"):
    google_checkpoint.read_config(str(path))
  path.write_text("{\n  \"vocab_size\": 3,\n oops")
  with pytest.raises(UserError, match=r"bert_config.json:3: not valid JSON"):
    google_checkpoint.read_config(str(path))


def test_object_based_tf2_checkpoint_is_refused_clearly(tmp_path):
  prefix = tf.train.Checkpoint(v=tf.Variable(1.0)).write(str(tmp_path / "ckpt"))
  with open(tmp_path / "bert_config.json", "w") as f:
    json.dump(CONFIG, f)
  with pytest.raises(UserError, match="object-based TF2 checkpoint"):
    interop.load_encoder(prefix)


def test_causal_models_cannot_be_written_as_google_bert(tmp_path):
  from bert_keras.models.bert_encoder import BertEncoder
  encoder = BertEncoder(vocab_size=20, hidden_size=8, num_layers=1, num_heads=2,
                        intermediate_size=16, attention="causal")
  with pytest.raises(UserError, match="attention='causal'"):
    interop.save_google_checkpoint(encoder, str(tmp_path))


@pytest.mark.parametrize("name,expected", [("uncased_L-12_H-768_A-12", True),
                                           ("cased_L-12_H-768_A-12", False),
                                           ("wwm_uncased_L-24_H-1024_A-16", True),
                                           ("multi_cased_L-12_H-768_A-12", False),
                                           ("my_model", None)])
def test_casing_from_release_directory_name(name, expected):
  assert google_checkpoint.casing_from_name(f"/models/{name}/bert_model.ckpt") is expected
