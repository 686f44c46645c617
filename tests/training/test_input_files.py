"""run_pretraining resolves each input flag once before training, and every check and input
pipeline takes that result (how many file calls that makes: bench/check_graphs.py).

A record file whose size differs from the bytes its summary.json records (a copy cut short) is
refused before training with one error naming the file and both sizes. A `.gz` shard cut short
otherwise fails only when training reaches the cut, or, having lost no more than gzip's trailer,
never."""

import json
import os
import subprocess

import pytest
import tensorflow as tf

from bert_keras.errors import UserError
from bert_keras.training import pretrain
from bert_keras.training.pretraining_input import label_frequencies, make_dataset
from bert_keras.configs.training import TrainingConfig
from tests.training import pretraining_runs as R
from tests.training.pretraining_records import PRED, SEQ, write_real_records, write_shards

def _cut(path, tail=10):
  """Drops the last `tail` bytes, as a copy interrupted near its end does; returns the sizes."""
  with open(path, "rb") as f:
    data = f.read()
  with open(path, "wb") as f:
    f.write(data[:-tail])
  return len(data), len(data) - tail


def _config(pattern, model_dir, vocab_size=128, **kw):
  values = dict(input_files=pattern, model="bert_tiny",
                model_overrides=dict(R.TINY_MODEL, num_layers=1, vocab_size=vocab_size),
                max_seq_length=SEQ, max_predictions_per_seq=PRED, train_batch_size=8,
                num_train_steps=2, num_warmup_steps=1, learning_rate=1e-3, checkpoint_every=2,
                log_every=1, output_dir=str(model_dir), vocab_size=vocab_size, eval_batch_size=8,
                eval_steps=2)
  values.update(kw)
  return TrainingConfig.from_flat(**values)


def _checkpoint_of(config):
  """A checkpoint and training_config.json in model_dir, as a run leaves them: a resume."""
  manager = tf.train.CheckpointManager(tf.train.Checkpoint(step=tf.Variable(1)),
                                       config.outputs.output_dir, max_to_keep=1)
  manager.save()
  with open(os.path.join(config.outputs.output_dir, "training_config.json"), "w", encoding="utf-8") as f:
    f.write(config.to_json())


@pytest.mark.parametrize("resumed", [False, True])
def test_patterns_resolve_to_their_files_and_the_pipelines_read_them(tmp_path, resumed):
  """Two training patterns in two directories and a held-out one, fresh or resumed: every file
  once, and the input pipelines and the unigram baseline built on the result read them."""
  train = f"{write_shards(str(tmp_path / 'a'))},{write_shards(str(tmp_path / 'b'), seed=1)}"
  heldout = write_shards(str(tmp_path / "c"), seed=2)
  config = _config(train, tmp_path / "run", eval_input_files=heldout)
  if resumed:
    _checkpoint_of(config)
  resolved = pretrain.resolve_inputs(config)
  train_files, eval_files = resolved.train, resolved.evaluation
  assert sorted(os.path.relpath(f, tmp_path) for f in train_files.files) == [
      os.path.join(d, f"pretraining-{i:05d}-of-00002.tfrecord.gz") for d in "ab" for i in range(2)]
  assert len(eval_files.files) == 2
  data = make_dataset(config, train_files)
  heldout_data = make_dataset(config, eval_files, training=False)
  counts = label_frequencies(train_files, seq_length=SEQ, max_predictions=PRED)
  assert next(iter(data))["input_ids"].shape == (1, 8, SEQ)
  assert next(iter(heldout_data))["input_ids"].shape == (1, 8, SEQ)
  assert counts.sum() > 0
@pytest.mark.parametrize("tail", [4, 100])
def test_a_truncated_gzip_shard_is_refused_naming_it_and_both_sizes(tmp_path, tail):
  """Refused before model_dir is created, whether tf.data would read the shard through (4 bytes of
  gzip's trailer lost: every record is there) or fail at the cut mid-run (100 bytes)."""
  pattern = write_shards(str(tmp_path / "data"))
  bad = str(tmp_path / "data" / "pretraining-00001-of-00002.tfrecord.gz")
  recorded, actual = _cut(bad, tail)
  model_dir = tmp_path / "run"
  with pytest.raises(UserError) as info:
    pretrain.run_pretraining(_config(pattern, model_dir))
  message = str(info.value)
  assert message.startswith(f"{bad}: {actual} bytes on disk, but {tmp_path / 'data'}/summary.json "
                            f"records {recorded} bytes for it: the file is cut short"), message
  assert f"(--input_files={pattern})" in message and "\n" not in message, message
  assert not model_dir.exists()


def test_intact_shards_pass_and_unlisted_files_are_not_checked(tmp_path):
  """The sizes match; a shard the summary does not list (nothing says its size) and a summary
  entry without bytes are left alone."""
  pattern = write_shards(str(tmp_path / "data"), num_files=3,
                    listed=["pretraining-00000-of-00003.tfrecord.gz"])
  summary = tmp_path / "data" / "summary.json"
  values = json.loads(summary.read_text())
  values["files"].append({"name": "pretraining-00001-of-00003.tfrecord.gz"})
  summary.write_text(json.dumps(values))
  _cut(str(tmp_path / "data" / "pretraining-00001-of-00003.tfrecord.gz"))
  _cut(str(tmp_path / "data" / "pretraining-00002-of-00003.tfrecord.gz"))
  train_files = pretrain.resolve_inputs(_config(pattern, tmp_path / "run")).train
  assert len(train_files.files) == 3


def test_a_truncated_held_out_shard_is_refused_naming_eval_input_files(tmp_path):
  pattern = write_shards(str(tmp_path / "train"))
  heldout = write_shards(str(tmp_path / "eval"), num_files=1, seed=1)
  bad = str(tmp_path / "eval" / "pretraining-00000-of-00001.tfrecord.gz")
  recorded, actual = _cut(bad, tail=100)
  with pytest.raises(UserError) as info:
    pretrain.resolve_inputs(_config(pattern, tmp_path / "run", eval_input_files=heldout))
  message = str(info.value)
  assert message.startswith(f"{bad}: {actual} bytes on disk, but") and f"records {recorded} " \
      "bytes" in message, message
  assert f"(--eval_input_files={heldout})" in message, message


def test_the_script_exits_2_with_one_error_line(tmp_path):
  pattern = write_shards(str(tmp_path / "data"))
  bad = str(tmp_path / "data" / "pretraining-00000-of-00002.tfrecord.gz")
  _cut(bad)
  model_dir = str(tmp_path / "run")
  done = subprocess.run(R.tiny_flags(pattern, model_dir, steps=2), env=R.env(),
                        capture_output=True, text=True, timeout=300)
  stderr = done.stderr.strip()
  assert done.returncode == 2, stderr[-3000:]
  assert "Traceback" not in stderr, stderr[-3000:]
  assert stderr.splitlines()[-1].startswith(f"error: {bad}: "), stderr[-3000:]
  assert "bytes on disk" in stderr.splitlines()[-1]
  assert not os.path.exists(model_dir)


@pytest.mark.parametrize("compression", ["none", "gzip"])
def test_create_pretraining_data_records_the_final_size_of_its_shards(tmp_path, compression):
  """The writer's "bytes" is the size on disk of the published shard, for both compressions: its
  records pass as written, and a shard cut short is refused."""
  pattern, size = write_real_records(str(tmp_path / "data"), compression=compression)
  config = _config(pattern, tmp_path / "run", vocab_size=size)
  train_files = pretrain.resolve_inputs(config).train
  assert [f.endswith(".gz") for f in train_files.files] == [compression == "gzip"] * 2
  bad = train_files.files[1]
  _cut(bad, tail=3)
  with pytest.raises(UserError, match=f"^{bad}: .* bytes on disk, but .*summary.json records"):
    pretrain.resolve_inputs(config)
