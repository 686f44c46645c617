"""The pretrainer's held-out split: disjoint, complete, every k-th record, skipped when too small."""

import tensorflow as tf

from components.pretrainer.executor import split_heldout
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
