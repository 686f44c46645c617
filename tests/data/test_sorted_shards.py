"""sorted_shards: byte-keyed runs, bounded run gathering, and a merge that streams (never holds a shard)."""

import random

import pytest

from bert_keras.data import sorted_shards
from bert_keras.data.sorted_shards import _GatherRuns, _MergeShard, _WriteRun, uint64_key  # pylint: disable=protected-access


def _rows(seed, n):
  rng = random.Random(seed)
  keys = ["a", "b", "é", "ﬀ", "😀", "a:10", "a:9", ""]  # 1-4 byte UTF-8 characters, prefixes, empty
  return [(rng.choice(keys).encode("utf-8") + bytes(rng.getrandbits(8) for _ in range(rng.randint(0, 3))),
           bytes(rng.getrandbits(8) for _ in range(rng.randint(0, 30)))) for _ in range(n)]


def test_byte_keyed_runs_merge_in_key_order_with_bounded_fan_in(tmp_path):
  rows = _rows(1, 500)
  rows += [(rows[0][0], b"tie, other record"), (rows[0][0], b"")]  # equal keys: ordered by record
  paths = []
  for i in range(10):
    path = str(tmp_path / f"r{i}.run")
    sorted_shards.write_run(path, sorted(rows[i::10]))
    paths.append(path)
  assert list(sorted_shards.read_run(paths[0])) == sorted(rows[0::10])
  merged = list(sorted_shards.merge_runs(paths, str(tmp_path), "shard", max_runs_per_merge=3))
  assert merged == sorted(rows)
  assert not list(tmp_path.iterdir())  # inputs and merge rounds are deleted


def test_utf8_byte_order_is_python_string_order():
  ids = ["a.txt:10", "a.txt:9", "b", "ab", "", "é", "z", "\uffff", "😀", "\ue000", "ﬀ", "\ud7ff", "\ud800"]
  assert sorted(ids, key=lambda s: s.encode("utf-8", "surrogatepass")) == sorted(ids)


def test_gathered_runs_are_bounded_and_keep_every_row():
  rows = [(shard, row) for shard, row in zip(random.Random(3).choices(range(3), k=400), _rows(2, 400))]
  run_bytes = 200
  size = lambda run: sum(len(k) + len(r) for k, r in run)
  gather = _GatherRuns(run_bytes)
  gather.start_bundle()
  flushes = [list(gather.process(row)) for row in rows]
  flushes = [f for f in flushes if f] + [[wv.value for wv in gather.finish_bundle()]]
  largest_row = max(len(k) + len(r) for _, (k, r) in rows)
  # What the bundle held at once: below run_bytes plus the row that crossed it.
  assert all(sum(size(run) for _, run in flush) < run_bytes + largest_row for flush in flushes)
  assert len(flushes) >= sum(len(k) + len(r) for _, (k, r) in rows) // (run_bytes + largest_row)
  assert all(run for flush in flushes for _, run in flush)
  got = sorted((shard, row) for flush in flushes for shard, run in flush for row in run)
  assert got == sorted(rows)


class _CountingReads:
  """sorted_shards.read_run, counting the rows read from all run files."""

  def __init__(self):
    self.rows_read = 0
    self._read_run = sorted_shards.read_run

  def __call__(self, path):
    for row in self._read_run(path):
      self.rows_read += 1
      yield row


class _CheckingWriter:
  """Consumes the shard's records, checking at each that the merge has read at most one row per run
  ahead: a merge that first collected the shard would have read all rows before the first record."""

  def __init__(self, keys, num_runs):
    self.keys, self.num_runs, self.records, self.most_ahead = keys, num_runs, [], 0

  def __call__(self, shard, records):
    for record in records:
      self.most_ahead = max(self.most_ahead, self.keys.rows_read - len(self.records))
      self.records.append(record)
    return f"written-{shard}"


def test_a_shard_is_merged_streaming_from_its_runs(tmp_path, monkeypatch):
  keys = _CountingReads()
  monkeypatch.setattr(sorted_shards, "read_run", keys)
  rows = _rows(4, 300)
  paths = []
  for i in range(6):
    paths.append(str(tmp_path / f"r{i}.run"))
    sorted_shards.write_run(paths[-1], sorted(rows[i::6]))
  writer = _CheckingWriter(keys, len(paths))
  merge = _MergeShard(str(tmp_path), writer)
  assert list(merge.process((7, paths + [None, paths[0]]))) == ["written-7"]  # None: no run; duplicates once
  assert writer.records == [record for _, record in sorted(rows)]
  assert 1 <= writer.most_ahead <= len(paths)
  assert keys.rows_read == len(rows)
  writer = _CheckingWriter(keys, 0)
  assert list(_MergeShard(str(tmp_path), writer).process((0, [None]))) == ["written-0"]
  assert writer.records == []


def test_repeated_uint64_keys_from_several_producers_keep_every_row(tmp_path):
  """Group keys (e.g. random-next buckets) repeat across producers: two runs of one shard with the
  same smallest key and length are two files, and the merge reads the rows of both."""
  write = _WriteRun(str(tmp_path))
  first = [(uint64_key(5), b"x"), (uint64_key(7), b"y")]
  second = [(uint64_key(5), b"z"), (uint64_key(9), b"w")]
  paths = [path for rows in (first, second) for _, path in write.process((0, rows))]
  assert len(set(paths)) == 2
  assert list(sorted_shards.merge_runs(paths, str(tmp_path), "m")) == sorted(first + second)
  assert not list(tmp_path.iterdir())  # merged runs are removed


def test_a_failed_run_write_leaves_no_file(tmp_path):
  def rows():
    yield b"a", b"first"
    raise RuntimeError("producer died")

  with pytest.raises(RuntimeError, match="producer died"):
    sorted_shards.write_run(str(tmp_path / "r0.run"), rows())
  assert not list(tmp_path.iterdir())


def test_remove_dir_removes_the_tree_and_accepts_an_absent_one(tmp_path):
  runs = tmp_path / "runs"
  (runs / "sub").mkdir(parents=True)
  (runs / "shard-00000-x.run").write_bytes(b"run")
  (runs / "sub" / "left.run.tmp-1").write_bytes(b"")
  sorted_shards.remove_dir(str(runs))
  assert not list(tmp_path.iterdir())
  sorted_shards.remove_dir(str(runs))  # a first run has none
