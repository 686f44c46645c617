"""One reader of the records' summary.json (records_summary) for the vocabulary check before
training and the vocab.txt copied into export/: the vocabulary copied is the one whose recorded
vocab_size and file list describe the input files; a summary that cannot be read is a reason, not
a crash; a relative vocab_file resolves against the summary's directory when the file is there."""

import json

import pytest
import tensorflow as tf

from bert_keras.training import records_summary
from bert_keras.training.input_files import resolve_input_files
from bert_keras.training.records_vocab import records_vocab
from bert_keras.training.vocab_fit import summary_vocabulary

VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "cat", "sat"]
SHARD = "pretraining-00000-of-00001.tfrecord"


def _records(directory, vocab, names=(SHARD,), listed=None, **summary):
  """Empty shards `names` in `directory` and a summary.json naming `vocab` and listing `listed`
  (default: all of `names`); returns the glob of the shards."""
  directory.mkdir(parents=True, exist_ok=True)
  for name in names:
    (directory / name).write_bytes(b"")
  values = dict({"config": {"vocab_file": str(vocab)}, "vocab_size": len(VOCAB),
                 "files": [{"name": n, "bytes": 0} for n in (names if listed is None else listed)]},
                **summary)
  (directory / "summary.json").write_text(json.dumps(values))
  return str(directory / "pretraining-*.tfrecord")


@pytest.fixture
def vocab(tmp_path):
  path = tmp_path / "vocab.txt"
  path.write_text("\n".join(VOCAB) + "\n")
  return path


def test_both_readers_take_the_same_summary(tmp_path, vocab):
  pattern = _records(tmp_path / "data", vocab)
  assert records_vocab(resolve_input_files(pattern), len(VOCAB)) == (str(vocab),
                                                f"named by {tmp_path}/data/summary.json")
  size, where, names = summary_vocabulary(str(tmp_path / "data"))
  assert (size, names) == (len(VOCAB), {SHARD}) and str(vocab) in where


def test_the_recorded_vocab_size_must_match_the_vocab_file(tmp_path, vocab):
  """A vocab.txt changed since the records were made is not theirs any more."""
  pattern = _records(tmp_path / "data", vocab, vocab_size=len(VOCAB) + 1)
  found, why_not = records_vocab(resolve_input_files(pattern), len(VOCAB))
  assert found is None, why_not
  assert f"records vocab_size={len(VOCAB) + 1}" in why_not and "changed" in why_not


def test_only_the_files_a_summary_lists_count(tmp_path, vocab):
  listed = _records(tmp_path / "data", vocab, names=(SHARD, "pretraining-extra.tfrecord"),
                    listed=("pretraining-extra.tfrecord",))
  assert records_vocab(resolve_input_files(listed), len(VOCAB))[0] == str(vocab)
  unlisted = str(tmp_path / "data" / SHARD)
  found, why_not = records_vocab(resolve_input_files(unlisted), len(VOCAB))
  assert found is None and "no summary.json describes" in why_not, why_not
  # Files no summary describes (unlisted, or in a directory without one) beside those it does:
  # the summary's vocabulary, with a note.
  other = tmp_path / "other"
  other.mkdir()
  (other / "part.tfrecord").write_bytes(b"")
  found, how = records_vocab(resolve_input_files(f"{listed},{other}/part.tfrecord"), len(VOCAB))
  assert found == str(vocab) and "2 input file(s) no summary.json describes" in how, how


def test_a_summary_that_is_a_directory_is_a_reason(tmp_path, vocab):
  data = tmp_path / "data"
  data.mkdir()
  (data / SHARD).write_bytes(b"")
  (data / "summary.json").mkdir()
  found, why_not = records_vocab(resolve_input_files(str(data / SHARD)), len(VOCAB))
  assert found is None and f"{data}/summary.json cannot be read" in why_not, why_not
  assert summary_vocabulary(str(data)) is None  # the vocabulary check reads the records instead


def test_a_filesystem_error_is_a_reason(tmp_path, vocab, monkeypatch):
  """gs:// permission denied or offline: tf.errors.OpError from gfile, turned into the reason."""
  pattern = _records(tmp_path / "data", vocab)

  def denied(path, *args, **kwargs):
    raise tf.errors.PermissionDeniedError(None, None, f"{path}: permission denied")

  monkeypatch.setattr(tf.io.gfile, "GFile", denied)
  found, why_not = records_vocab(resolve_input_files(pattern), len(VOCAB))
  assert found is None and "PermissionDeniedError" in why_not, why_not
  monkeypatch.setattr(tf.io.gfile, "exists", denied)
  found, why_not = records_vocab(resolve_input_files(pattern), len(VOCAB))
  assert found is None and "permission denied" in why_not, why_not


def test_a_relative_vocab_file_resolves_beside_the_summary_when_there(tmp_path, monkeypatch):
  """Summaries written before vocab_file was made absolute: relative to the writer's cwd."""
  data = tmp_path / "data"
  pattern = _records(data, "vocab.txt")
  (data / "vocab.txt").write_text("\n".join(VOCAB) + "\n")
  elsewhere = tmp_path / "elsewhere"
  elsewhere.mkdir()
  monkeypatch.chdir(elsewhere)
  found, how = records_vocab(resolve_input_files(pattern), len(VOCAB))
  assert found == f"{data}/vocab.txt", how
  assert f"resolved against the summary's directory {data}" in how, how

  (data / "vocab.txt").unlink()
  (elsewhere / "vocab.txt").write_text("\n".join(VOCAB) + "\n")
  found, how = records_vocab(resolve_input_files(pattern), len(VOCAB))
  assert found == str(elsewhere / "vocab.txt"), how
  assert "resolved against the working directory" in how, how


def test_the_summary_records_an_absolute_local_vocab_file(tmp_path, monkeypatch):
  from bert_keras.configs.pretraining_data import PretrainingDataConfig
  from bert_keras.data.pretraining_data_pipeline import summarize
  (tmp_path / "vocab.txt").write_text("\n".join(VOCAB) + "\n")
  monkeypatch.chdir(tmp_path)
  config = PretrainingDataConfig(input_files="corpus.txt", input_format="lines",
                                 output_dir="out", vocab_file="vocab.txt")
  assert summarize(config, {})["config"]["vocab_file"] == str(tmp_path / "vocab.txt")
  assert records_summary.resolve_vocab_file("gs://bucket/vocab.txt", str(tmp_path)) == (
      "gs://bucket/vocab.txt", "")
