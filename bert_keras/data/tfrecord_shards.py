"""Writes keyed records into a fixed number of TFRecord shards, sorted by key, under a staging dir;
`publish_shards` moves them into place at the end of a successful run.

A killed run leaves only the staging directory (and no summary JSON, which is written last), so
nothing looks finished; a rerun rewrites the same names with the same bytes.
"""

from __future__ import annotations

import json
import os
from typing import Dict, List

import apache_beam as beam

STAGING_DIR_NAME = ".staging"
SUMMARY_NAME = "summary.json"


def write_tfrecord_file(path: str, records: List[bytes], compression: str) -> None:
  """Writes `records` in order to `path` (local or any tf.io.gfile filesystem)."""
  import tensorflow as tf  # pylint: disable=g-import-not-at-top

  options = tf.io.TFRecordOptions(compression_type="GZIP" if compression == "gzip" else "")
  with tf.io.TFRecordWriter(path, options) as writer:
    for record in records:
      writer.write(record)


class _WriteShard(beam.DoFn):
  """(shard, [[(key, record), ...] per bucket]) -> path of the staged shard file, rows sorted by (key, record)."""

  def __init__(self, staging_dir: str, config):
    self._staging_dir = staging_dir
    self._config = config

  def process(self, element):
    shard, keyed = element
    rows = sorted(row for batch in keyed for row in batch)
    path = os.path.join(self._staging_dir, self._config.shard_name(shard))
    write_tfrecord_file(path, [record for _, record in rows], self._config.compression)
    yield path


class WriteTFRecordShards(beam.PTransform):
  """(shard, [(key, record), ...]) -> config.num_shards files in `staging_dir` (see publish_shards).

  Records come in lists (one per producing bucket) so that Beam handles few, large elements.
  """

  def __init__(self, staging_dir: str, config):
    super().__init__()
    self._staging_dir = staging_dir
    self._config = config

  def expand(self, keyed_records):
    return (keyed_records
            | "GroupShards" >> beam.GroupByKey()
            | "WriteShards" >> beam.ParDo(_WriteShard(self._staging_dir, self._config)))


def staging_dir_for(output_dir: str) -> str:
  return os.path.join(output_dir, STAGING_DIR_NAME)


def prepare_staging_dir(output_dir: str) -> str:
  """Creates an empty staging dir under `output_dir` (removing one a killed run left)."""
  import tensorflow as tf  # pylint: disable=g-import-not-at-top

  staging = staging_dir_for(output_dir)
  if tf.io.gfile.exists(staging):
    tf.io.gfile.rmtree(staging)
  tf.io.gfile.makedirs(staging)
  return staging


def publish_shards(output_dir: str, config, summary: Dict) -> List[str]:
  """Moves the staged shards into `output_dir`, creating empty shards, then writes the summary last.

  Removes an old summary first (so an interrupted publish never looks finished) and stale shards of
  the same prefix from earlier runs with another num_shards. Returns the published shard paths.
  """
  import tensorflow as tf  # pylint: disable=g-import-not-at-top

  staging = staging_dir_for(output_dir)
  summary_path = os.path.join(output_dir, SUMMARY_NAME)
  if tf.io.gfile.exists(summary_path):
    tf.io.gfile.remove(summary_path)
  names = [config.shard_name(i) for i in range(config.num_shards)]
  for stale in tf.io.gfile.glob(os.path.join(output_dir, f"{config.output_prefix}-*-of-*.tfrecord*")):
    if os.path.basename(stale) not in names:
      tf.io.gfile.remove(stale)
  paths = []
  for name in names:
    staged = os.path.join(staging, name)
    if not tf.io.gfile.exists(staged):  # A shard no instance hashed to: still a valid (empty) file.
      write_tfrecord_file(staged, [], config.compression)
    final = os.path.join(output_dir, name)
    tf.io.gfile.rename(staged, final, overwrite=True)
    paths.append(final)
  summary = dict(summary, files=[{"name": os.path.basename(p), "bytes": tf.io.gfile.stat(p).length}
                                 for p in paths])
  tmp = summary_path + ".tmp"
  with tf.io.gfile.GFile(tmp, "w") as f:
    f.write(json.dumps(summary, indent=2, sort_keys=True) + "\n")
  tf.io.gfile.rename(tmp, summary_path, overwrite=True)
  tf.io.gfile.rmtree(staging)
  return paths
