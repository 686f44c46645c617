"""Reads one document per line, plain text or JSON Lines, split into sentences; bad lines are
counted and dropped."""

from __future__ import annotations

import functools
import json
from typing import BinaryIO, Callable, Iterator, List, Optional, Tuple

from bert_keras.data.corpus_text import DEFAULT_MAX_LINE_BYTES, iter_text_lines, split_sentences
from bert_keras.data.matched_files import ReadFileDocuments


def iter_line_documents(f: BinaryIO, source: str, drop: Callable[[str], None], json_text_key: Optional[str] = None,
                        max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
                        on_undecodable: Optional[Callable[[int], None]] = None
                        ) -> Iterator[Tuple[str, List[str]]]:
  """Yields ("<source>:<line or JSONL id>", sentences); with `json_text_key`, each line is a JSON
  object whose field it names holds the text."""
  for line_number, text in iter_text_lines(f, drop, max_line_bytes, on_undecodable):
    doc_key = str(line_number)
    if json_text_key is not None:
      if not text.strip():
        continue
      try:
        record = json.loads(text)
      except ValueError:
        drop("invalid_json_line")
        continue
      if not isinstance(record, dict) or not isinstance(record.get(json_text_key), str):
        drop("json_line_without_text_field")
        continue
      if "id" in record:
        doc_key = str(record["id"])
      text = record[json_text_key]
    sentences = split_sentences(text)
    if not sentences:
      drop("empty_document")
      continue
    yield f"{source}:{doc_key}", sentences


class ReadLineDocuments(ReadFileDocuments):
  """PCollection of (doc_id, sentences) from one-document-per-line files (JSONL with json_text_key)."""

  def __init__(self, file_pattern: str, json_text_key: Optional[str] = None,
               max_line_bytes: int = DEFAULT_MAX_LINE_BYTES):
    super().__init__(file_pattern, functools.partial(iter_line_documents, json_text_key=json_text_key,
                                                     max_line_bytes=max_line_bytes))
