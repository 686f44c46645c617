"""From pretraining to fine-tuning: a run_pretraining model_dir is a checkpoint the loader takes as
it is (it stands for export/, where the run writes encoder.keras and the records' vocab.txt); a
model_dir whose run has not finished says so and what to pass. End to end: create_pretraining_data
-> run_pretraining -> run_finetuning --init_checkpoint=<model_dir> and convert_checkpoint
--init_checkpoint=<model_dir>, each a fresh process, with no --vocab_file."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from bert_keras import interop, resources
from bert_keras.errors import UserError
from bert_keras.keras_classes import load_model
from bert_keras.models.bert_encoder import BertEncoder
from bert_keras.training.input_files import resolve_input_files
from bert_keras.training.records_vocab import records_vocab
from bert_keras.configs.model import get_model_config

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "cat", "sat"]


def _model_dir(root, with_export=True):
  """A run_pretraining model_dir's layout: training_config.json, Trainer checkpoints, export/."""
  model_dir = root / "pretrain"
  model_dir.mkdir()
  (model_dir / "training_config.json").write_text("{}\n")
  (model_dir / "checkpoint").write_text('model_checkpoint_path: "ckpt-2"\n')
  for name in ("ckpt-2.index", "ckpt-2.data-00000-of-00001"):
    (model_dir / name).write_bytes(b"")
  if with_export:
    export = model_dir / "export"
    export.mkdir()
    config = get_model_config("bert_tiny", vocab_size=len(VOCAB), num_layers=1, hidden_size=16,
                              num_heads=2, intermediate_size=32)
    BertEncoder.from_model_config(config).save(str(export / "encoder.keras"))
    (export / "vocab.txt").write_text("\n".join(VOCAB) + "\n")
  return model_dir


def test_a_model_dir_stands_for_its_export(tmp_path):
  model_dir = _model_dir(tmp_path)
  assert interop.detect_format(str(model_dir)) == ("keras", str(model_dir / "export" /
                                                               "encoder.keras"))
  encoder, info = interop.load_encoder(str(model_dir))
  assert info.vocab_path == str(model_dir / "export" / "vocab.txt")
  assert encoder.model_config.vocab_size == len(VOCAB) and info.loaded


def test_an_unfinished_model_dir_says_to_finish_the_run(tmp_path):
  model_dir = _model_dir(tmp_path, with_export=False)
  with pytest.raises(UserError, match=r"run_pretraining model_dir with no export/ yet") as error:
    interop.load_encoder(str(model_dir))
  assert f"--init_checkpoint={model_dir}" in str(error.value)
  assert str(model_dir / "export") in str(error.value)


def test_records_vocab_is_the_one_their_summary_names(tmp_path):
  vocab = tmp_path / "vocab.txt"
  vocab.write_text("\n".join(VOCAB) + "\n")
  records = tmp_path / "len64"
  records.mkdir()
  (records / "pretraining-00000-of-00001.tfrecord").write_bytes(b"")
  pattern = str(records / "pretraining-*.tfrecord")
  assert records_vocab(resolve_input_files(pattern), len(VOCAB))[0] is None  # no summary.json yet
  (records / "summary.json").write_text(json.dumps(
      {"config": {"vocab_file": str(vocab)},
       "files": [{"name": "pretraining-00000-of-00001.tfrecord", "bytes": 0}]}))
  assert records_vocab(resolve_input_files(pattern), len(VOCAB)) == (
      str(vocab), f"named by {records}/summary.json")
  found, why_not = records_vocab(resolve_input_files(pattern), 30522)
  assert found is None and f"{len(VOCAB)} entries but the model has vocab_size=30522" in why_not


def _run(*args, cwd):
  env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
  result = subprocess.run([sys.executable, *args], capture_output=True, text=True, env=env,
                          cwd=cwd, timeout=900)
  assert result.returncode == 0, f"{args[0]}: {result.stderr[-3000:]}"
  return result


@pytest.mark.slow
def test_pretraining_then_finetuning_from_the_model_dir(tmp_path):
  with open(resources.lee_background_path(), encoding="utf-8") as f:
    documents = [line.strip() for line in f if line.strip()][:30]
  # bert_text: one sentence per line, a blank line between documents.
  (tmp_path / "corpus.txt").write_text(
      "\n\n".join("\n".join(s.strip() + "." for s in d.split(". ") if s.strip())
                  for d in documents) + "\n", encoding="utf-8")
  scripts = os.path.join(ROOT, "scripts")
  _run(os.path.join(scripts, "create_pretraining_data.py"), "--input_files=corpus.txt",
       "--input_format=bert_text", "--output_dir=data/len64", "--max_seq_length=64",
       "--max_predictions_per_seq=10", "--dupe_factor=1", "--num_shards=1", cwd=tmp_path)
  _run(os.path.join(scripts, "run_pretraining.py"), f"--config_file={os.path.join(ROOT, 'configs', 'training', 'tiny_debug.json')}",
       "--input_files=data/len64/pretraining-*.tfrecord", "--output_dir=out/pretrain",
       "--num_train_steps=3", "--num_warmup_steps=1", "--checkpoint_every=3", cwd=tmp_path)
  export = tmp_path / "out" / "pretrain" / "export"
  with open(export / "vocab.txt", "rb") as copied, open(resources.uncased_vocab_path(),
                                                        "rb") as original:
    assert copied.read() == original.read()  # the records' vocabulary (summary.json's)

  _run(os.path.join(scripts, "run_finetuning.py"), "--task=polarity",
       "--init_checkpoint=out/pretrain", "--output_dir=out/polarity", "--num_epochs=1",
       "--max_train_examples=16", "--train_batch_size=8", cwd=tmp_path)
  resolved = json.loads((tmp_path / "out" / "polarity" / "config.json").read_text())
  assert "out/pretrain/export/encoder.keras" in json.dumps(resolved)
  assert (tmp_path / "out" / "polarity" / "metrics.json").is_file()
  # Fine-tuning started from the pretrained weights: each weight moved by at most a few Adam steps
  # of the fine-tuning learning rate (seed 0's random init lies ~0.02 from seed 42's).
  pretrained = load_model(str(export / "encoder.keras"))
  fine_tuned = load_model(str(tmp_path / "out" / "polarity" / "model.keras")).encoder
  bound = 3 * resolved["total_steps"] * resolved["task"]["learning_rate"]
  moved = {w.path: float(np.max(np.abs(w.numpy() - v.numpy())))
           for w, v in zip(fine_tuned.weights, pretrained.weights, strict=True)}
  assert max(moved.values()) <= bound, moved

  _run(os.path.join(scripts, "convert_checkpoint.py"), "--from=keras", "--to=google",
       "--init_checkpoint=out/pretrain", "--output_dir=out/pretrain_google", cwd=tmp_path)
  assert (tmp_path / "out" / "pretrain_google" / "vocab.txt").is_file()
