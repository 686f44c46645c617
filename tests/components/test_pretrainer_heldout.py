"""The pretrainer's held-out split: disjoint, complete, every k-th record, skipped when too small."""

import tensorflow as tf

from components.pretrainer.executor import nsp_padding_rule, read_nsp_padding, split_heldout
from tests.training.pretraining_records import write_records


def _read(path):
  return [r.numpy() for r in tf.data.TFRecordDataset(path)]


def test_split_heldout_sets_aside_every_kth_record(tmp_path):
  pattern = write_records(str(tmp_path / "data"), num_files=2, per_file=20)
  files = sorted(tf.io.gfile.glob(pattern))
  records = [r for f in files for r in _read(f)]
  split = split_heldout(files, str(tmp_path / "out"), fraction=0.1, min_heldout=4)
  train, heldout = _read(split["train"]), _read(split["heldout"])
  assert heldout == records[9::10]
  assert train == [r for i, r in enumerate(records) if i % 10 != 9]
  assert (split["train_records"], split["heldout_records"]) == (36, 4)


def test_split_heldout_needs_enough_records(tmp_path):
  pattern = write_records(str(tmp_path / "data"), num_files=1, per_file=20)
  assert split_heldout(tf.io.gfile.glob(pattern), str(tmp_path / "out"), 0.1, min_heldout=3) is None


def _example(length, width, label=None):
  feature = {"input_mask": tf.train.Feature(int64_list=tf.train.Int64List(
      value=[1] * length + [0] * (width - length)))}
  if label is not None:
    feature["next_sentence_labels"] = tf.train.Feature(int64_list=tf.train.Int64List(value=[label]))
  return tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString()


def test_nsp_padding_rule_scores_padded_as_random_next(tmp_path):
  path = str(tmp_path / "heldout.tfrecord")
  # (length of 8, label): padded+random, padded+next, full+next, full+random, then 2 not evaluated
  with tf.io.TFRecordWriter(path) as writer:
    for length, label in ((5, 1), (3, 0), (8, 0), (8, 1), (2, 1), (8, 0)):
      writer.write(_example(length, 8, label))
  labels, padded = read_nsp_padding([path], 4)
  assert labels.tolist() == [1, 0, 0, 1] and padded.tolist() == [True, True, False, False]
  assert nsp_padding_rule(labels, padded) == {"nsp_padding_rule_accuracy": 0.5,
                                              "nsp_padded_fraction": 0.5}
  three = nsp_padding_rule(*read_nsp_padding([path], 3))
  assert abs(three["nsp_padding_rule_accuracy"] - 2 / 3) < 1e-9
  assert nsp_padding_rule(*read_nsp_padding([path], 6))["nsp_padding_rule_accuracy"] == 4 / 6
  assert len(read_nsp_padding([path, path])[0]) == 12  # 0 records: all of them, over every file
  mlm_only = str(tmp_path / "mlm.tfrecord")
  with tf.io.TFRecordWriter(mlm_only) as writer:
    writer.write(_example(5, 8))
  assert read_nsp_padding([mlm_only], 4) is None
