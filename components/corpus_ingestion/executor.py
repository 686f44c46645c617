"""Corpus ingestion executor: runs bert_keras.data.corpus_ingestion's Beam graph and records the
corpus's counts."""

from __future__ import annotations

import glob
import os

from bert_keras.data.corpus_ingestion import SHARD_PREFIX, SHARD_SUFFIX, build_pipeline, count_corpus
from bert_keras.orchestration.base_executor import BaseExecutor
from bert_keras.beam_runner import local_beam_args


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
