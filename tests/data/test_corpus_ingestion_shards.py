"""Corpus ingestion writes the same shards on every run: shard by a hash of the document id; a shard
is a merge of sorted runs, byte for byte the documents sorted by id in memory."""

import glob
import os

import pytest

from bert_keras.data.pretraining_instances import stable_hash
from bert_keras.data import corpus_ingestion
from tests.data.corpus_fixtures import ingest, unicode_corpus, write_corpus


def _in_memory_reference(docs, num_shards):
  """What corpus ingestion wrote when it sorted each shard's documents in memory: Python's sort of
  the id strings, one sentence per line, a blank line after each document."""
  shards = [b""] * num_shards
  for doc_id in sorted(docs):
    index = stable_hash("shard", doc_id) % num_shards
    shards[index] += ("\n".join(docs[doc_id]) + "\n\n").encode("utf-8")
  return shards


def test_a_shard_larger_than_a_run_gives_the_in_memory_bytes(tmp_path):
  # Each shard's several kilobytes are sorted in runs of about run_bytes, then merged (the runs'
  # sizes: bench/check_graphs.py).
  docs = unicode_corpus(tmp_path)
  paths = ingest(tmp_path, "out", num_shards=2, run_bytes=400, beam_args=["--runner=FnApiRunner"])
  assert [open(p, "rb").read() for p in paths] == _in_memory_reference(docs, 2)


@pytest.mark.slow
def test_multi_process_runs_give_the_in_memory_bytes(tmp_path):
  docs = unicode_corpus(tmp_path)
  paths = ingest(tmp_path, "out", num_shards=3, run_bytes=300, beam_args=[
      "--runner=FnApiRunner", "--direct_running_mode=multi_processing", "--direct_num_workers=2"])
  assert [open(p, "rb").read() for p in paths] == _in_memory_reference(docs, 3)


def _documents(path):
  text = open(path, encoding="utf-8").read()
  return [block.split("\n") for block in text.split("\n\n") if block.strip()]


def test_shards_follow_the_document_ids_and_reruns_give_the_same_bytes(tmp_path):
  os.makedirs(tmp_path / "src")
  docs = [[f"doc {d} sentence {s}." for s in range(1 + d % 3)] for d in range(40)]
  write_corpus(tmp_path / "src" / "a.txt", docs[:25])
  write_corpus(tmp_path / "src" / "b.txt", docs[25:])
  first = ingest(tmp_path, "one", num_shards=3)
  second = ingest(tmp_path, "two", num_shards=3)
  assert [os.path.basename(p) for p in first] == [
      f"corpus-0000{i}-of-00003.txt" for i in range(3)]
  assert [open(p, "rb").read() for p in first] == [open(p, "rb").read() for p in second]
  assert not glob.glob(str(tmp_path / "one" / "*tmp*"))
  # Each document sits in the shard its id hashes to, shards list documents sorted by id.
  first_lines = {}
  for name, start, count in (("a.txt", 0, 25), ("b.txt", 25, 15)):
    line = 1
    for d in range(start, start + count):
      first_lines[docs[d][0]] = f"a.txt:{line}" if name == "a.txt" else f"b.txt:{line}"
      line += len(docs[d]) + 1
  seen = []
  for index, path in enumerate(first):
    shard_docs = _documents(path)
    ids = [first_lines[doc[0]] for doc in shard_docs]
    assert ids == sorted(ids)
    assert all(stable_hash("shard", i) % 3 == index for i in ids)
    seen += [doc[0] for doc in shard_docs]
  assert sorted(seen) == sorted(doc[0] for doc in docs)
  assert corpus_ingestion.count_corpus(first)["documents"] == 40


def test_a_shard_without_documents_is_still_written(tmp_path):
  os.makedirs(tmp_path / "src")
  write_corpus(tmp_path / "src" / "a.txt", [["only one document."]])
  paths = ingest(tmp_path, "out", num_shards=4)
  assert len(paths) == 4
  assert corpus_ingestion.count_corpus(paths)["documents"] == 1
  assert sum(os.path.getsize(p) == 0 for p in paths) == 3


def test_a_failed_shard_write_keeps_the_earlier_shard_and_leaves_no_temporary(tmp_path):
  prefix = str(tmp_path / corpus_ingestion.SHARD_PREFIX)
  path = corpus_ingestion.write_text_shard(prefix, 2, 1, [b"doc one.\n\n", b"doc two.\n\n"])
  assert open(path, "rb").read() == b"doc one.\n\ndoc two.\n\n"

  def records():
    yield b"half a shard.\n\n"
    raise RuntimeError("merge died")

  with pytest.raises(RuntimeError, match="merge died"):
    corpus_ingestion.write_text_shard(prefix, 2, 1, records())
  assert os.listdir(tmp_path) == ["corpus-00001-of-00002.txt"]
  assert open(path, "rb").read() == b"doc one.\n\ndoc two.\n\n"
