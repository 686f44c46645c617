"""Tokenizes documents with BertTokenizer's ids in pure Python (CachedWordpieceTokenizer)."""

from __future__ import annotations

import itertools
from typing import List, Sequence, Tuple

import apache_beam as beam
import numpy as np

from bert_keras.data import beam_metrics
from bert_keras.data.cached_wordpiece_tokenizer import CachedWordpieceTokenizer

# A tokenized document: (doc_id, ids (tokens,) int32, splits (sentences + 1,) int64): flat arrays
# pickle in microseconds, 4 bytes a token where lists of ints take 28.


def pack_tokenized_document(doc_id: str, sentences: Sequence[Sequence[int]]):
  lengths = [len(s) for s in sentences]
  splits = np.zeros(len(lengths) + 1, np.int64)
  np.cumsum(lengths, out=splits[1:])
  flat = np.fromiter(itertools.chain.from_iterable(sentences), np.int32, count=int(splits[-1]))
  return doc_id, flat, splits


def unpack_tokenized_document(packed) -> List[List[int]]:
  _, ids, splits = packed
  as_list = ids.tolist()
  return [as_list[splits[i]:splits[i + 1]] for i in range(len(splits) - 1)]


def filter_tokenized_document(doc_id: str, sentences: List[List[int]], min_sentences: int, drop):
  """The packed document without empty sentences, or None under `min_sentences` (`drop`ped)."""
  kept = [s for s in sentences if s]
  if len(kept) < len(sentences):
    drop("empty_sentence_after_tokenization", len(sentences) - len(kept))
  if not kept:
    drop("empty_document")
    return None
  if len(kept) < min_sentences:
    drop("one_sentence_document" if len(kept) == 1 else "short_document")
    return None
  return pack_tokenized_document(doc_id, kept)


class TokenizeDocuments(beam.DoFn):
  """(doc_id, sentences: list[str]) -> (doc_id, ids int32 (tokens,), splits int64 (sentences + 1,)),
  or nothing (counted)."""

  def __init__(self, vocab_file: str, lower_case: bool = True, min_sentences: int = 2):
    self._vocab_file = vocab_file
    self._lower_case = lower_case
    self._min_sentences = min_sentences
    self._tokenizer = None

  def setup(self):
    self._tokenizer = CachedWordpieceTokenizer.from_vocab_file(self._vocab_file, self._lower_case)

  def process(self, document: Tuple[str, List[str]]):
    doc_id, sentences = document
    packed = filter_tokenized_document(doc_id, self._tokenizer.encode(sentences), self._min_sentences,
                                       beam_metrics.count_dropped)
    if packed is not None:
      beam_metrics.counter("documents").inc()
      beam_metrics.counter("sentences").inc(len(packed[2]) - 1)
      beam_metrics.counter("corpus_tokens").inc(len(packed[1]))
      yield packed
