"""Keyed records into a fixed number of shards, each sorted by (key, record), without any process
holding a shard: producers sort lists into run files, only run paths go through the GroupByKey, and
each shard is a streaming heapq.merge of its runs. Memory per worker is one run plus one row per
merged run; the order is byte for byte what sorting a shard in memory gives.

Keys are bytes: UTF-8 document ids (bytewise order is Python's str order) or `uint64_key`s.
"""

from __future__ import annotations

import heapq
import os
import shutil
import struct
import uuid
from typing import Any, Iterable, Iterator, List, Optional, Tuple

import apache_beam as beam
from apache_beam.transforms.window import GlobalWindow
from apache_beam.utils.windowed_value import WindowedValue

from bert_keras import atomic_io

MAX_RUNS_PER_MERGE = 256  # open files per merge; more runs are merged in rounds
# Bytes a producer gathers before sorting them into a run file: the most of the corpus a worker
# holds (measured in docs/design.md, "Pretraining data without holding the corpus").
RUN_BYTES = 16 << 20


def is_local(path: str) -> bool:
  return "://" not in path


def _open_read(path: str):
  if is_local(path):
    return open(path, "rb")  # pylint: disable=unspecified-encoding
  from apache_beam.io.filesystems import FileSystems  # pylint: disable=g-import-not-at-top
  return FileSystems.open(path)


def remove_dir(path: str) -> None:
  """Removes directory `path` and what it holds, if it exists. On GCS a directory is a prefix that
  Beam deletes recursively (absent is fine); other remote filesystems may fail on a missing path."""
  if is_local(path):
    if os.path.isdir(path):
      shutil.rmtree(path)
    return
  from apache_beam.io.filesystems import FileSystems  # pylint: disable=g-import-not-at-top
  prefix = path.rstrip("/") + "/"
  if path.startswith("gs://") or FileSystems.exists(prefix):
    FileSystems.delete([prefix])


def remove_files(paths: List[str]) -> None:
  if paths and is_local(paths[0]):
    for path in paths:
      os.remove(path)
  elif paths:
    from apache_beam.io.filesystems import FileSystems  # pylint: disable=g-import-not-at-top
    FileSystems.delete(paths)


_HEADER = struct.Struct("<II")  # a run row: key length, record length, key, record


def uint64_key(value: int) -> bytes:
  """A uint64 as a key: 8 big-endian bytes, whose bytewise order is numeric order."""
  return value.to_bytes(8, "big")


def write_run(path: str, rows: Iterable[Tuple[bytes, bytes]]) -> None:
  """Writes (key, record) rows, already sorted, as a run file (atomically)."""
  with atomic_io.beam_create(path) as f:
    for key, record in rows:
      f.write(_HEADER.pack(len(key), len(record)) + key + record)


def read_run(path: str) -> Iterator[Tuple[bytes, bytes]]:
  """The rows of a run file, streamed."""
  with _open_read(path) as f:
    while True:
      header = f.read(_HEADER.size)
      if not header:
        return
      key_length, length = _HEADER.unpack(header)
      yield f.read(key_length), f.read(length)


def merge_runs(paths: List[str], work_dir: str, name: str,
               max_runs_per_merge: Optional[int] = None) -> Iterator[Tuple[bytes, bytes]]:
  """All rows of the runs at `paths` in (key, record) order, streamed, at most `max_runs_per_merge`
  files open at once (more are merged in rounds under `work_dir`); the runs are then deleted."""
  fan_in = max_runs_per_merge or MAX_RUNS_PER_MERGE
  paths = sorted(paths)
  every = list(paths)
  level = 0
  while len(paths) > fan_in:
    merged = []
    for i in range(0, len(paths), fan_in):
      group = paths[i:i + fan_in]
      out = os.path.join(work_dir, f"{name}-merge{level}-{i // fan_in:06d}.run")
      write_run(out, heapq.merge(*[read_run(p) for p in group]))
      merged.append(out)
      every.append(out)
    paths = merged
    level += 1
  yield from heapq.merge(*[read_run(p) for p in paths])
  remove_files(every)  # only now: a retried merge finds all its inputs


class _GatherRuns(beam.DoFn):
  """(shard, (key, record)) rows -> (shard, [rows]) lists. A bundle gathers rows until their keys and
  records reach `run_bytes` (so it holds less than `run_bytes` plus one row), then emits every
  shard's list; the rest at the bundle's end."""

  def __init__(self, run_bytes: int):
    self._run_bytes = run_bytes

  def start_bundle(self):
    self._lists = {}
    self._bytes = 0

  def process(self, element):
    shard, (key, record) = element
    self._lists.setdefault(shard, []).append((key, record))
    self._bytes += len(key) + len(record)
    if self._bytes >= self._run_bytes:
      yield from self._flush()

  def finish_bundle(self):
    for shard, rows in self._flush():
      yield WindowedValue((shard, rows), GlobalWindow().max_timestamp(), [GlobalWindow()])

  def _flush(self):
    lists, self._lists, self._bytes = self._lists, {}, 0
    yield from lists.items()


class _WriteRun(beam.DoFn):
  """(shard, [(key, record), ...]) -> (shard, path of a run file of the rows sorted), fused with the
  producer: only paths go through the shuffle."""

  def __init__(self, runs_dir: str):
    self._runs_dir = runs_dir

  def process(self, element):
    shard, rows = element
    if rows:
      # Unique per attempt: a failed attempt's run is never merged and goes with runs_dir.
      path = os.path.join(self._runs_dir, f"shard-{shard:05d}-{uuid.uuid4().hex}.run")
      write_run(path, sorted(rows))
      yield shard, path


class _MergeShard(beam.DoFn):
  """(shard, [run paths]) -> `write(shard, records)`'s path: the runs merged in (key, record) order.
  A None path stands for no run (a shard that must be written even when empty)."""

  def __init__(self, runs_dir: str, write):
    self._runs_dir = runs_dir
    self._write = write

  def process(self, element):
    shard, runs = element
    runs = sorted(set(r for r in runs if r is not None))
    rows = merge_runs(runs, self._runs_dir, f"merge-{shard:05d}")
    yield self._write(shard, (record for _, record in rows))


class WriteRuns(beam.PTransform):
  """(shard, [(key, record), ...]) lists -> (shard, path): each list sorted into a run file under
  `runs_dir` in the producer's stage. With `run_bytes`, the input is single (shard, (key, record))
  rows, gathered per bundle (_GatherRuns)."""

  def __init__(self, runs_dir: str, run_bytes: Optional[int] = None):
    super().__init__()
    self._runs_dir = runs_dir
    self._run_bytes = run_bytes

  def expand(self, keyed):
    # Output types declared (what Beam infers): building the pipeline skips bytecode inference.
    if self._run_bytes is not None:
      keyed = keyed | "GatherRuns" >> beam.ParDo(_GatherRuns(self._run_bytes)).with_output_types(Tuple[Any, Any])
    return keyed | "WriteRuns" >> beam.ParDo(_WriteRun(self._runs_dir)).with_output_types(Tuple[Any, Any])


class SortedRuns(WriteRuns):
  """WriteRuns, then only the paths grouped per shard: (shard, [run paths]), with a None path in
  each group of range(num_shards) when `num_shards` is given."""

  def __init__(self, runs_dir: str, run_bytes: Optional[int] = None, num_shards: Optional[int] = None):
    super().__init__(runs_dir, run_bytes)
    self._num_shards = num_shards

  def expand(self, keyed):
    runs = super().expand(keyed)
    if self._num_shards is not None:
      every_shard = keyed.pipeline | "EveryShard" >> beam.Create([(i, None) for i in range(self._num_shards)])
      runs = (runs, every_shard) | "WithEveryShard" >> beam.Flatten()
    return runs | "GroupShards" >> beam.GroupByKey()


class WriteSortedShards(SortedRuns):
  """SortedRuns, then per shard `write(shard, records) -> path` of its runs merged (see module doc).
  Merged runs are deleted; a failed attempt's stay for the caller to remove (remove_dir)."""

  def __init__(self, runs_dir: str, write, **kwargs):
    super().__init__(runs_dir, **kwargs)
    self._write = write

  def expand(self, keyed):
    return (super().expand(keyed)
            | "MergeShards" >> beam.ParDo(_MergeShard(self._runs_dir, self._write)).with_output_types(Any))
