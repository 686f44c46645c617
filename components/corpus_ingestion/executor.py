"""Corpus ingestion executor: every source read with Beam into (doc_id, sentences), written as
Google BERT corpus text shards (one sentence per line, a blank line after each document)."""

from __future__ import annotations

import glob
import os

from components.base.base_executor import BaseExecutor
from components.base.beam_options import local_beam_args

SHARD_PREFIX = "corpus"
SHARD_SUFFIX = ".txt"


def format_document(document) -> str:
  """(doc_id, sentences) -> the document's lines plus the blank separator line."""
  _, sentences = document
  return "\n".join(s.replace("\n", " ") for s in sentences) + "\n"


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


def build_pipeline(p, parameters, output_prefix: str):
  """The Beam graph: read all sources, optionally keep a stable slice, write text shards."""
  import apache_beam as beam  # pylint: disable=import-outside-toplevel
  from bert_keras.data.bert_corpus_reader import ReadBertCorpus
  from bert_keras.data.line_document_reader import ReadLineDocuments
  from bert_keras.data.pretraining_instances import stable_hash
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
  # Not WriteToText: with a fixed shard count it deals records to shards at random, and readers
  # name a document after its file and line, so every run made different pretraining examples.
  # Here a document's shard is a hash of its id and a shard lists its documents sorted by id.
  keyed = documents | "KeyByShard" >> beam.Map(
      lambda doc: (stable_hash("shard", doc[0]) % num_shards, doc))
  every_shard = p | "ShardIndices" >> beam.Create([(i, None) for i in range(num_shards)])
  return ({"docs": keyed, "shard": every_shard}
          | "GroupByShard" >> beam.CoGroupByKey()
          | "Write" >> beam.MapTuple(
              lambda index, grouped: write_shard(output_prefix, index, num_shards,
                                                 grouped["docs"])))


def shard_path(output_prefix: str, index: int, num_shards: int) -> str:
  """WriteToText's default shard name: <prefix>-00000-of-00002.txt."""
  return f"{output_prefix}-{index:05d}-of-{num_shards:05d}{SHARD_SUFFIX}"


def write_shard(output_prefix: str, index: int, num_shards: int, documents) -> str:
  """Writes one shard, documents sorted by id, to a temporary name, then renames it; its path.

  Beam's FileSystems, so the same code writes to local disk and to gs:// on Dataflow. A shard's
  documents pass through one worker (as they do inside WriteToText with a fixed shard count).
  """
  from apache_beam.io.filesystems import FileSystems  # pylint: disable=import-outside-toplevel

  path = shard_path(output_prefix, index, num_shards)
  temporary = f"{path}.tmp-{os.getpid()}"
  with FileSystems.create(temporary) as f:
    for document in sorted(documents, key=lambda doc: doc[0]):
      f.write((format_document(document) + "\n").encode("utf-8"))
  if FileSystems.exists(path):
    FileSystems.delete([path])
  FileSystems.rename([temporary], [path])
  return path


class CorpusIngestionExecutor(BaseExecutor):

  def run(self, inputs, outputs, parameters):
    import apache_beam as beam  # pylint: disable=import-outside-toplevel
    from apache_beam.options.pipeline_options import PipelineOptions
    from bert_keras.errors import UserError

    if not (parameters["wikipedia_dumps"] or parameters["bert_text_corpora"]
            or parameters["line_corpora"]):
      raise UserError("corpus ingestion: no source given (wikipedia_dumps, bert_text_corpora, "
                      "line_corpora are all empty)")
    corpus = outputs["corpus"]
    beam_args = local_beam_args(self.context.beam_pipeline_args)
    num_sources = sum(len(parameters[k]) for k in ("wikipedia_dumps", "bert_text_corpora",
                                                   "line_corpora"))
    self.log(f"reading {num_sources} source(s) with Beam {beam_args}")
    with beam.Pipeline(options=PipelineOptions(beam_args)) as p:
      build_pipeline(p, parameters, corpus.path(SHARD_PREFIX))
    shards = sorted(glob.glob(corpus.path(f"{SHARD_PREFIX}-*{SHARD_SUFFIX}")))
    counts = count_corpus(shards)
    if not counts["documents"]:
      raise UserError("corpus ingestion: the sources hold no document with text")
    corpus.metrics.update(counts)
    corpus.properties.update(file_pattern=f"{SHARD_PREFIX}-*{SHARD_SUFFIX}",
                             files=[os.path.basename(s) for s in shards], format="bert_text")
    self.log(f"{counts['documents']} documents, {counts['sentences']} sentences")
