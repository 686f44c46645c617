"""Corpus ingestion as a Beam graph: every source read into (doc_id, sentences), written as Google
BERT corpus text shards (one sentence per line, a blank line after each document), each shard's
documents sorted by id."""

from __future__ import annotations

import os
from typing import Optional

from bert_keras.data import text_shards

SHARD_PREFIX = "corpus"
SHARD_SUFFIX = text_shards.SHARD_SUFFIX
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


def runs_dir_for(output_prefix: str) -> str:
  return os.path.join(os.path.dirname(output_prefix), RUNS_DIR_NAME)


def build_pipeline(p, parameters, output_prefix: str, run_bytes: Optional[int] = None):
  """The Beam graph: read all sources, optionally keep a stable slice, write text shards.

  `run_bytes` (default sorted_shards.RUN_BYTES): document bytes a worker gathers before sorting them
  into a run file, the most it holds of the corpus at once, whatever a shard's size (a shard is a
  streaming merge of its runs).

  Creates the (emptied) run-file directory next to the shards now; the graph's last step removes
  it. Returns the PCollection of the written shard paths.
  """
  import apache_beam as beam  # pylint: disable=import-outside-toplevel
  from apache_beam.io.filesystems import FileSystems
  from bert_keras.data.bert_corpus_reader import ReadBertCorpus
  from bert_keras.data.line_document_reader import ReadLineDocuments
  from bert_keras.data.pretraining_instances import stable_hash
  from bert_keras.data.sorted_shards import BYTES_KEYS, RUN_BYTES, WriteSortedShards, remove_dir
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
  runs_dir = runs_dir_for(output_prefix)
  remove_dir(runs_dir)  # a killed run's
  FileSystems.mkdirs(runs_dir)
  # Not WriteToText: with a fixed shard count it deals records to shards at random, and readers
  # name a document after its file and line, so every run made different pretraining examples.
  # Here a document's shard is a hash of its id and a shard lists its documents sorted by id:
  # each worker sorts what it read into run files of at most run_bytes, a shard is a streaming
  # merge of its runs, so no worker holds a shard.
  return (documents
          | "KeyByShard" >> beam.Map(
              lambda doc: (stable_hash("shard", doc[0]) % num_shards,
                           text_shards.document_row(doc)))
          | "Write" >> WriteSortedShards(
              runs_dir, text_shards.TextShardWriter(output_prefix, num_shards), BYTES_KEYS,
              run_bytes=run_bytes or RUN_BYTES, num_shards=num_shards)
          | "AllWritten" >> beam.combiners.ToList()
          | "RemoveRuns" >> beam.Map(lambda paths: remove_dir(runs_dir) or sorted(paths)))
