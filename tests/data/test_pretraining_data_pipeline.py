"""The pretraining-data pipeline: argument parsing, end-to-end output, summary, determinism, failures."""

import glob
import json
import os

import numpy as np
import pytest
import tensorflow as tf

from bert_keras import resources
from bert_keras.configs.pretraining_data import PretrainingDataConfig
from bert_keras.data.pretraining_data_pipeline import config_from_args, parse_args, run
from bert_keras.data.pretraining_records import parse_pretraining_example
from bert_keras.errors import UserError

IN_MEMORY = ["--direct_running_mode=in_memory", "--direct_num_workers=1"]


def test_parse_args_passes_beam_options_through():
  known, beam_args = parse_args(["--output_dir=gs://b/out", "--dupe_factor=3", "--runner=DataflowRunner",
                                 "--project=p", "--region=us-central1", "--temp_location=gs://b/tmp",
                                 "--setup_file=./setup.py"])
  assert known.dupe_factor == 3 and known.output_dir == "gs://b/out"
  assert beam_args == ["--runner=DataflowRunner", "--project=p", "--region=us-central1",
                       "--temp_location=gs://b/tmp", "--setup_file=./setup.py"]


def test_direct_runner_defaults_to_multi_processing():
  _, beam_args = parse_args(["--output_dir=o"])
  assert "--direct_running_mode=multi_processing" in beam_args
  assert any(a.startswith("--direct_num_workers=") for a in beam_args)
  assert beam_args[0] == "--runner=FnApiRunner"  # never Prism, which downloads a binary
  _, beam_args = parse_args(["--output_dir=o"] + IN_MEMORY)
  assert beam_args == ["--runner=FnApiRunner"] + IN_MEMORY


def test_config_defaults_are_the_paper_and_the_embedded_data():
  config = config_from_args(parse_args(["--output_dir=o"])[0])
  assert config.input_files == resources.wikipedia_dump_path()
  assert config.vocab_file == resources.uncased_vocab_path()
  assert (config.max_seq_length, config.max_predictions_per_seq, config.masked_lm_prob,
          config.short_seq_prob, config.dupe_factor) == (128, 20, 0.15, 0.1, 10)
  assert config_from_args(parse_args(["--output_dir=o", "--max_seq_length=512"])[0]).max_predictions_per_seq == 80
  with pytest.raises(UserError, match="dupe_factor=0"):
    PretrainingDataConfig(dupe_factor=0)
  with pytest.raises(UserError, match="--input_files is required"):
    config_from_args(parse_args(["--output_dir=o", "--input_format=jsonl"])[0])


def _lee_args(out, *extra):
  return [f"--input_files={resources.lee_background_path()}", "--input_format=lines", f"--output_dir={out}",
          "--max_seq_length=64", "--max_predictions_per_seq=10", "--dupe_factor=2", "--num_shards=3",
          "--docs_per_bucket=16"] + list(extra)


def _shard_bytes(out):
  return {os.path.basename(p): open(p, "rb").read() for p in sorted(glob.glob(os.path.join(out, "*.tfrecord*")))}


def _parse_all(out, seq=64, preds=10, compression=""):
  files = sorted(glob.glob(os.path.join(out, "*.tfrecord*")))
  ds = tf.data.TFRecordDataset(files, compression_type=compression).batch(4096)
  batches = [parse_pretraining_example(s, seq, preds) for s in ds]
  return {k: np.concatenate([b[k].numpy() for b in batches]) for k in batches[0]}


@pytest.fixture(scope="module")
def lee_run(tmp_path_factory):
  out = str(tmp_path_factory.mktemp("lee") / "out")
  summary = run(_lee_args(out, *IN_MEMORY))
  return out, summary


def test_end_to_end_output_and_summary(lee_run):
  out, summary = lee_run
  names = sorted(os.listdir(out))
  assert names == ["pretraining-00000-of-00003.tfrecord", "pretraining-00001-of-00003.tfrecord",
                   "pretraining-00002-of-00003.tfrecord", "summary.json"]
  on_disk = json.load(open(os.path.join(out, "summary.json")))
  assert on_disk["instances"] == summary["instances"] > 1000
  assert on_disk["documents"] == 300 and on_disk["config"]["dupe_factor"] == 2
  assert [f["name"] for f in on_disk["files"]] == names[:3]
  # summary.json is a --config_file of the same run (its "config": the resolved flags).
  again, _ = parse_args([f"--config_file={out}/summary.json"])
  assert config_from_args(again).to_dict() == on_disk["config"]
  data = _parse_all(out)
  n = len(data["input_ids"])
  assert n == summary["instances"]
  # Statistics of the generated set, within tolerances of the paper's procedure.
  tokens = data["input_mask"].sum()
  assert summary["instance_tokens"] == tokens
  assert 0.13 < data["masked_lm_weights"].sum() / tokens < 0.17
  assert 0.4 < data["next_sentence_labels"].mean() < 0.65
  assert abs(summary["masked_as_mask_fraction"] - 0.8) < 0.03
  assert abs(summary["masked_as_random_fraction"] - 0.1) < 0.03
  lengths = data["input_mask"].sum(1)
  assert lengths.max() <= 64 and (lengths > 56).mean() > 0.5
  cls, sep, mask = 101, 102, 103
  assert (data["input_ids"][:, 0] == cls).all()
  assert ((data["input_ids"] == sep).sum(1) == 2).all()
  rows, cols = np.nonzero(data["masked_lm_weights"])
  positions = data["masked_lm_positions"][rows, cols]
  at = data["input_ids"][rows, positions]
  assert 0.75 < (at == mask).mean() < 0.85
  assert ((at == mask) | (at == data["masked_lm_ids"][rows, cols]) | (at < 30522)).all()


def test_rerun_gives_the_same_bytes(lee_run, tmp_path):
  out, _ = lee_run
  before = _shard_bytes(out)
  run(_lee_args(out, *IN_MEMORY))
  assert _shard_bytes(out) == before


@pytest.mark.slow
def test_multi_processing_gives_the_same_bytes_as_in_memory(lee_run, tmp_path):
  out, _ = lee_run
  other = str(tmp_path / "mp")
  run(_lee_args(other, "--direct_running_mode=multi_processing", "--direct_num_workers=2"))
  assert _shard_bytes(other) == _shard_bytes(out)


def test_other_seed_gives_other_bytes_and_gzip_is_readable(lee_run, tmp_path):
  out, summary = lee_run
  other = str(tmp_path / "gz")
  summary_gz = run(_lee_args(other, "--seed=7", "--compression=gzip", *IN_MEMORY))
  assert all(name.endswith(".tfrecord.gz") for name in _shard_bytes(other))
  data = _parse_all(other, compression="GZIP")
  assert len(data["input_ids"]) == summary_gz["instances"]
  assert summary_gz["instances"] != summary["instances"] or not np.array_equal(
      data["input_ids"][:10], _parse_all(out)["input_ids"][:10])


def test_bad_input_is_counted_and_skipped(tmp_path):
  corpus = tmp_path / "corpus.txt"
  good = "".join(f"This is sentence number {i} of a good document.\n" for i in range(12))
  corpus.write_bytes(good.encode() + b"\nOnly one sentence here.\n\n\n\n\nBad bytes \xff\n" + b"x" * 3000
                     + b"\n" + good.encode())
  out = str(tmp_path / "out")
  summary = run([f"--input_files={corpus}", "--input_format=bert_text", f"--output_dir={out}",
                 "--max_line_bytes=2000", "--max_seq_length=32", "--dupe_factor=1", "--num_shards=1"] + IN_MEMORY)
  assert summary["dropped"] == {"line_too_long": 1, "one_sentence_document": 1, "undecodable_line": 1}
  assert summary["documents"] == 2 and summary["instances"] > 0


def test_a_failed_run_leaves_nothing_that_looks_finished(tmp_path):
  vocab = tmp_path / "vocab.txt"
  vocab.write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "the", "a"]) + "\n")  # no [MASK]
  out = tmp_path / "out"
  with pytest.raises(Exception, match=r"\[MASK\]"):
    run(_lee_args(str(out), f"--vocab_file={vocab}", *IN_MEMORY))
  assert not (out / "summary.json").exists()
  assert not glob.glob(str(out / "*.tfrecord*"))


def test_a_corpus_without_instances_is_an_error_and_keeps_the_earlier_output(lee_run, tmp_path):
  """An empty corpus must not publish empty shards over the good ones already in output_dir."""
  import shutil  # pylint: disable=g-import-not-at-top

  out = str(tmp_path / "out")
  shutil.copytree(lee_run[0], out)
  before = {name: open(os.path.join(out, name), "rb").read() for name in os.listdir(out)}
  empty = tmp_path / "empty.txt"
  empty.write_text("")
  with pytest.raises(UserError) as info:
    run([f"--input_files={empty}", "--input_format=lines", f"--output_dir={out}", "--num_shards=3",
         "--min_sentences_per_document=2"] + IN_MEMORY)
  message = str(info.value)
  assert str(empty) in message and "0 documents" in message, message
  assert "min_sentences_per_document=2" in message, message
  assert {name: open(os.path.join(out, name), "rb").read() for name in os.listdir(out)} == before


def test_a_vocab_file_without_unk_fails_before_the_pipeline_naming_it(tmp_path):
  vocab = tmp_path / "vocab.txt"
  vocab.write_text("[CLS]\n[SEP]\n[MASK]\n")
  out = tmp_path / "out"
  with pytest.raises(UserError) as info:
    run(_lee_args(str(out), f"--vocab_file={vocab}", *IN_MEMORY))
  assert str(vocab) in str(info.value) and "[UNK]" in str(info.value)
  assert not out.exists()  # failed before anything was created


def test_a_run_that_fails_after_staging_removes_its_staging_directory(tmp_path):
  """The input is found missing once the staging directory exists (building the pipeline): neither
  `.staging/runs` nor the output directory the run created is left behind."""
  out = tmp_path / "out"
  with pytest.raises(UserError, match="no input file matches"):
    run([f"--input_files={tmp_path}/missing.txt", "--input_format=lines", f"--output_dir={out}"]
        + IN_MEMORY)
  assert not out.exists()
  earlier = tmp_path / "earlier"
  earlier.mkdir()
  (earlier / "summary.json").write_text("{}")
  with pytest.raises(UserError, match="no input file matches"):
    run([f"--input_files={tmp_path}/missing.txt", "--input_format=lines", f"--output_dir={earlier}"]
        + IN_MEMORY)
  assert sorted(os.listdir(earlier)) == ["summary.json"]
