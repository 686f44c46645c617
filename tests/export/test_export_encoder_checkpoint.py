"""scripts/export_model.py --init_checkpoint: a tiny encoder saved as a Google release directory
(bert_config.json, bert_model.ckpt.*, vocab.txt) is exported for feature extraction; the SavedModel
gives the features the encoder computes in memory on the same text, with casing and length stored."""

import json
import os
import subprocess
import sys

import keras
import numpy as np
import pytest
import tensorflow as tf

from bert_keras.errors import UserError
from bert_keras.export.export_config import ExportConfig, run_export
from bert_keras.interop.loader import save_google_checkpoint
from bert_keras.models.bert_encoder import BertEncoder
from bert_keras.tasks.packing import pack_batch
from bert_keras.text.bert_tokenizer import BertTokenizer
from bert_keras.configs.model import get_model_config

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SEQ = 16
VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", ".", ",", "the", "cat", "sat", "on", "mat",
         "##s", "dog", "ran", "東", "京", "zurich"]
TEXTS = ["The cat sat on the mats.", "", "Zürich 東京 — the dog ran, the dog ran. " * 5]
TEXTS_B = ["The dog ran.", "mat", ""]


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
  """(release directory, the encoder whose weights it holds)."""
  root = tmp_path_factory.mktemp("ckpt")
  (root / "vocab.txt").write_text("\n".join(VOCAB) + "\n", encoding="utf-8")
  keras.utils.set_random_seed(5)
  # The original's "gelu" is the tanh approximation: a Google checkpoint imports as gelu_tanh.
  config = get_model_config("bert_tiny", vocab_size=len(VOCAB), num_layers=2, hidden_size=32,
                            num_heads=2, intermediate_size=64, hidden_act="gelu_tanh")
  encoder = BertEncoder.from_model_config(config)
  directory = root / "uncased_tiny"  # the original release naming says the casing
  save_google_checkpoint(encoder, str(directory), vocab_path=str(root / "vocab.txt"))
  return directory, encoder


@pytest.mark.slow
def test_script_exports_an_encoder_checkpoint(checkpoint, tmp_path):
  directory, encoder = checkpoint
  out = tmp_path / "encoder_export"
  env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
  run = subprocess.run([sys.executable, "scripts/export_model.py",
                        f"--init_checkpoint={directory}", f"--max_seq_length={SEQ}",
                        f"--output_dir={out}"], capture_output=True, text=True, env=env, cwd=ROOT,
                       timeout=600)
  assert run.returncode == 0, run.stderr[-2000:]
  assert "encoder" in run.stdout
  config = json.loads((out / "assets.extra" / "export_config.json").read_text())
  assert config["init_checkpoint"] == str(directory) and config["max_seq_length"] == SEQ
  info = json.loads((out / "assets.extra" / "export_info.json").read_text())
  assert info["kind"] == "encoder" and info["lower_case"] is True

  loaded = tf.saved_model.load(str(out))
  assert loaded.kind.numpy() == b"encoder" and int(loaded.max_seq_length.numpy()) == SEQ
  with open(loaded.vocab_file.asset_path.numpy().decode(), encoding="utf-8") as f:
    assert f.read().split("\n")[:-1] == VOCAB
  tokenizer = BertTokenizer(vocabulary=VOCAB)
  for args in ([TEXTS], [TEXTS, TEXTS_B]):
    out_features = loaded.serve(*map(tf.constant, args))
    b = None if len(args) == 1 else [tokenizer.encode([t])[0] or None for t in TEXTS_B]
    rows = [pack_batch([a], None if b is None or b[i] is None else [b[i]], SEQ, tokenizer.cls_id,
                       tokenizer.sep_id, tokenizer.pad_id) for i, a in
            enumerate(tokenizer.encode(TEXTS))]
    inputs = {k: np.concatenate([r[k] for r in rows]) for k in rows[0]}
    expected = encoder(inputs, training=False)
    np.testing.assert_allclose(out_features["pooled_output"], expected["pooled_output"],
                               atol=1e-5)
    np.testing.assert_allclose(out_features["sequence_output"], expected["sequence_output"],
                               atol=1e-5)
    np.testing.assert_allclose(out_features["encoder_outputs"][:, -1],
                               expected["encoder_outputs"][-1], atol=1e-5)
    np.testing.assert_array_equal(out_features["input_mask"], inputs["input_mask"])
    if len(args) == 1:  # serving_default takes text_a alone for an encoder
      default = loaded.signatures["serving_default"](text_a=tf.constant(TEXTS))
      np.testing.assert_allclose(default["pooled_output"], expected["pooled_output"], atol=1e-5)


def test_vocab_that_does_not_fit_the_checkpoint_is_a_user_error(checkpoint, tmp_path):
  directory, _ = checkpoint
  vocab = tmp_path / "vocab.txt"
  vocab.write_text("\n".join(VOCAB[:-1]) + "\n", encoding="utf-8")
  with pytest.raises(UserError, match=f"{len(VOCAB) - 1} tokens but the encoder has "
                                      f"vocab_size={len(VOCAB)}"):
    run_export(ExportConfig(output_dir=str(tmp_path / "x"), init_checkpoint=str(directory),
                            vocab_file=str(vocab), max_seq_length=SEQ))
  assert not (tmp_path / "x").exists()


def test_max_seq_length_beyond_the_positions_is_a_user_error(checkpoint, tmp_path):
  directory, encoder = checkpoint
  positions = encoder.model_config.max_position_embeddings
  with pytest.raises(UserError, match=f"max_seq_length={positions + 1} exceeds "
                                      f"max_position_embeddings={positions}"):
    run_export(ExportConfig(output_dir=str(tmp_path / "x"), init_checkpoint=str(directory),
                            max_seq_length=positions + 1))
  assert not (tmp_path / "x").exists()


def test_max_seq_length_for_a_fine_tuned_task_is_refused_not_ignored(tmp_path):
  """A fine-tuned task serves the length it was trained with; a --max_seq_length given with
  --finetuned_dir used to be dropped without a word."""
  run_dir = tmp_path / "run"
  run_dir.mkdir()
  (run_dir / "task_info.json").write_text(json.dumps({"task": "polarity", "max_seq_length": 24}))
  with pytest.raises(UserError, match="--max_seq_length=48: applies to encoder exports only"):
    run_export(ExportConfig(output_dir=str(tmp_path / "x"), finetuned_dir=str(run_dir),
                            max_seq_length=48))
  assert not (tmp_path / "x").exists()
