"""Corpus ingestion writes the same shards on every run: shard by a hash of the document id."""

import glob
import os

import apache_beam as beam

from bert_keras.data.pretraining_instances import stable_hash
from components.corpus_ingestion import executor


def _corpus(path, documents):
  with open(path, "w", encoding="utf-8") as f:
    for sentences in documents:
      f.write("\n".join(sentences) + "\n\n")


def _ingest(tmp_path, name, num_shards, max_documents=0):
  prefix = str(tmp_path / name / executor.SHARD_PREFIX)
  parameters = dict(wikipedia_dumps=[], bert_text_corpora=[str(tmp_path / "src" / "*.txt")],
                    line_corpora=[], max_documents=max_documents, num_shards=num_shards)
  with beam.Pipeline() as p:
    executor.build_pipeline(p, parameters, prefix)
  return sorted(glob.glob(prefix + "-*" + executor.SHARD_SUFFIX))


def _documents(path):
  text = open(path, encoding="utf-8").read()
  return [block.split("\n") for block in text.split("\n\n") if block.strip()]


def test_shards_follow_the_document_ids_and_reruns_give_the_same_bytes(tmp_path):
  os.makedirs(tmp_path / "src")
  docs = [[f"doc {d} sentence {s}." for s in range(1 + d % 3)] for d in range(40)]
  _corpus(tmp_path / "src" / "a.txt", docs[:25])
  _corpus(tmp_path / "src" / "b.txt", docs[25:])
  first = _ingest(tmp_path, "one", num_shards=3)
  second = _ingest(tmp_path, "two", num_shards=3)
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
  assert executor.count_corpus(first)["documents"] == 40


def test_a_shard_without_documents_is_still_written(tmp_path):
  os.makedirs(tmp_path / "src")
  _corpus(tmp_path / "src" / "a.txt", [["only one document."]])
  paths = _ingest(tmp_path, "out", num_shards=4)
  assert len(paths) == 4
  assert executor.count_corpus(paths)["documents"] == 1
  assert sum(os.path.getsize(p) == 0 for p in paths) == 3
