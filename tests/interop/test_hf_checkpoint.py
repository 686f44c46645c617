import json
import os

import numpy as np
import pytest
from safetensors.numpy import save_file
from scipy.special import erf

from bert_keras import interop, resources
from bert_keras.errors import UserError
from bert_keras.interop import hf_checkpoint
from tests.interop import interop_fixtures as fx

GOLDEN_IDS = [101, 7592, 2088, 1010, 2023, 2003, 14324, 1012, 102]  # "Hello world, this is BERT."
GOLDEN_FIRST_VALUE = -0.2567713  # HF transformers BertModel last_hidden_state[0, 0, 0] (DATA.md)


@pytest.fixture(scope="module")
def minilm():
  return interop.load_encoder(resources.minilm_dir())


def test_minilm_matches_the_transformers_golden_value(minilm):
  encoder, info = minilm
  assert info.format == "hf" and info.lower_case is True and info.unused == []
  assert (info.config.num_layers, info.config.hidden_size, info.config.num_heads,
          info.config.intermediate_size) == (6, 384, 12, 1536)
  ids = np.array([GOLDEN_IDS], "int32")
  outputs = encoder(fx.as_model_inputs(ids, np.ones_like(ids), np.zeros_like(ids)), training=False)
  assert abs(float(outputs["sequence_output"][0, 0, 0]) - GOLDEN_FIRST_VALUE) < 1e-5


def _sentence_embeddings(encoder, sentences):
  """Mean pooling over real tokens, as sentence-transformers' Pooling module does for MiniLM."""
  from bert_keras.text.bert_tokenizer import BertTokenizer

  tokenizer = BertTokenizer(vocab_path=resources.uncased_vocab_path(), lower_case=True)
  assert tokenizer.encode(["Hello world, this is BERT."])[0] == GOLDEN_IDS[1:-1]
  rows = [[tokenizer.cls_id] + ids + [tokenizer.sep_id] for ids in tokenizer.encode(sentences)]
  length = max(len(r) for r in rows)
  ids = np.array([r + [0] * (length - len(r)) for r in rows], "int32")
  mask = (np.arange(length)[None, :] < np.array([len(r) for r in rows])[:, None]).astype("int32")
  sequence = np.asarray(encoder(fx.as_model_inputs(ids, mask, np.zeros_like(ids)),
                                training=False)["sequence_output"])
  pooled = (sequence * mask[..., None]).sum(1) / mask.sum(1, keepdims=True)
  return pooled / np.linalg.norm(pooled, axis=1, keepdims=True)


def test_minilm_paraphrases_are_closer_than_unrelated_sentences(minilm):
  sentences = ["A man is playing a guitar.", "Someone is playing an acoustic guitar.",
               "How can I learn to cook quickly?", "What is the fastest way to learn cooking?",
               "The central bank raised interest rates again."]
  e = _sentence_embeddings(minilm[0], sentences)
  cosine = e @ e.T
  for a, b in ((0, 1), (2, 3)):
    unrelated = [cosine[a, j] for j in range(5) if j not in (a, b)]
    unrelated += [cosine[b, j] for j in range(5) if j not in (a, b)]
    assert cosine[a, b] > max(unrelated) + 0.1, (a, b, cosine)


def _hf_tensors(google, prefix="bert."):
  """The Hugging Face BertForPreTraining layout of Google-named weights (Linear weights (out, in))."""
  t = {}
  for name, array in google.items():
    parts = name.split("/")
    if name.startswith("cls/"):
      continue
    hf = ".".join(parts[1:]).replace("layer_", "layer.")
    hf = hf.replace("LayerNorm.gamma", "LayerNorm.weight").replace("LayerNorm.beta", "LayerNorm.bias")
    if hf.endswith(".kernel"):
      hf, array = hf[:-len("kernel")] + "weight", array.T
    elif hf.startswith("embeddings.") and "LayerNorm" not in hf:
      hf += ".weight"
    t[prefix + hf] = np.ascontiguousarray(array)
  t[prefix + "embeddings.position_ids"] = np.arange(40, dtype="int64")[None]
  if "cls/predictions/output_bias" in google:
    t["cls.predictions.transform.dense.weight"] = np.ascontiguousarray(
        google["cls/predictions/transform/dense/kernel"].T)
    t["cls.predictions.transform.dense.bias"] = google["cls/predictions/transform/dense/bias"]
    t["cls.predictions.transform.LayerNorm.weight"] = google[
        "cls/predictions/transform/LayerNorm/gamma"]
    t["cls.predictions.transform.LayerNorm.bias"] = google["cls/predictions/transform/LayerNorm/beta"]
    t["cls.predictions.bias"] = google["cls/predictions/output_bias"]
    t["cls.predictions.decoder.weight"] = google["bert/embeddings/word_embeddings"]
    t["cls.predictions.decoder.bias"] = google["cls/predictions/output_bias"]
    t["cls.seq_relationship.weight"] = google["cls/seq_relationship/output_weights"]  # (2, H)
    t["cls.seq_relationship.bias"] = google["cls/seq_relationship/output_bias"]
  return t


def _hf_config(google_config, **extra):
  c = google_config
  return {"architectures": ["BertForPreTraining"], "model_type": "bert", "hidden_act": "gelu",
          "hidden_size": c["hidden_size"], "num_hidden_layers": c["num_hidden_layers"],
          "num_attention_heads": c["num_attention_heads"],
          "intermediate_size": c["intermediate_size"], "vocab_size": c["vocab_size"],
          "max_position_embeddings": c["max_position_embeddings"],
          "type_vocab_size": c["type_vocab_size"], "layer_norm_eps": 1e-12, **extra}


def _write_hf(directory, tensors, config, tokenizer_config=None):
  os.makedirs(directory, exist_ok=True)
  save_file(tensors, os.path.join(directory, "model.safetensors"))
  with open(os.path.join(directory, "config.json"), "w") as f:
    json.dump(config, f)
  if tokenizer_config is not None:
    with open(os.path.join(directory, "tokenizer_config.json"), "w") as f:
      json.dump(tokenizer_config, f)
  return str(directory)


@pytest.fixture(scope="module")
def tiny_hf(tmp_path_factory):
  config = fx.TINY_GOOGLE_CONFIG
  google = fx.random_google_weights(config, heads=True, seed=5)
  directory = _write_hf(tmp_path_factory.mktemp("hf") / "tiny", _hf_tensors(google),
                        _hf_config(config), {"do_lower_case": False})
  return directory, google


def test_hf_pretraining_checkpoint_with_prefix_and_heads_matches_the_reference(tiny_hf):
  directory, google = tiny_hf
  config = fx.TINY_GOOGLE_CONFIG
  pretrainer, info = interop.load_pretrainer(directory)
  assert info.missing == [] and info.unused == [] and info.lower_case is False
  assert info.config.hidden_act == "gelu"  # HF's gelu is the exact erf form
  ids, mask, types = fx.sample_inputs(config)
  positions = np.tile(np.arange(ids.shape[1], dtype="int32"), (ids.shape[0], 1))
  outputs = pretrainer(fx.as_model_inputs(ids, mask, types, positions), training=False)
  exact_gelu = lambda x: 0.5 * x * (1.0 + erf(x / np.sqrt(2.0)))
  sequence, _, mlm, nsp = fx.numpy_bert(google, config, ids, mask, types, act=exact_gelu)
  real = mask.astype(bool)
  np.testing.assert_allclose(np.asarray(outputs["mlm_logits"])[real], mlm[real], atol=2e-5)
  np.testing.assert_allclose(np.asarray(outputs["nsp_logits"]), nsp, atol=2e-5)


def test_hf_to_google_keeps_every_tensor(tiny_hf, tmp_path):
  directory, google = tiny_hf
  pretrainer, _ = interop.load_pretrainer(directory)
  prefix, warnings = interop.save_google_checkpoint(pretrainer, str(tmp_path))
  assert any("tanh approximation" in w for w in warnings)
  import tensorflow as tf
  reader = tf.train.load_checkpoint(prefix)
  assert set(reader.get_variable_to_shape_map()) == set(google)
  for name, array in google.items():
    np.testing.assert_array_equal(reader.get_tensor(name), array, err_msg=name)


def test_unprefixed_encoder_only_checkpoint_leaves_heads_fresh(tmp_path):
  config = fx.TINY_GOOGLE_CONFIG
  google = fx.random_google_weights(config, heads=False, seed=6)
  directory = _write_hf(tmp_path / "enc", _hf_tensors(google, prefix=""), _hf_config(config))
  pretrainer, info = interop.load_pretrainer(directory)
  assert "cls/predictions/output_bias" in info.missing
  assert any("cls/seq_relationship/output_weights" in w for w in info.warnings)
  np.testing.assert_array_equal(pretrainer.encoder.token_embedding.embeddings.numpy(),
                                google["bert/embeddings/word_embeddings"])


def test_names_map_to_google_names():
  assert hf_checkpoint.google_name("bert.encoder.layer.11.attention.self.key.weight") == (
      "bert/encoder/layer_11/attention/self/key/kernel", True)
  assert hf_checkpoint.google_name("encoder.layer.0.attention.output.LayerNorm.gamma") == (
      "bert/encoder/layer_0/attention/output/LayerNorm/gamma", False)
  assert hf_checkpoint.google_name("cls.seq_relationship.weight") == (
      "cls/seq_relationship/output_weights", False)
  assert hf_checkpoint.google_name("classifier.weight") is None


def test_unrelated_heads_are_reported_unused(tmp_path):
  config = fx.TINY_GOOGLE_CONFIG
  tensors = _hf_tensors(fx.random_google_weights(config, heads=False))
  tensors["classifier.weight"] = np.zeros((3, config["hidden_size"]), "float32")
  _, info = interop.load_encoder(_write_hf(tmp_path / "cls", tensors, _hf_config(config)))
  assert info.unused == ["classifier.weight"]


def test_bad_hf_inputs_raise_user_errors_naming_the_file(tiny_hf, tmp_path):
  directory, google = tiny_hf
  config = fx.TINY_GOOGLE_CONFIG
  # A pickle is never loaded.
  pickled = tmp_path / "pickled"
  pickled.mkdir()
  (pickled / "pytorch_model.bin").write_bytes(b"\x80\x04not really")
  (pickled / "config.json").write_text(json.dumps(_hf_config(config)))
  with pytest.raises(UserError, match="pickle"):
    interop.load_encoder(str(pickled))
  # Truncated safetensors.
  truncated = tmp_path / "truncated"
  truncated.mkdir()
  data = open(os.path.join(directory, "model.safetensors"), "rb").read()
  (truncated / "model.safetensors").write_bytes(data[: len(data) // 3])
  (truncated / "config.json").write_text(json.dumps(_hf_config(config)))
  with pytest.raises(UserError, match=r"truncated/model.safetensors: cannot read safetensors"):
    interop.load_encoder(str(truncated))
  # Another architecture.
  roberta = _write_hf(tmp_path / "roberta", _hf_tensors(google),
                      _hf_config(config, model_type="roberta"))
  with pytest.raises(UserError, match=r"config.json: model_type='roberta'"):
    interop.load_encoder(roberta)
  # An untied MLM decoder cannot be represented.
  untied = _hf_tensors(google)
  untied["cls.predictions.decoder.weight"] = untied["cls.predictions.decoder.weight"] + 1.0
  with pytest.raises(UserError, match="untied"):
    interop.load_encoder(_write_hf(tmp_path / "untied", untied, _hf_config(config)))
  # config.json disagreeing with the tensors.
  wrong = _write_hf(tmp_path / "wrong", _hf_tensors(google),
                    _hf_config(config, intermediate_size=64))
  with pytest.raises(UserError, match=r"intermediate/dense/kernel has shape \(32, 48\) in the "
                     r"checkpoint but shape \(32, 64\)"):
    interop.load_encoder(wrong)
