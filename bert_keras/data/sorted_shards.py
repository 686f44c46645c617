"""Writes keyed records into a fixed number of shards, each sorted by (key, record), without any
process holding a shard: producers write sorted run files, a per-shard streaming k-way merge writes
the shard.

  (shard, [(key, record), ...]) lists    -- or single (shard, (key, record)) rows, gathered per
    -> sorted run files under runs_dir      bundle into lists of about `run_bytes`
    -> GroupByKey of run paths (only paths go through the shuffle)
    -> per shard: heapq.merge of its runs -> writer.write(shard, records in order)

Memory per worker is bounded by a run (a producer's list) plus one row per merged run; it does not
grow with the corpus. The order is byte for byte what sorting all of a shard's rows in memory gives.

`SortedRuns` is the part before the merge, for a consumer that merges the runs itself (e.g. to
read a group of rows per key: the pretraining examples' random-next buckets).

Keys are uint64 (`UINT64_KEYS`, the pretraining examples' instance keys; `UINT64_GROUP_KEYS` when a
key repeats) or bytes (`BYTES_KEYS`, e.g. UTF-8 document ids: bytewise order of UTF-8 is code-point
order, i.e. Python's str order).
The shard format is the writer's: any object with `shard_name(shard) -> str` (names merge rounds)
and `write(shard, records) -> path` (streams the records into the shard file).
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
# Bytes of records a producer gathers before it sorts them into a run file: the most of the corpus a
# worker holds at once. 16 MB keeps a 2-worker local run's peak RSS within 1.1x from a 2.5 MB to a
# 40 MB corpus (bench/bench_pretraining_data.py; 64 MB held a 40 MB corpus whole).
RUN_BYTES = 16 << 20


def is_local(path: str) -> bool:
  return "://" not in path


def _open_read(path: str):
  """A binary file object reading `path` (local, or any filesystem Beam knows)."""
  if is_local(path):
    return open(path, "rb")  # pylint: disable=unspecified-encoding
  from apache_beam.io.filesystems import FileSystems  # pylint: disable=g-import-not-at-top
  return FileSystems.open(path)


def remove_dir(path: str) -> None:
  """Removes directory `path` and what it holds (e.g. run files of failed attempts), if it exists.

  On GCS a directory is only a prefix: Beam deletes a path ending in "/" recursively (nothing under
  it is fine there, while Beam's local filesystem fails on an empty directory). Other remote
  filesystems (s3, hdfs) may fail on a missing path, so there it is checked first.
  """
  if is_local(path):
    if os.path.isdir(path):
      shutil.rmtree(path)
    return
  from apache_beam.io.filesystems import FileSystems  # pylint: disable=g-import-not-at-top
  prefix = path.rstrip("/") + "/"
  if path.startswith("gs://") or FileSystems.exists(prefix):
    FileSystems.delete([prefix])


def remove_files(paths: List[str]) -> None:
  """Deletes the files at `paths` (local, or any filesystem Beam knows)."""
  if paths and is_local(paths[0]):
    for path in paths:
      os.remove(path)
  elif paths:
    from apache_beam.io.filesystems import FileSystems  # pylint: disable=g-import-not-at-top
    FileSystems.delete(paths)


class _Uint64Keys:
  """Run rows as <key uint64><record length uint32><record>."""

  _HEADER = struct.Struct("<QI")

  def pack(self, key: int, record: bytes) -> bytes:
    return self._HEADER.pack(key, len(record)) + record

  def read(self, f) -> Optional[Tuple[int, bytes]]:
    header = f.read(self._HEADER.size)
    if not header:
      return None
    key, length = self._HEADER.unpack(header)
    return key, f.read(length)

  def run_name(self, shard: int, rows: List[Tuple[int, bytes]]) -> str:
    # The smallest key is unique per producer, so a retried bundle rewrites the same file.
    return f"shard-{shard:05d}-{rows[0][0]:020d}-{len(rows)}.run"


class _BytesKeys:
  """Run rows as <key length uint32><record length uint32><key><record>."""

  _HEADER = struct.Struct("<II")

  def pack(self, key: bytes, record: bytes) -> bytes:
    return self._HEADER.pack(len(key), len(record)) + key + record

  def read(self, f) -> Optional[Tuple[bytes, bytes]]:
    header = f.read(self._HEADER.size)
    if not header:
      return None
    key_length, length = self._HEADER.unpack(header)
    return f.read(key_length), f.read(length)

  def run_name(self, shard: int, rows: List[Tuple[bytes, bytes]]) -> str:
    # Byte keys need not be unique (two files of the same name give the same document ids), so
    # the name is unique per attempt; a failed attempt's run is never merged and goes with runs_dir.
    del rows
    return f"shard-{shard:05d}-{uuid.uuid4().hex}.run"


class _Uint64GroupKeys(_Uint64Keys):
  """Uint64 keys that repeat (a key names a group of rows, e.g. a bucket): run names are unique per
  attempt, as for byte keys."""

  def run_name(self, shard: int, rows: List[Tuple[int, bytes]]) -> str:
    del rows
    return f"shard-{shard:05d}-{uuid.uuid4().hex}.run"


UINT64_KEYS = _Uint64Keys()
UINT64_GROUP_KEYS = _Uint64GroupKeys()
BYTES_KEYS = _BytesKeys()


def write_run(path: str, rows: Iterable[Tuple[Any, bytes]], keys=UINT64_KEYS) -> None:
  """Writes (key, record) rows, already sorted, as a run file (atomically)."""
  with atomic_io.beam_create(path) as f:
    for key, record in rows:
      f.write(keys.pack(key, record))


def read_run(path: str, keys=UINT64_KEYS) -> Iterator[Tuple[Any, bytes]]:
  """The rows of a run file, streamed."""
  with _open_read(path) as f:
    while True:
      row = keys.read(f)
      if row is None:
        return
      yield row


def merge_runs(paths: List[str], work_dir: str, name: str, keys=UINT64_KEYS,
               max_runs_per_merge: Optional[int] = None) -> Iterator[Tuple[Any, bytes]]:
  """All rows of the runs at `paths` in (key, record) order, streamed; at most
  `max_runs_per_merge` (default MAX_RUNS_PER_MERGE) files are open at once (larger sets are first
  merged, in rounds, into runs under `work_dir`). The runs are deleted once all rows have been read."""
  fan_in = max_runs_per_merge or MAX_RUNS_PER_MERGE
  paths = sorted(paths)
  every = list(paths)
  level = 0
  while len(paths) > fan_in:
    merged = []
    for i in range(0, len(paths), fan_in):
      group = paths[i:i + fan_in]
      out = os.path.join(work_dir, f"{name}-merge{level}-{i // fan_in:06d}.run")
      write_run(out, heapq.merge(*[read_run(p, keys) for p in group]), keys)
      merged.append(out)
      every.append(out)
    paths = merged
    level += 1
  yield from heapq.merge(*[read_run(p, keys) for p in paths])
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
  """(shard, [(key, record), ...]) -> (shard, path of a run file holding the rows sorted).

  Runs after the producer in the same fused stage, so the records go from the list that holds them
  to a file; only paths go through the shuffle.
  """

  def __init__(self, runs_dir: str, keys):
    self._runs_dir = runs_dir
    self._keys = keys

  def process(self, element):
    shard, rows = element
    if not rows:
      return
    rows = sorted(rows)
    path = os.path.join(self._runs_dir, self._keys.run_name(shard, rows))
    write_run(path, rows, self._keys)
    yield shard, path


class _MergeShard(beam.DoFn):
  """(shard, [run paths]) -> the writer's path of the shard: the runs merged in (key, record) order.
  A None path stands for no run (a shard that must be written even when empty)."""

  def __init__(self, runs_dir: str, writer, keys):
    self._runs_dir = runs_dir
    self._writer = writer
    self._keys = keys

  def process(self, element):
    shard, runs = element
    runs = sorted(set(r for r in runs if r is not None))
    rows = merge_runs(runs, self._runs_dir, self._writer.shard_name(shard), self._keys)
    yield self._writer.write(shard, (record for _, record in rows))


class SortedRuns(beam.PTransform):
  """(shard, [(key, record), ...]) lists -> (shard, [run paths]): each list sorted into a run file
  under `runs_dir` in the producer's stage, then only the paths grouped per shard (a None path in
  each group of range(num_shards) when `num_shards` is given). `merge_runs` streams a group's rows
  in (key, record) order. `run_bytes`: the input is single rows instead, gathered per bundle
  (_GatherRuns)."""

  def __init__(self, runs_dir: str, keys=UINT64_KEYS, run_bytes: Optional[int] = None,
               num_shards: Optional[int] = None):
    super().__init__()
    self._runs_dir = runs_dir
    self._keys = keys
    self._run_bytes = run_bytes
    self._num_shards = num_shards

  def expand(self, keyed):
    # Output types are declared (the types Beam would infer) so that building the pipeline skips
    # Beam's bytecode type inference of these DoFns.
    if self._run_bytes is not None:
      keyed = keyed | "GatherRuns" >> beam.ParDo(_GatherRuns(self._run_bytes)).with_output_types(Tuple[Any, Any])
    runs = keyed | "WriteRuns" >> beam.ParDo(_WriteRun(self._runs_dir, self._keys)).with_output_types(Tuple[Any, Any])
    if self._num_shards is not None:
      every_shard = keyed.pipeline | "EveryShard" >> beam.Create([(i, None) for i in range(self._num_shards)])
      runs = (runs, every_shard) | "WithEveryShard" >> beam.Flatten()
    return runs | "GroupShards" >> beam.GroupByKey()


class WriteSortedShards(beam.PTransform):
  """(shard, [(key, record), ...]) lists -> the paths `writer` wrote, one per shard (see module doc).

  With `run_bytes`, the input is single (shard, (key, record)) rows instead (bytes keys and records),
  gathered per bundle into lists of about `run_bytes` (see _GatherRuns). With `num_shards`, every
  shard in range(num_shards) is written, also one no row went to. Run files go under `runs_dir`
  (created when missing); merged runs are deleted, a failed attempt's runs stay for the
  caller to remove with the directory (remove_dir).
  """

  def __init__(self, runs_dir: str, writer, keys=UINT64_KEYS, run_bytes: Optional[int] = None,
               num_shards: Optional[int] = None):
    super().__init__()
    self._runs_dir = runs_dir
    self._writer = writer
    self._keys = keys
    self._run_bytes = run_bytes
    self._num_shards = num_shards

  def expand(self, keyed):
    # Declared (what Beam infers): building the pipeline skips inferring it from bytecode.
    return (keyed
            | "SortedRuns" >> SortedRuns(self._runs_dir, self._keys, self._run_bytes, self._num_shards)
            | "MergeShards" >> beam.ParDo(_MergeShard(self._runs_dir, self._writer, self._keys)).with_output_types(Any))
