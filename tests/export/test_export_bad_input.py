"""Exports and predictions on input that used to lose data or fail obscurely: an output_dir that
holds the source or other files, records with and without text_b in one file, an empty input file,
an empty batch, and text_a / text_b of different lengths."""

import json
import os
import subprocess
import sys

import keras
import numpy as np
import pytest
import tensorflow as tf

from bert_keras.errors import UserError
from bert_keras.export import saved_model_predictor as predictor
from bert_keras.export.export_config import ExportConfig, check_output_dir, run_export
from bert_keras.models.bert_encoder import BertEncoder
from bert_keras.models.heads.bert_classifier import BertClassifier
from bert_keras.configs.model import get_model_config

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SEQ = 16
LABELS = ["neg", "pos"]
VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "film", "was", "good", "bad", "a",
         "plot", "##s", ",", "."]


def _finetune_dir(path, num_segments):
  """A run_finetuning-style directory of a tiny classifier (hidden 16: row groups split in 2)."""
  path.mkdir()
  keras.utils.set_random_seed(5)
  config = get_model_config("bert_tiny", vocab_size=len(VOCAB), hidden_size=16, num_layers=2,
                            num_heads=2, intermediate_size=32, max_position_embeddings=SEQ)
  model = BertClassifier(BertEncoder.from_model_config(config), len(LABELS), name="polarity")
  model({"input_word_ids": np.ones((1, 8), np.int32), "input_mask": np.ones((1, 8), np.int32),
         "input_type_ids": np.zeros((1, 8), np.int32)})
  model.save(str(path / "model.keras"))
  (path / "vocab.txt").write_text("\n".join(VOCAB) + "\n")
  info = {"task": "polarity", "label_names": LABELS, "max_seq_length": SEQ,
          "num_segments": num_segments, "regression": False, "lower_case": True,
          "vocab_file": "vocab.txt"}
  (path / "task_info.json").write_text(json.dumps(info))
  return path


def _tree(path):
  """Every file under path with its bytes: to check that nothing was touched."""
  files = {}
  for root, _, names in os.walk(path):
    for name in names:
      with open(os.path.join(root, name), "rb") as f:
        files[os.path.relpath(os.path.join(root, name), path)] = f.read()
  return files


@pytest.fixture(scope="module")
def exports(tmp_path_factory):
  """(single-text finetune dir, its export, pair export), exported once for the module."""
  base = tmp_path_factory.mktemp("bad_input")
  single = _finetune_dir(base / "single", 1)
  pair = _finetune_dir(base / "pair", 2)
  run_export(ExportConfig(output_dir=str(base / "single_export"), finetuned_dir=str(single)))
  run_export(ExportConfig(output_dir=str(base / "pair_export"), finetuned_dir=str(pair)))
  return single, base / "single_export", base / "pair_export"


def test_output_dir_that_is_or_holds_the_source_is_refused_untouched(exports):
  single = exports[0]
  before = _tree(single.parent)
  for output_dir in (single, single.parent, str(single) + "/"):
    with pytest.raises(UserError, match="finetuned_dir"):
      run_export(ExportConfig(output_dir=str(output_dir), finetuned_dir=str(single)))
  with pytest.raises(UserError, match="vocab_file"):
    run_export(ExportConfig(output_dir=str(single.parent / "v"), finetuned_dir=str(single),
                            vocab_file=str(single.parent / "v" / "vocab.txt")))
  assert _tree(single.parent) == before


def test_existing_directory_that_is_no_export_is_refused_untouched(exports, tmp_path):
  (tmp_path / "notes").mkdir()
  (tmp_path / "notes" / "keep.txt").write_text("mine")
  (tmp_path / "file").write_text("also mine")
  for name in ("notes", "file"):
    with pytest.raises(UserError, match="output_dir=.*" + name):
      run_export(ExportConfig(output_dir=str(tmp_path / name), finetuned_dir=str(exports[0])))
  assert _tree(tmp_path) == {"notes/keep.txt": b"mine", "file": b"also mine"}


def test_remote_output_dir_that_is_no_export_is_refused_untouched(exports, tmp_path):
  """The same check through TensorFlow's file systems (gs://, s3://): here its in-memory ram://."""
  root = f"ram://export_check_{os.getpid()}_{tmp_path.name}"
  tf.io.gfile.makedirs(root + "/notes")
  for path in (root + "/notes/keep.txt", root + "/file"):
    with tf.io.gfile.GFile(path, "w") as f:
      f.write("mine")
  with pytest.raises(UserError, match=r"output_dir=ram://.*/notes is a non-empty directory that "
                     r"is not an earlier export"):
    run_export(ExportConfig(output_dir=root + "/notes", finetuned_dir=str(exports[0])))
  with pytest.raises(UserError, match=r"output_dir=ram://.*/file is a file"):
    run_export(ExportConfig(output_dir=root + "/file", finetuned_dir=str(exports[0])))
  assert sorted(tf.io.gfile.listdir(root + "/notes")) == ["keep.txt"]
  for path in (root + "/notes/keep.txt", root + "/file"):
    with tf.io.gfile.GFile(path) as f:
      assert f.read() == "mine"
  # An earlier export there passes the check (the writer then replaces it).
  tf.io.gfile.makedirs(root + "/earlier")
  with tf.io.gfile.GFile(root + "/earlier/saved_model.pb", "w") as f:
    f.write("x")
  check_output_dir(ExportConfig(output_dir=root + "/earlier", finetuned_dir=str(exports[0])))
  check_output_dir(ExportConfig(output_dir=root + "/new", finetuned_dir=str(exports[0])))


def test_output_dir_that_is_or_lies_under_a_file_is_refused_untouched(exports, tmp_path):
  a_file = tmp_path / "a_file"
  a_file.write_text("mine")
  for output_dir in (a_file, a_file / "sub"):
    with pytest.raises(UserError, match="a_file"):
      run_export(ExportConfig(output_dir=str(output_dir), finetuned_dir=str(exports[0])))
  assert a_file.read_text() == "mine" and sorted(os.listdir(tmp_path)) == ["a_file"]


def test_an_earlier_export_and_an_empty_directory_are_replaced(exports, tmp_path):
  single, earlier, _ = exports
  out = tmp_path / "out"
  out.mkdir()
  for _ in range(2):  # an empty directory, then the export written by the first pass
    run_export(ExportConfig(output_dir=str(out), finetuned_dir=str(single)))
    assert (out / "saved_model.pb").is_file()
  assert sorted(os.listdir(tmp_path)) == ["out"]  # no temporary or old copy left
  assert (earlier / "saved_model.pb").is_file()


def test_an_earlier_export_of_another_task_needs_overwrite(exports, tmp_path, capsys):
  single, earlier, _ = exports
  other = tmp_path / "other"
  other.mkdir()
  for name in os.listdir(single):
    (other / name).write_bytes((single / name).read_bytes())
  info = json.loads((other / "task_info.json").read_text())
  (other / "task_info.json").write_text(json.dumps(dict(info, task="glue/sst2")))
  before = _tree(earlier)
  with pytest.raises(UserError, match=r"holds an export of task 'polarity', not of task "
                     r"'glue/sst2': pass --overwrite"):
    run_export(ExportConfig(output_dir=str(earlier), finetuned_dir=str(other)))
  assert _tree(earlier) == before
  out = tmp_path / "out"
  (out / "assets.extra").mkdir(parents=True)
  (out / "saved_model.pb").write_bytes(before["saved_model.pb"])
  (out / "assets.extra" / "export_info.json").write_text(
      before[os.path.join("assets.extra", "export_info.json")].decode())
  run_export(ExportConfig(output_dir=str(out), finetuned_dir=str(other), overwrite=True))
  assert "replacing an export of task 'polarity'" in capsys.readouterr().err
  assert json.loads((out / "assets.extra" / "export_info.json").read_text())["task"] == "glue/sst2"


def test_export_config_records_the_settings_the_export_used(exports):
  """Nothing was given but the source: export_config.json says what the export resolved (the
  task's length, head groups by width, the source's vocabulary and casing), as export_info.json
  and the SavedModel do, not the flags' defaults."""
  finetune_dir, export_dir, _ = exports
  config = json.loads((export_dir / "assets.extra" / "export_config.json").read_text())
  info = json.loads((export_dir / "assets.extra" / "export_info.json").read_text())
  assert config["max_seq_length"] == info["max_seq_length"] == SEQ
  assert config["head_groups"] == info["head_groups"] == 2  # hidden 16: by width
  assert config["length_buckets"] == ",".join(map(str, info["length_buckets"])) == str(SEQ)
  assert config["lower_case"] is True
  assert config["vocab_file"] == os.path.join(str(finetune_dir), "vocab.txt")
  # It is a --config_file of the same export (scripts/export_model.py).
  path = str(export_dir / "assets.extra" / "export_config.json")
  assert ExportConfig.from_file(path).to_dict() == config
  loaded = tf.saved_model.load(str(export_dir))
  assert int(loaded.max_seq_length.numpy()) == SEQ


def test_answers_do_not_depend_on_batch_neighbours(exports):
  """A single-text model: a missing text_b, sent as "" beside records that have one, packs text_a
  alone (the serving rule for a text_b with no pieces), as the record would alone."""
  loaded = predictor.load(str(exports[1]))
  records = [{"text_a": "the film was good"}, {"text_a": "a bad plot", "text_b": "the film"},
             {"text_a": "good good"}, {"text_a": "bad", "text_b": ""}]
  together = predictor.predict(loaded, records, batch_size=4)
  alone = [predictor.predict(loaded, [record])[0] for record in records]
  for got, want in zip(together, alone):
    np.testing.assert_allclose(got["probabilities"], want["probabilities"], atol=1e-6)
    assert got["label"] == want["label"]


def test_pair_model_requires_text_b_naming_the_record(exports):
  loaded = predictor.load(str(exports[2]))
  records = [{"text_a": "the film", "text_b": "was good"}, {"text_a": "bad"}]
  with pytest.raises(UserError, match=r"in.jsonl:9: missing \['text_b'\].*pairs"):
    predictor.predict(loaded, records, where=["in.jsonl:3", "in.jsonl:9"])
  assert len(predictor.predict(loaded, records[:1])) == 1


def test_empty_input_file_is_an_error(exports, tmp_path):
  empty = tmp_path / "empty.jsonl"
  empty.write_text("\n  \n")
  out = tmp_path / "out.jsonl"
  run = subprocess.run([sys.executable, "scripts/predict.py", f"--saved_model={exports[1]}",
                        f"--input_files={empty}", f"--output_file={out}"], capture_output=True,
                       text=True, cwd=ROOT, timeout=600,
                       env=dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="3"))
  assert run.returncode == 2, run.stderr[-2000:]
  assert "no records" in run.stderr and str(empty) in run.stderr
  assert not out.exists()


def test_empty_batch_gives_empty_outputs(exports):
  loaded = predictor.load(str(exports[2]))  # a pair model: text_a alone is refused
  for outputs in (loaded.serve(tf.constant([], tf.string), tf.constant([], tf.string)),
                  loaded.signatures["serving_tokenized"](
                      **{name: tf.zeros((0, SEQ), tf.int32) for name in
                         ("input_word_ids", "input_mask", "input_type_ids")})):
    assert outputs["probabilities"].shape == (0, len(LABELS))
    assert outputs["label"].shape[0] == 0


def test_text_a_and_text_b_of_different_lengths_are_named(exports):
  for path in exports[1:]:
    loaded = predictor.load(str(path))
    with pytest.raises(tf.errors.InvalidArgumentError, match="text_a has 2 rows but text_b has 1"):
      loaded.serve(tf.constant(["good", "bad"]), tf.constant(["the film"]))
    with pytest.raises(tf.errors.InvalidArgumentError, match="text_a has 1 rows but text_b has 3"):
      loaded.signatures["serving_text_pair"](text_a=tf.constant(["good"]),
                                             text_b=tf.constant(["a", "b", "c"]))
