"""Writes keyed records into a fixed number of TFRecord shards, sorted by key, under a staging dir
(through sorted run files and a streaming merge per shard: sorted_shards.py, uint64 keys);
`publish_shards` moves them into place at the end of a successful run.

A killed run leaves only the staging directory (and no summary JSON, which is written last), so
nothing looks finished; a rerun rewrites the same names with the same bytes.

Local uncompressed shards are written in plain Python (example_encoding.frame_record, the bytes of
tf.io.TFRecordWriter) and local files are moved with `os`, so a worker never imports TensorFlow for
them; gzip shards and other filesystems (gs://...) go through tf.io.
"""

from __future__ import annotations

import json
import os
from typing import Dict, Iterable, List

from bert_keras import atomic_io
from bert_keras.data import example_encoding, pretraining_records, sorted_shards

STAGING_DIR_NAME = ".staging"


def write_tfrecord_file(path: str, records: Iterable[bytes]) -> None:
  """Writes `records` in order (streamed) to `path` (local or any tf.io.gfile filesystem),
  compressed as its name says (pretraining_records.compression_type)."""
  compression = pretraining_records.compression_type(path)
  if not compression and sorted_shards.is_local(path) and example_encoding.have_fast_crc32c():
    with atomic_io.beam_create(path) as f:
      example_encoding.write_uncompressed_tfrecords(f, records)
    return
  import tensorflow as tf  # pylint: disable=g-import-not-at-top

  options = tf.io.TFRecordOptions(compression_type=compression)
  with tf.io.TFRecordWriter(path, options) as writer:
    for record in records:
      writer.write(record)


# === Sorted runs (sorted_shards.py), uint64 instance keys: the shard's rows never pass through the
# runner's shuffle, so no process holds them ===
RUNS_DIR_NAME = "runs"


class _TFRecordShardWriter:
  """The shard format of WriteTFRecordShards: config.shard_name(shard) in the staging dir, TFRecord."""

  def __init__(self, staging_dir: str, config):
    self._staging_dir = staging_dir
    self._config = config

  def shard_name(self, shard: int) -> str:
    return self._config.shard_name(shard)

  def write(self, shard: int, records: Iterable[bytes]) -> str:
    path = os.path.join(self._staging_dir, self.shard_name(shard))
    write_tfrecord_file(path, records)
    return path


class WriteTFRecordShards(sorted_shards.WriteSortedShards):
  """(shard, [(key, record), ...]) -> config.num_shards files in `staging_dir` (see publish_shards).

  Records come in lists (one per producing bucket). Each list becomes a sorted run file under
  `staging_dir`/runs (in the producer's stage), and each shard is a streaming merge of its runs, so
  neither the runner nor any worker holds a shard's records: memory does not grow with the corpus.
  Rows are in (key, record) order, byte for byte what sorting them all in memory gives.
  """

  def __init__(self, staging_dir: str, config):
    super().__init__(os.path.join(staging_dir, RUNS_DIR_NAME), _TFRecordShardWriter(staging_dir, config))


def staging_dir_for(output_dir: str) -> str:
  return os.path.join(output_dir, STAGING_DIR_NAME)


def prepare_staging_dir(output_dir: str) -> str:
  """Creates an empty staging dir under `output_dir` (removing one a killed run left)."""
  files = atomic_io.FileOps(output_dir)
  staging = staging_dir_for(output_dir)
  sorted_shards.remove_dir(staging)
  files.makedirs(staging)
  files.makedirs(os.path.join(staging, RUNS_DIR_NAME))
  return staging


def publish_shards(output_dir: str, config, summary: Dict) -> List[str]:
  """Moves the staged shards into `output_dir`, creating empty shards, then writes the summary last.

  Removes an old summary first (so an interrupted publish never looks finished) and stale shards of
  the same prefix from earlier runs with another num_shards. Returns the published shard paths.
  """
  files = atomic_io.FileOps(output_dir)
  staging = staging_dir_for(output_dir)
  summary_path = os.path.join(output_dir, pretraining_records.SUMMARY_NAME)
  if files.exists(summary_path):
    files.remove(summary_path)
  names = [config.shard_name(i) for i in range(config.num_shards)]
  for stale in files.glob(os.path.join(output_dir, f"{config.output_prefix}-*-of-*.tfrecord*")):
    if os.path.basename(stale) not in names:
      files.remove(stale)
  paths = []
  for name in names:
    staged = os.path.join(staging, name)
    if not files.exists(staged):  # A shard no instance hashed to: still a valid (empty) file.
      write_tfrecord_file(staged, [])
    final = os.path.join(output_dir, name)
    files.rename(staged, final)
    paths.append(final)
  summary = dict(summary, files=pretraining_records.summary_files(
      {os.path.basename(p): files.size(p) for p in paths}))
  text = json.dumps(summary, indent=2, sort_keys=True) + "\n"
  (atomic_io.write_text if files.local else atomic_io.gfile_write_text)(summary_path, text)
  sorted_shards.remove_dir(staging)
  return paths
