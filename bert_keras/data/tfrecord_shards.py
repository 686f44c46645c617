"""Writes keyed records into a fixed number of TFRecord shards, sorted by key, under a staging dir;
`publish_shards` moves them into place at the end of a successful run.

A killed run leaves only the staging directory (and no summary JSON, which is written last), so
nothing looks finished; a rerun rewrites the same names with the same bytes.

Local uncompressed shards are written in plain Python (example_encoding.frame_record, the bytes of
tf.io.TFRecordWriter) and local files are moved with `os`, so a worker never imports TensorFlow for
them; gzip shards and other filesystems (gs://...) go through tf.io.
"""

from __future__ import annotations

import heapq
import json
import os
import struct
from typing import Any, Dict, Iterable, Iterator, List, Tuple

import apache_beam as beam

from bert_keras.data import example_encoding

STAGING_DIR_NAME = ".staging"
SUMMARY_NAME = "summary.json"


def _is_local(path: str) -> bool:
  return "://" not in path


def write_tfrecord_file(path: str, records: Iterable[bytes], compression: str) -> None:
  """Writes `records` in order (streamed) to `path` (local or any tf.io.gfile filesystem)."""
  if compression == "none" and _is_local(path) and example_encoding.have_fast_crc32c():
    tmp = path + ".tmp"
    example_encoding.write_uncompressed_tfrecords(tmp, records)
    os.replace(tmp, path)
    return
  import tensorflow as tf  # pylint: disable=g-import-not-at-top

  options = tf.io.TFRecordOptions(compression_type="GZIP" if compression == "gzip" else "")
  with tf.io.TFRecordWriter(path, options) as writer:
    for record in records:
      writer.write(record)


# === Sorted runs: the shard's rows never pass through the runner's shuffle, so no process holds them ===
_ROW_HEADER = struct.Struct("<QI")  # sort key, record length
RUNS_DIR_NAME = "runs"
MAX_RUNS_PER_MERGE = 256  # open files per merge; more runs are merged in rounds


def _open(path: str, mode: str):
  if _is_local(path):
    return open(path, mode)  # pylint: disable=unspecified-encoding
  from apache_beam.io.filesystems import FileSystems  # pylint: disable=g-import-not-at-top
  return FileSystems.create(path) if mode == "wb" else FileSystems.open(path)


def _remove(paths: List[str]) -> None:
  if paths and _is_local(paths[0]):
    for path in paths:
      os.remove(path)
  elif paths:
    from apache_beam.io.filesystems import FileSystems  # pylint: disable=g-import-not-at-top
    FileSystems.delete(paths)


def write_run(path: str, rows: Iterable[Tuple[int, bytes]]) -> None:
  """Writes (key, record) rows, already sorted, as a run file (atomically when local)."""
  tmp = path + ".tmp" if _is_local(path) else path
  with _open(tmp, "wb") as f:
    for key, record in rows:
      f.write(_ROW_HEADER.pack(key, len(record)))
      f.write(record)
  if tmp != path:
    os.replace(tmp, path)


def read_run(path: str) -> Iterator[Tuple[int, bytes]]:
  """The rows of a run file, streamed."""
  with _open(path, "rb") as f:
    while True:
      header = f.read(_ROW_HEADER.size)
      if not header:
        return
      key, length = _ROW_HEADER.unpack(header)
      yield key, f.read(length)


def merge_runs(paths: List[str], work_dir: str, name: str) -> Iterator[Tuple[int, bytes]]:
  """All rows of the runs at `paths` in (key, record) order, streamed; at most MAX_RUNS_PER_MERGE
  files are open at once (larger sets are first merged, in rounds, into runs under `work_dir`).
  The runs are deleted once all rows have been read."""
  paths = sorted(paths)
  every = list(paths)
  level = 0
  while len(paths) > MAX_RUNS_PER_MERGE:
    merged = []
    for i in range(0, len(paths), MAX_RUNS_PER_MERGE):
      group = paths[i:i + MAX_RUNS_PER_MERGE]
      out = os.path.join(work_dir, f"{name}-merge{level}-{i // MAX_RUNS_PER_MERGE:06d}.run")
      write_run(out, heapq.merge(*[read_run(p) for p in group]))
      merged.append(out)
      every.append(out)
    paths = merged
    level += 1
  yield from heapq.merge(*[read_run(p) for p in paths])
  _remove(every)  # only now: a retried merge finds all its inputs


class _WriteRun(beam.DoFn):
  """(shard, [(key, record), ...]) -> (shard, path of a run file holding the rows sorted).

  Runs after the producer in the same fused stage, so the records go from the bucket that made
  them to a file; only paths go through the shuffle. The name comes from the rows (their smallest
  key, unique per producer), so a retried bundle rewrites the same file with the same bytes.
  """

  def __init__(self, runs_dir: str):
    self._runs_dir = runs_dir

  def process(self, element):
    shard, rows = element
    if not rows:
      return
    rows = sorted(rows)
    path = os.path.join(self._runs_dir, f"shard-{shard:05d}-{rows[0][0]:020d}-{len(rows)}.run")
    write_run(path, rows)
    yield shard, path


class _MergeShard(beam.DoFn):
  """(shard, [run paths]) -> path of the staged shard: the runs merged in (key, record) order."""

  def __init__(self, staging_dir: str, config):
    self._staging_dir = staging_dir
    self._config = config

  def process(self, element):
    shard, runs = element
    runs = sorted(set(runs))
    name = self._config.shard_name(shard)
    path = os.path.join(self._staging_dir, name)
    runs_dir = os.path.join(self._staging_dir, RUNS_DIR_NAME)
    rows = merge_runs(runs, runs_dir, name)
    write_tfrecord_file(path, (record for _, record in rows), self._config.compression)
    yield path


class WriteTFRecordShards(beam.PTransform):
  """(shard, [(key, record), ...]) -> config.num_shards files in `staging_dir` (see publish_shards).

  Records come in lists (one per producing bucket). Each list becomes a sorted run file under
  `staging_dir`/runs (in the producer's stage), and each shard is a streaming merge of its runs, so
  neither the runner nor any worker holds a shard's records: memory does not grow with the corpus.
  Rows are in (key, record) order, byte for byte what sorting them all in memory gives.
  """

  def __init__(self, staging_dir: str, config):
    super().__init__()
    self._staging_dir = staging_dir
    self._config = config

  def expand(self, keyed_records):
    runs_dir = os.path.join(self._staging_dir, RUNS_DIR_NAME)
    # Output types are declared (the types Beam would infer) so that building the pipeline skips
    # Beam's bytecode type inference of these DoFns (~0.1 CPU-s a run, mostly _MergeShard).
    return (keyed_records
            | "WriteRuns" >> beam.ParDo(_WriteRun(runs_dir)).with_output_types(Tuple[Any, Any])
            | "GroupShards" >> beam.GroupByKey()
            | "MergeShards" >> beam.ParDo(_MergeShard(self._staging_dir, self._config)).with_output_types(Any))


def staging_dir_for(output_dir: str) -> str:
  return os.path.join(output_dir, STAGING_DIR_NAME)


class _Files:
  """The few file operations publishing needs: `os` for local paths, tf.io.gfile for the others."""

  def __init__(self, path: str):
    self.local = _is_local(path)
    if not self.local:
      import tensorflow as tf  # pylint: disable=g-import-not-at-top
      self._gfile = tf.io.gfile

  def exists(self, path):
    return os.path.exists(path) if self.local else self._gfile.exists(path)

  def rmtree(self, path):
    if self.local:
      import shutil  # pylint: disable=g-import-not-at-top
      shutil.rmtree(path)
    else:
      self._gfile.rmtree(path)

  def makedirs(self, path):
    os.makedirs(path, exist_ok=True) if self.local else self._gfile.makedirs(path)

  def remove(self, path):
    os.remove(path) if self.local else self._gfile.remove(path)

  def glob(self, pattern):
    if self.local:
      import glob  # pylint: disable=g-import-not-at-top
      return sorted(glob.glob(pattern))
    return self._gfile.glob(pattern)

  def rename(self, src, dst):
    os.replace(src, dst) if self.local else self._gfile.rename(src, dst, overwrite=True)

  def size(self, path):
    return os.path.getsize(path) if self.local else self._gfile.stat(path).length

  def write_text(self, path, text):
    if self.local:
      with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    else:
      with self._gfile.GFile(path, "w") as f:
        f.write(text)


def prepare_staging_dir(output_dir: str) -> str:
  """Creates an empty staging dir under `output_dir` (removing one a killed run left)."""
  files = _Files(output_dir)
  staging = staging_dir_for(output_dir)
  if files.exists(staging):
    files.rmtree(staging)
  files.makedirs(staging)
  files.makedirs(os.path.join(staging, RUNS_DIR_NAME))
  return staging


def publish_shards(output_dir: str, config, summary: Dict) -> List[str]:
  """Moves the staged shards into `output_dir`, creating empty shards, then writes the summary last.

  Removes an old summary first (so an interrupted publish never looks finished) and stale shards of
  the same prefix from earlier runs with another num_shards. Returns the published shard paths.
  """
  files = _Files(output_dir)
  staging = staging_dir_for(output_dir)
  summary_path = os.path.join(output_dir, SUMMARY_NAME)
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
      write_tfrecord_file(staged, [], config.compression)
    final = os.path.join(output_dir, name)
    files.rename(staged, final)
    paths.append(final)
  summary = dict(summary, files=[{"name": os.path.basename(p), "bytes": files.size(p)} for p in paths])
  tmp = summary_path + ".tmp"
  files.write_text(tmp, json.dumps(summary, indent=2, sort_keys=True) + "\n")
  files.rename(tmp, summary_path)
  files.rmtree(staging)
  return paths
