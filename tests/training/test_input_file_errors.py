"""Pretraining inputs that are not what the config expects are refused before training, with one
error naming the file: a directory given as the pattern or matched by it, a summary.json beside the
records, records of another max_seq_length among the files. Each used to pass the startup check
(which read only the first file) and crash tf.data mid-run with a traceback.
A file corrupt past its first record (truncated, damaged) passes the check before training, which
reads one record per file; when tf.data then fails, the files are read through to name it."""

import gzip
import json
import os
import re
import subprocess

import pytest
import tensorflow as tf

from bert_keras.errors import UserError
from bert_keras.training import pretraining_input as pi
from bert_keras.training.pretrain import run_pretraining
from bert_keras.configs.training import TrainingConfig
from tests.training import pretraining_runs as R
from tests.training.pretraining_records import write_records

SEQ, PRED = 32, 5


def _records(directory, seq_length=SEQ, max_predictions=PRED, seed=0):
  return write_records(str(directory), num_files=2, per_file=16, seq_length=seq_length,
                       max_predictions=max_predictions, seed=seed)


def _summary(directory):
  """A summary.json like the one create_pretraining_data writes beside its shards."""
  path = os.path.join(str(directory), "summary.json")
  with open(path, "w", encoding="utf-8") as f:
    json.dump({"files": [{"name": "part-00000.tfrecord", "bytes": 1234}], "num_instances": 32,
               "max_seq_length": SEQ, "max_predictions_per_seq": PRED}, f, indent=2)
  return path


def _dataset(pattern):
  config = TrainingConfig.from_flat(max_seq_length=SEQ, max_predictions_per_seq=PRED,
                                    train_batch_size=8)
  return pi.make_dataset(config, pattern)


def test_a_directory_as_the_pattern_is_refused_with_a_hint(tmp_path):
  _records(tmp_path / "data")
  for pattern in (str(tmp_path / "data"), str(tmp_path / "data") + "/"):
    with pytest.raises(UserError) as info:
      _dataset(pattern)
    message = str(info.value)
    assert f"{pattern!r} is a directory" in message, message
    assert f"{tmp_path / 'data'}/pretraining-*" in message, message


def test_a_directory_matched_by_the_pattern_is_refused(tmp_path):
  _records(tmp_path / "data")
  os.makedirs(tmp_path / "data" / "part-sub")
  with pytest.raises(UserError) as info:
    _dataset(str(tmp_path / "data" / "part-*"))
  message = str(info.value)
  assert f"matches the directory {tmp_path / 'data' / 'part-sub'}" in message, message
  # the hint names the shards beside the directory, in the pattern's own directory
  assert f"e.g. '{tmp_path / 'data'}/pretraining-*'" in message, message


def test_a_summary_json_beside_the_records_is_named(tmp_path):
  _records(tmp_path)
  summary = _summary(tmp_path)
  with pytest.raises(UserError, match=f"^{re.escape(summary)}: corrupt TFRecord file") as info:
    _dataset(str(tmp_path / "*"))
  assert f"narrow --input_files, e.g. to '{tmp_path}/pretraining-*'" in str(info.value)
  # The records alone are fine.
  assert next(iter(_dataset(str(tmp_path / "part-*"))))["input_ids"].shape == (1, 8, SEQ)


def test_a_tiny_non_record_file_is_named(tmp_path):
  """Shorter than a record header: tf.data reads it as an empty file, so it was silently skipped."""
  _records(tmp_path)
  path = tmp_path / "zz-notes.txt"
  path.write_text("{}\n")
  with pytest.raises(UserError, match=f"^{re.escape(str(path))}: not a TFRecord file"):
    _dataset(str(tmp_path / "*"))


def test_files_of_another_length_are_named(tmp_path):
  _records(tmp_path / "len32")
  longer = write_records(str(tmp_path / "len64"), num_files=1, per_file=4, seq_length=64,
                         max_predictions=10, seed=1)
  both = f"{tmp_path / 'len32' / 'part-*'},{longer}"
  named = re.escape(str(tmp_path / "len64" / "part-00000.tfrecord"))
  with pytest.raises(UserError, match=f"^{named}: record 1 has input_ids of length 64, but the "
                                      "config says 32"):
    _dataset(both)


def test_every_file_is_checked_not_only_the_first(tmp_path):
  """An empty first shard is still allowed; a bad third file is found."""
  _records(tmp_path)
  (tmp_path / "part-00000.tfrecord").write_bytes(b"")
  write_records(str(tmp_path / "x"), num_files=1, per_file=2, seq_length=SEQ, max_predictions=3)
  os.replace(tmp_path / "x" / "part-00000.tfrecord", tmp_path / "part-00002.tfrecord")
  with pytest.raises(UserError, match="part-00002.tfrecord: record 1 has masked_lm_positions "
                                      "of length 3, but the config says 5"):
    _dataset(str(tmp_path / "part-*"))


def test_run_pretraining_prints_one_error_line_naming_the_summary(tmp_path):
  """End to end: the script exits 2 with one `error:` line, no traceback, nothing trained."""
  _records(tmp_path / "data")
  summary = _summary(tmp_path / "data")
  model_dir = str(tmp_path / "run")
  cmd = R.tiny_flags(str(tmp_path / "data" / "*"), model_dir, steps=2)
  done = subprocess.run(cmd, env=R.env(), capture_output=True, text=True, timeout=300)
  stderr = done.stderr.strip()
  assert done.returncode == 2, stderr[-3000:]
  assert "Traceback" not in stderr, stderr[-3000:]
  errors = [line for line in stderr.splitlines() if line.startswith("error:")]
  assert len(errors) == 1 and summary in errors[0] and "corrupt TFRecord file" in errors[0], errors
  assert stderr.splitlines()[-1] == errors[0]
  assert not os.path.exists(os.path.join(model_dir, "checkpoint"))


# === Files corrupt past their first record: found after tf.data fails, named in one error ===

def _record_offsets(path):
  """The byte offset of every record of an uncompressed TFRecord file (its framing: an 8-byte
  length, a 4-byte checksum, the data, a 4-byte checksum)."""
  data = open(path, "rb").read()
  offsets, at = [], 0
  while at < len(data):
    offsets.append(at)
    at += 16 + int.from_bytes(data[at:at + 8], "little")
  return offsets


def _flip(path, record, offsets):
  """Damages the data of 1-based `record` (its checksum no longer matches)."""
  data = bytearray(open(path, "rb").read())
  data[offsets[record - 1] + 20] ^= 0xFF
  open(path, "wb").write(bytes(data))


def _truncate(path, record, offsets):
  """Cuts the file in the middle of 1-based `record`."""
  data = open(path, "rb").read()
  open(path, "wb").write(data[:offsets[record - 1] + 30])


def test_find_corrupt_records_names_the_file_the_record_and_its_offset(tmp_path):
  """What check_record_shapes cannot see (it reads the first record): a file truncated or damaged
  further on. The intact files are not named."""
  write_records(str(tmp_path), num_files=4, per_file=16, seq_length=SEQ, max_predictions=PRED)
  files = [str(tmp_path / f"part-{i:05d}.tfrecord") for i in range(4)]
  offsets = [_record_offsets(f) for f in files]
  _truncate(files[1], 6, offsets[1])
  _flip(files[3], 4, offsets[3])
  with open(files[3], "rb") as f, gzip.open(str(tmp_path / "part-00004.tfrecord.gz"), "wb") as out:
    out.write(f.read())
  files.append(str(tmp_path / "part-00004.tfrecord.gz"))
  problems = pi.find_corrupt_records(files)
  assert [path for path, _ in problems] == [files[1], files[3], files[4]], problems
  truncated, flipped, gzipped = (message for _, message in problems)
  # The offset TensorFlow reports: the record's start for a cut header, its data (after the
  # 8-byte length and 4-byte checksum) for damaged data.
  assert truncated.startswith(f"{files[1]}: corrupt TFRecord file: record 6 (at byte "
                              f"{offsets[1][5]}) cannot be read (DataLossError: truncated"), truncated
  assert "the 5 record(s) before it read fine" in truncated, truncated
  assert flipped.startswith(f"{files[3]}: corrupt TFRecord file: record 4 (at byte "
                            f"{offsets[3][3] + 12}) cannot be read (DataLossError: corrupted"), flipped
  assert f"record 4 (at byte {offsets[3][3] + 12} of the uncompressed stream)" in gzipped, gzipped
  # The first record of each is fine: the check before training passes them.
  pi.check_record_shapes(files, SEQ, PRED)


def test_training_on_a_file_corrupt_mid_way_stops_with_one_error_line_then_resumes(tmp_path):
  """End to end: tf.data's DataLossError (no file named) used to end the script with a traceback.
  Now: exit 2, one `error:` line naming the file and record, the checkpoints written before intact;
  with the file restored, the same command resumes from the last one and finishes."""
  pattern = write_records(str(tmp_path / "data"), num_files=2, per_file=120, seq_length=SEQ,
                          max_predictions=PRED)
  bad = str(tmp_path / "data" / "part-00001.tfrecord")
  intact = open(bad, "rb").read()
  offsets = _record_offsets(bad)
  _flip(bad, 100, offsets)  # ~200 records into the stream: after a few checkpoints
  model_dir = str(tmp_path / "run")
  cmd = R.tiny_flags(pattern, model_dir, steps=40, checkpoint_every=4)
  done = subprocess.run(cmd, env=R.env(), capture_output=True, text=True, timeout=600)
  stderr = done.stderr.strip()
  assert done.returncode == 2, stderr[-3000:]
  assert "Traceback" not in stderr, stderr[-3000:]
  errors = [line for line in stderr.splitlines() if line.startswith("error:")]
  assert len(errors) == 1 and stderr.splitlines()[-1] == errors[0], errors
  error = errors[0]
  assert (f"error: {bad}: corrupt TFRecord file: record 100 (at byte {offsets[99] + 12})"
          in error), error
  assert f"--input_files={pattern}" in error, error
  latest = tf.train.latest_checkpoint(model_dir)
  step = int(latest.rsplit("-", 1)[1])
  assert 0 < step < 40, latest
  assert f"training stopped; the last checkpoint, {latest} (step {step}), is intact" in error, error
  assert R.read_checkpoint(model_dir)["global_step/.ATTRIBUTES/VARIABLE_VALUE"] == step

  with open(bad, "wb") as f:
    f.write(intact)
  done = subprocess.run(cmd, env=R.env(), capture_output=True, text=True, timeout=600)
  assert done.returncode == 0, done.stderr[-3000:]
  assert f"resumed from {latest} at step {step}" in done.stderr, done.stderr[-3000:]
  assert max(R.train_losses(model_dir)) == 40


def _run_config(pattern, model_dir, **kw):
  values = dict(input_files=pattern, model="bert_tiny",
                model_overrides=dict(R.TINY_MODEL, num_layers=1), max_seq_length=SEQ,
                max_predictions_per_seq=PRED, train_batch_size=8, num_train_steps=2,
                num_warmup_steps=1, learning_rate=1e-3, checkpoint_every=2, log_every=1,
                output_dir=str(model_dir), vocab_size=128, eval_batch_size=8, eval_steps=5)
  values.update(kw)
  return TrainingConfig.from_flat(**values)


def test_a_corrupt_eval_file_is_named_after_the_training_checkpoint(tmp_path):
  """The held-out files are read only by the evaluation: the same error, naming
  --eval_input_files, with the checkpoint of the finished steps intact."""
  pattern = write_records(str(tmp_path / "train"), num_files=1, per_file=32, seq_length=SEQ,
                          max_predictions=PRED)
  heldout = write_records(str(tmp_path / "eval"), num_files=1, per_file=16, seq_length=SEQ,
                          max_predictions=PRED, seed=1)
  bad = str(tmp_path / "eval" / "part-00000.tfrecord")
  offsets = _record_offsets(bad)
  _truncate(bad, 10, offsets)  # eval reads 5 batches of 8: past record 10
  model_dir = tmp_path / "run"
  with pytest.raises(UserError) as info:
    run_pretraining(_run_config(pattern, model_dir, eval_input_files=heldout))
  message = str(info.value)
  assert message.startswith(f"{bad}: corrupt TFRecord file: record 10 (at byte {offsets[9]})"
                            ), message
  assert f"--eval_input_files={heldout}" in message, message
  assert "training stopped; the last checkpoint" in message and "(step 2)" in message, message
  assert R.read_checkpoint(str(model_dir))["global_step/.ATTRIBUTES/VARIABLE_VALUE"] == 2


def test_a_corrupt_training_file_found_by_the_unigram_baseline_writes_nothing(tmp_path):
  """With evaluation, the unigram baseline reads the training files before training: a corrupt
  one is named there, before model_dir is created."""
  pattern = write_records(str(tmp_path / "train"), num_files=1, per_file=32, seq_length=SEQ,
                          max_predictions=PRED)
  heldout = write_records(str(tmp_path / "eval"), num_files=1, per_file=16, seq_length=SEQ,
                          max_predictions=PRED, seed=1)
  bad = str(tmp_path / "train" / "part-00000.tfrecord")
  _flip(bad, 20, _record_offsets(bad))
  model_dir = tmp_path / "run"
  with pytest.raises(UserError, match=f"^{re.escape(bad)}: corrupt TFRecord file: record 20 .*"
                                      "--input_files="):
    run_pretraining(_run_config(pattern, model_dir, eval_input_files=heldout))
  assert not model_dir.exists()
