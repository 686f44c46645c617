"""TFRecord shards sorted by key, written under a staging dir and moved into place by
`publish_shards` after a successful run (summary.json last: a killed run never looks finished).
Local uncompressed shards are written without TensorFlow (example_encoding.py); gzip and gs://
go through tf.io.
"""

from __future__ import annotations

import functools
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


RUNS_DIR_NAME = "runs"


def _write_shard(staging_dir: str, config, shard: int, records: Iterable[bytes]) -> str:
  path = os.path.join(staging_dir, config.shard_name(shard))
  write_tfrecord_file(path, records)
  return path


def write_tfrecord_shards(staging_dir: str, config) -> sorted_shards.WriteSortedShards:
  """(shard, [(key, record), ...]) -> the TFRecord shards in `staging_dir` (see publish_shards),
  each sorted by key through run files under `staging_dir`/runs (sorted_shards.py)."""
  return sorted_shards.WriteSortedShards(os.path.join(staging_dir, RUNS_DIR_NAME),
                                         functools.partial(_write_shard, staging_dir, config))


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
  summary = dict(summary, files=[{"name": os.path.basename(p), "bytes": files.size(p)} for p in paths])
  text = json.dumps(summary, indent=2, sort_keys=True) + "\n"
  (atomic_io.write_text if files.local else atomic_io.gfile_write_text)(summary_path, text)
  sorted_shards.remove_dir(staging)
  return paths
