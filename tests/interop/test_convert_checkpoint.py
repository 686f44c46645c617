import json
import os
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf

from bert_keras import interop
from bert_keras.errors import UserError
from bert_keras.interop.convert import convert_checkpoint
from tests.interop import interop_fixtures as fx

CONFIG = fx.TINY_GOOGLE_CONFIG
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture(scope="module")
def release(tmp_path_factory):
  directory = str(tmp_path_factory.mktemp("conv") / "uncased_L-2_H-32_A-4")
  weights = fx.random_google_weights(CONFIG, heads=True, seed=11)
  fx.write_tf1_checkpoint(weights, directory, CONFIG)
  return directory, weights


def test_google_to_keras_to_google_through_files(release, tmp_path):
  directory, weights = release
  summary = convert_checkpoint("google", "keras", directory, str(tmp_path / "keras"))
  assert summary["objective"] == "mlm_nsp"
  assert os.path.basename(summary["outputs"][0]) == "pretrainer.keras"
  assert os.path.exists(tmp_path / "keras" / "model_config.json")
  assert json.loads((tmp_path / "keras" / "convert_config.json").read_text())["from"] == "google"

  summary = convert_checkpoint("keras", "google", str(tmp_path / "keras"), str(tmp_path / "back"))
  reader = tf.train.load_checkpoint(summary["outputs"][0])
  assert set(reader.get_variable_to_shape_map()) == set(weights)
  for name, array in weights.items():
    np.testing.assert_array_equal(reader.get_tensor(name), array, err_msg=name)
  assert json.loads((tmp_path / "back" / "bert_config.json").read_text()) == CONFIG
  assert not [f for f in os.listdir(tmp_path / "back") if f.startswith(".tmp")]


def test_converting_again_into_a_directory_replaces_the_other_model(release, tmp_path):
  """encoder.keras and pretrainer.keras never sit side by side: the loader prefers encoder.keras,
  so a stale one would shadow a pretrainer converted later into the same directory."""
  directory, _ = release
  encoder_only = str(tmp_path / "encoder_release")
  fx.write_tf1_checkpoint(fx.random_google_weights(CONFIG, heads=False, seed=3), encoder_only,
                          CONFIG)
  out = tmp_path / "keras"
  convert_checkpoint("google", "keras", encoder_only, str(out))
  assert sorted(f for f in os.listdir(out) if f.endswith(".keras")) == ["encoder.keras"]
  convert_checkpoint("google", "keras", directory, str(out))
  assert sorted(f for f in os.listdir(out) if f.endswith(".keras")) == ["pretrainer.keras"]
  assert interop.detect_format(str(out)) == ("keras", str(out / "pretrainer.keras"))
  convert_checkpoint("google", "keras", encoder_only, str(out))
  assert sorted(f for f in os.listdir(out) if f.endswith(".keras")) == ["encoder.keras"]


def test_wrong_source_format_vocab_and_casing(release, tmp_path):
  directory, _ = release
  with pytest.raises(UserError, match=r"looks like a 'google' checkpoint, not --from=hf"):
    convert_checkpoint("hf", "keras", directory, str(tmp_path / "x"))
  vocab = tmp_path / "vocab.txt"
  vocab.write_text("[PAD]\n[UNK]\nhello\n")
  with pytest.raises(UserError, match=r"vocab.txt: 3 vocabulary entries but .*vocab_size=57"):
    convert_checkpoint("google", "google", directory, str(tmp_path / "y"), vocab_file=str(vocab))
  summary = convert_checkpoint("google", "google", directory, str(tmp_path / "z"),
                               tokenizer_lower_case=False)
  assert any("uncased checkpoint" in w for w in summary["warnings"])
  cased = tmp_path / "cased_vocab.txt"
  cased.write_text("\n".join(["[PAD]", "[UNK]"] + [f"Word{i}" for i in range(55)]) + "\n")
  summary = convert_checkpoint("google", "keras", directory, str(tmp_path / "w"),
                               vocab_file=str(cased))
  assert any("uncased checkpoint but the tokenizer is cased" in w for w in summary["warnings"])
  assert open(tmp_path / "w" / "vocab.txt").read() == cased.read_text()


def _script(*args):
  env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
  return subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "convert_checkpoint.py"),
                         *args], capture_output=True, text=True, env=env, cwd=ROOT, timeout=300)


@pytest.mark.slow
def test_script_converts_the_real_minilm(tmp_path):
  from bert_keras import resources
  result = _script("--from=hf", "--to=google", f"--init_checkpoint={resources.minilm_dir()}",
                   f"--output_dir={tmp_path / 'minilm'}")
  assert result.returncode == 0, result.stderr
  encoder, info = interop.load_encoder(str(tmp_path / "minilm"), hidden_act="gelu")
  assert info.lower_case is True and info.config.num_layers == 6
  ids = np.array([[101, 7592, 2088, 1010, 2023, 2003, 14324, 1012, 102]], "int32")
  value = encoder(fx.as_model_inputs(ids, np.ones_like(ids), np.zeros_like(ids)))
  assert abs(float(value["sequence_output"][0, 0, 0]) - -0.2567713) < 1e-5


def test_shape_mismatch_names_the_variable_and_both_shapes(release, tmp_path):
  # The script turns this UserError into one `error:` line and exit 2: a subprocess case of
  # tests/reliability/test_script_errors_bert.py::test_convert_checkpoint_refuses_pickle.
  bad = dict(release[1])
  bad["bert/pooler/dense/kernel"] = bad["bert/pooler/dense/kernel"][:5]
  fx.write_tf1_checkpoint(bad, str(tmp_path / "bad"), CONFIG)
  with pytest.raises(UserError) as error:
    convert_checkpoint("google", "keras", str(tmp_path / "bad"), str(tmp_path / "out"))
  assert "bert/pooler/dense/kernel has shape (5, 32) in the checkpoint but shape (32, 32)" in str(
      error.value)
  assert "\n" not in str(error.value)  # one line
