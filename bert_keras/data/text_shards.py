"""The corpus shards' format for sorted_shards.WriteSortedShards: Google BERT corpus text (one
sentence per line, a blank line after each document), WriteToText's shard names."""

from __future__ import annotations

import os
from typing import Iterable, Tuple

from bert_keras import atomic_io

SHARD_SUFFIX = ".txt"


def shard_path(output_prefix: str, index: int, num_shards: int) -> str:
  """WriteToText's default shard name: <prefix>-00000-of-00002.txt."""
  return f"{output_prefix}-{index:05d}-of-{num_shards:05d}{SHARD_SUFFIX}"


def format_document(document) -> str:
  """(doc_id, sentences) -> the document's lines plus the blank separator line."""
  _, sentences = document
  return "\n".join(s.replace("\n", " ") for s in sentences) + "\n"


def document_row(document) -> Tuple[bytes, bytes]:
  """(doc_id, sentences) -> (sort key, shard bytes). The key is the id in UTF-8, whose bytewise
  order is code-point order, i.e. the order of Python's `sorted` on the id strings (surrogatepass:
  lone surrogates too keep their code-point place)."""
  return document[0].encode("utf-8", "surrogatepass"), (format_document(document) + "\n").encode("utf-8")


class TextShardWriter:
  """Writes shard `index` of `num_shards` as <output_prefix>-<index>-of-<num_shards>.txt.

  The records (documents' bytes, in order) are streamed to a temporary name that is then renamed,
  through Beam's FileSystems (atomic_io.beam_create), so the same code writes to local disk and to
  gs:// on Dataflow.
  """

  def __init__(self, output_prefix: str, num_shards: int):
    self._output_prefix = output_prefix
    self._num_shards = num_shards

  def shard_name(self, index: int) -> str:
    return os.path.basename(shard_path(self._output_prefix, index, self._num_shards))

  def write(self, index: int, records: Iterable[bytes]) -> str:
    path = shard_path(self._output_prefix, index, self._num_shards)
    with atomic_io.beam_create(path) as f:
      for record in records:
        f.write(record)
    return path
