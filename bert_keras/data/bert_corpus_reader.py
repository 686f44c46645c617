"""Reads the Google BERT corpus text format: one sentence per line, a blank line between documents."""

from __future__ import annotations

import os
from typing import BinaryIO, Callable, Iterator, List, Optional, Tuple

import apache_beam as beam

from bert_keras.data import beam_metrics
from bert_keras.data.corpus_text import DEFAULT_MAX_LINE_BYTES, iter_text_lines
from bert_keras.data.matched_files import ReadMatchingFiles


def iter_bert_corpus_documents(f: BinaryIO, source: str, drop: Callable[[str], None],
                               max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
                               on_undecodable: Optional[Callable[[int], None]] = None
                               ) -> Iterator[Tuple[str, List[str]]]:
  """Yields ("<source>:<first line>", sentences), one document in memory at a time."""
  sentences: List[str] = []
  first_line = 0
  for line_number, text in iter_text_lines(f, drop, max_line_bytes, on_undecodable):
    text = text.strip()
    if text:
      if not sentences:
        first_line = line_number
      sentences.append(text)
    elif sentences:
      yield f"{source}:{first_line}", sentences
      sentences = []
  if sentences:
    yield f"{source}:{first_line}", sentences


class _ReadBertCorpusFile(beam.DoFn):
  """One matched file -> its documents, streamed (memory: one document)."""

  def __init__(self, max_line_bytes: int):
    self._max_line_bytes = max_line_bytes

  def process(self, readable_file):
    path = readable_file.metadata.path
    with readable_file.open() as f:
      yield from iter_bert_corpus_documents(
          f, os.path.basename(path), beam_metrics.count_dropped, self._max_line_bytes,
          on_undecodable=beam_metrics.first_drop_noter(path, beam_metrics.UNDECODABLE_LINE))


class ReadBertCorpus(beam.PTransform):
  """PCollection of (doc_id, sentences) from files matching `file_pattern` (glob; .gz/.bz2 ok)."""

  def __init__(self, file_pattern: str, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES):
    super().__init__()
    self._file_pattern = file_pattern
    self._max_line_bytes = max_line_bytes

  def expand(self, pbegin):
    return (pbegin
            | "MatchedFiles" >> ReadMatchingFiles(self._file_pattern)
            | "ReadDocuments" >> beam.ParDo(_ReadBertCorpusFile(self._max_line_bytes)))
