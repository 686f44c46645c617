"""scripts/export_model.py on a run_finetuning-style directory, then scripts/predict.py and
saved_model_cli on the result: predict's probabilities are model.keras's softmax on the same text,
packed in Python; bad input ends with one `error:` line and exit status 2."""

import json
import os
import shutil
import subprocess
import sys

import keras
import numpy as np
import pytest

from bert_keras import resources
from bert_keras.models.bert_encoder import BertEncoder
from bert_keras.models.heads.bert_classifier import BertClassifier
from bert_keras.tasks.packing import pack_batch
from bert_keras.text.bert_tokenizer import BertTokenizer
from bert_keras.configs.model import get_model_config

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LABELS = ["negative", "positive"]
SEQ = 24


def _run(*args, **kwargs):
  env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
  return subprocess.run([sys.executable, *args], capture_output=True, text=True, env=env,
                        cwd=ROOT, timeout=600, **kwargs)


@pytest.fixture(scope="module")
def finetune_dir(tmp_path_factory):
  """What run_finetuning leaves: model.keras, task_info.json, vocab.txt."""
  path = tmp_path_factory.mktemp("finetuned")
  keras.utils.set_random_seed(3)
  config = get_model_config("bert_tiny", num_layers=1, hidden_size=32, num_heads=2,
                            intermediate_size=64)
  model = BertClassifier(BertEncoder.from_model_config(config), len(LABELS), name="polarity")
  model({"input_word_ids": np.ones((1, 8), np.int32), "input_mask": np.ones((1, 8), np.int32),
         "input_type_ids": np.zeros((1, 8), np.int32)})
  model.save(str(path / "model.keras"))
  shutil.copyfile(resources.uncased_vocab_path(), path / "vocab.txt")
  info = {"task": "polarity", "label_names": LABELS, "max_seq_length": SEQ, "num_segments": 1,
          "regression": False, "lower_case": True, "vocab_file": "vocab.txt"}
  (path / "task_info.json").write_text(json.dumps(info))
  return path


@pytest.mark.slow
def test_export_then_predict_and_saved_model_cli(finetune_dir, tmp_path):
  out = tmp_path / "export"
  run = _run("scripts/export_model.py", f"--finetuned_dir={finetune_dir}", f"--output_dir={out}",
             "--head_groups=1", "--format=saved_model,litert")
  assert run.returncode == 0, run.stderr[-2000:]
  assert "classification" in run.stdout
  config = json.loads((out / "assets.extra" / "export_config.json").read_text())
  assert config["finetuned_dir"] == str(finetune_dir) and config["head_groups"] == 1
  assert json.loads((out / "assets.extra" / "export_info.json").read_text())["head_groups"] == 1

  texts = ["a gripping film", "", "Zürich — 東京 " * 300]
  records = tmp_path / "in.jsonl"
  records.write_text("".join(json.dumps({"text_a": text}) + "\n" for text in texts))
  run = _run("scripts/predict.py", f"--saved_model={out}", f"--input_files={records}")
  assert run.returncode == 0, run.stderr[-2000:]
  rows = [json.loads(line) for line in run.stdout.splitlines()]
  assert len(rows) == 3
  for row in rows:
    assert row["label"] in LABELS and row["label"] == LABELS[row["label_id"]]
  # The exported weights are model.keras's: its softmax on the same text packed in Python.
  model = keras.saving.load_model(str(finetune_dir / "model.keras"), compile=False)
  tokenizer = BertTokenizer(vocab_path=str(finetune_dir / "vocab.txt"), lower_case=True)
  inputs = pack_batch(tokenizer.encode(texts), None, SEQ, tokenizer.cls_id, tokenizer.sep_id,
                      tokenizer.pad_id)
  logits = np.asarray(model(inputs, training=False)["logits"])
  expected = np.exp(logits - logits.max(-1, keepdims=True))
  expected /= expected.sum(-1, keepdims=True)
  np.testing.assert_allclose([row["probabilities"] for row in rows], expected, atol=1e-5)
  assert [row["label_id"] for row in rows] == expected.argmax(-1).tolist()
  # The litert format: model.tflite beside the SavedModel, which predict.py runs too, same answers.
  run = _run("scripts/predict.py", f"--saved_model={out}/model.tflite", f"--input_files={records}")
  assert run.returncode == 0, run.stderr[-2000:]
  litert_rows = [json.loads(line) for line in run.stdout.splitlines()]
  assert [row["label"] for row in litert_rows] == [row["label"] for row in rows]
  np.testing.assert_allclose([row["probabilities"] for row in litert_rows], expected, atol=1e-5)

  cli = os.path.join(os.path.dirname(sys.executable), "saved_model_cli")
  run = subprocess.run([cli, "show", "--dir", str(out), "--all"], capture_output=True,
                       text=True, timeout=600, env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"))
  assert run.returncode == 0, run.stderr[-2000:]
  for name in ("serving_default", "serving_text_pair", "serving_tokenized", "text_a",
               "input_word_ids", "probabilities"):
    assert name in run.stdout


def test_missing_saved_model_is_a_one_line_error(tmp_path):
  # export_model.py's missing-model.keras error (the same FINETUNE_FILES check) is a subprocess
  # case of tests/reliability/test_script_errors_bert.py::test_export_model_missing_finetune_dir.
  run = _run("scripts/predict.py", f"--saved_model={tmp_path / 'missing'}", "--text_a=x")
  assert run.returncode == 2 and "Traceback" not in run.stderr
  assert "no such export directory" in run.stderr.strip().splitlines()[-1]
