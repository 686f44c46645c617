"""Corpus ingestion as a Beam graph: every source read into (doc_id, sentences), written as Google
BERT corpus text shards (one sentence per line, a blank line after each document), each shard's
documents sorted by id. Imports Beam only to build the graph."""

from __future__ import annotations

import functools
import os
from typing import Iterable, Optional

from bert_keras import atomic_io

SHARD_PREFIX = "corpus"
SHARD_SUFFIX = ".txt"
RUNS_DIR_NAME = ".runs"


def count_corpus(paths) -> dict:
  """Documents, sentences and characters of corpus shards in the BERT layout."""
  documents = sentences = chars = 0
  for path in paths:
    in_document = False
    with open(path, encoding="utf-8") as f:
      for line in f:
        line = line.strip()
        if line:
          sentences += 1
          chars += len(line)
          in_document = True
        elif in_document:
          documents += 1
          in_document = False
    documents += int(in_document)
  return {"documents": documents, "sentences": sentences, "characters": chars}


def document_row(document) -> tuple[bytes, bytes]:
  """(doc_id, sentences) -> (sort key, shard bytes). The key is the id in UTF-8, whose bytewise
  order is Python's str order (surrogatepass: lone surrogates keep their code-point place)."""
  doc_id, sentences = document
  text = "\n".join(s.replace("\n", " ") for s in sentences) + "\n\n"
  return doc_id.encode("utf-8", "surrogatepass"), text.encode("utf-8")


def write_text_shard(output_prefix: str, num_shards: int, index: int, records: Iterable[bytes]) -> str:
  """Streams `records` to WriteToText's shard name <prefix>-00000-of-00002.txt, atomically, local
  or gs:// (atomic_io.beam_create); returns the path."""
  path = f"{output_prefix}-{index:05d}-of-{num_shards:05d}{SHARD_SUFFIX}"
  with atomic_io.beam_create(path) as f:
    for record in records:
      f.write(record)
  return path


def build_pipeline(p, parameters, output_prefix: str, run_bytes: Optional[int] = None):
  """Reads all sources, optionally keeps a stable slice, writes the text shards; returns the
  PCollection of the written shard paths. `run_bytes` (default sorted_shards.RUN_BYTES): the most
  of the corpus a worker holds. The run-file directory beside the shards is made (emptied) here
  and removed by the graph's last step."""
  import apache_beam as beam  # pylint: disable=import-outside-toplevel
  from apache_beam.io.filesystems import FileSystems
  from bert_keras.data.bert_corpus_reader import ReadBertCorpus
  from bert_keras.data.line_document_reader import ReadLineDocuments
  from bert_keras.data.pretraining_instances import stable_hash
  from bert_keras.data.sorted_shards import RUN_BYTES, WriteSortedShards, remove_dir
  from bert_keras.data.wikipedia_reader import ReadWikipediaDump

  sources = []
  for i, pattern in enumerate(parameters["wikipedia_dumps"]):
    sources.append(p | f"ReadWikipedia{i}" >> ReadWikipediaDump(pattern))
  for i, pattern in enumerate(parameters["bert_text_corpora"]):
    sources.append(p | f"ReadBertText{i}" >> ReadBertCorpus(pattern))
  for i, pattern in enumerate(parameters["line_corpora"]):
    sources.append(p | f"ReadLines{i}" >> ReadLineDocuments(pattern))
  documents = tuple(sources) | "Flatten" >> beam.Flatten()
  if parameters["max_documents"]:
    # A stable pseudo-random slice: the documents with the smallest hash of their id.
    documents = (documents
                 | "KeepSlice" >> beam.combiners.Top.Smallest(
                     parameters["max_documents"], key=lambda doc: stable_hash("slice", doc[0]))
                 | "Unlist" >> beam.FlatMap(lambda docs: docs))
  num_shards = parameters["num_shards"]
  runs_dir = os.path.join(os.path.dirname(output_prefix), RUNS_DIR_NAME)
  remove_dir(runs_dir)  # a killed run's
  FileSystems.mkdirs(runs_dir)
  # Not WriteToText: with a fixed shard count it deals records to shards at random, and a document
  # is named after its file and line, so every run made different pretraining examples. Here a
  # document's shard is a hash of its id and a shard lists its documents sorted by id.
  return (documents
          | "KeyByShard" >> beam.Map(
              lambda doc: (stable_hash("shard", doc[0]) % num_shards, document_row(doc)))
          | "Write" >> WriteSortedShards(
              runs_dir, functools.partial(write_text_shard, output_prefix, num_shards),
              run_bytes=run_bytes or RUN_BYTES, num_shards=num_shards)
          | "AllWritten" >> beam.combiners.ToList()
          | "RemoveRuns" >> beam.Map(lambda paths: remove_dir(runs_dir) or sorted(paths)))
