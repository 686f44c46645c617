"""Reads the Google BERT corpus text format: one sentence per line, a blank line between documents."""

from __future__ import annotations

import functools
from typing import BinaryIO, Callable, Iterator, List, Optional, Tuple

from bert_keras.data.corpus_text import DEFAULT_MAX_LINE_BYTES, iter_text_lines
from bert_keras.data.matched_files import ReadFileDocuments


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


class ReadBertCorpus(ReadFileDocuments):
  """PCollection of (doc_id, sentences) from files matching `file_pattern`."""

  def __init__(self, file_pattern: str, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES):
    super().__init__(file_pattern,
                     functools.partial(iter_bert_corpus_documents, max_line_bytes=max_line_bytes))
