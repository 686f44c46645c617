"""Corpus-ingestion fixtures shared by tests/data and bench/check_graphs.py: small corpora of BERT-
text files and one ingestion run over them."""

import glob
import os

import apache_beam as beam
from apache_beam.options.pipeline_options import PipelineOptions

from bert_keras.data import corpus_ingestion


def write_corpus(path, documents):
  with open(path, "w", encoding="utf-8") as f:
    for sentences in documents:
      f.write("\n".join(sentences) + "\n\n")


def ingest(tmp_path, name, num_shards, max_documents=0, beam_args=None, **kwargs):
  prefix = str(tmp_path / name / corpus_ingestion.SHARD_PREFIX)
  parameters = dict(wikipedia_dumps=[], bert_text_corpora=[str(tmp_path / "src" / "*.txt")],
                    line_corpora=[], max_documents=max_documents, num_shards=num_shards)
  with beam.Pipeline(options=PipelineOptions(beam_args) if beam_args else None) as p:
    corpus_ingestion.build_pipeline(p, parameters, prefix, **kwargs)
  assert sorted(os.listdir(tmp_path / name)) == [  # the run files' directory is removed
      f"corpus-{i:05d}-of-{num_shards:05d}.txt" for i in range(num_shards)]
  return sorted(glob.glob(prefix + "-*" + corpus_ingestion.SHARD_SUFFIX))


def unicode_corpus(tmp_path):
  """Files whose names (so document ids) hold 1- to 4-byte UTF-8 characters; line numbers of 1 and
  2 digits (as strings "a.txt:10" sorts before "a.txt:9")."""
  os.makedirs(tmp_path / "src")
  docs = {}
  for f, name in enumerate(["a.txt", "é.txt", "ﬀ.txt", "😀.txt", "z.txt"]):
    line = 1
    texts = []
    for d in range(12):
      sentences = [f"file {f} doc {d} sentence {s} " + "x" * (7 * d) + "." for s in range(1 + d % 4)]
      texts.append(sentences)
      docs[f"{name}:{line}"] = sentences
      line += len(sentences) + 1
    write_corpus(tmp_path / "src" / name, texts)
  return docs
