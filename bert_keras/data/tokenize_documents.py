"""Tokenizes documents in batches with the project's BertTokenizer (one TF call per batch of documents)."""

from __future__ import annotations

from typing import Iterable, List, Sequence, Tuple

import apache_beam as beam
import numpy as np

from bert_keras.data import beam_metrics

# A tokenized document: (doc_id, ids (tokens,) int32 of all sentences, splits (sentences + 1,) int64).
# Flat numpy arrays pickle in microseconds and take 4 bytes a token in the shuffles, where lists of
# Python ints would take 28.


def pack_tokenized_document(doc_id: str, sentences: Sequence[Sequence[int]]):
  """(doc_id, [[ids], ...]) -> (doc_id, flat ids int32, splits int64)."""
  lengths = [len(s) for s in sentences]
  splits = np.zeros(len(lengths) + 1, np.int64)
  np.cumsum(lengths, out=splits[1:])
  flat = np.fromiter((t for s in sentences for t in s), np.int32, count=int(splits[-1]))
  return doc_id, flat, splits


def unpack_tokenized_document(packed) -> List[List[int]]:
  """(doc_id, ids, splits) -> the sentences as lists of ints."""
  _, ids, splits = packed
  as_list = ids.tolist()
  return [as_list[splits[i]:splits[i + 1]] for i in range(len(splits) - 1)]


def filter_tokenized_document(doc_id: str, sentences: List[List[int]], min_sentences: int, drop):
  """Drops empty sentences, then documents with fewer than `min_sentences` (reasons to `drop`).

  Returns the packed document or None.
  """
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


class _TokenizeBatch(beam.DoFn):
  """A batch of (doc_id, sentences) -> packed tokenized documents. The tokenizer is built in setup."""

  def __init__(self, vocab_file: str, lower_case: bool, min_sentences: int):
    self._vocab_file = vocab_file
    self._lower_case = lower_case
    self._min_sentences = min_sentences
    self._tokenize = None

  def setup(self):
    import tensorflow as tf  # pylint: disable=g-import-not-at-top
    from bert_keras.text.bert_tokenizer import BertTokenizer  # pylint: disable=g-import-not-at-top

    tokenizer = BertTokenizer(vocab_path=self._vocab_file, lower_case=self._lower_case)
    # autograph=False: the tokenizer is plain graph code; converting it costs seconds per worker.
    fn = tf.function(tokenizer.tokenize, input_signature=[tf.TensorSpec([None], tf.string)],
                     autograph=False)

    def tokenize(strings: List[str]) -> Tuple[np.ndarray, np.ndarray]:
      ragged = fn(tf.constant(strings, dtype=tf.string))
      return ragged.flat_values.numpy(), ragged.row_splits.numpy()

    self._tokenize = tokenize

  def process(self, batch: Iterable[Tuple[str, List[str]]]):
    batch = list(batch)
    strings = [s for _, sentences in batch for s in sentences]
    if not strings:
      return
    ids, splits = self._tokenize(strings)
    ids = ids.tolist()
    row = 0
    for doc_id, sentences in batch:
      tokenized = [ids[splits[row + i]:splits[row + i + 1]] for i in range(len(sentences))]
      row += len(sentences)
      packed = filter_tokenized_document(doc_id, tokenized, self._min_sentences, beam_metrics.count_dropped)
      if packed is not None:
        beam_metrics.counter("documents").inc()
        beam_metrics.counter("sentences").inc(len(packed[2]) - 1)
        beam_metrics.counter("corpus_tokens").inc(len(packed[1]))
        yield packed


class TokenizeDocuments(beam.PTransform):
  """(doc_id, sentences: list[str]) -> (doc_id, ids int32 (tokens,), splits int64 (sentences + 1,))."""

  def __init__(self, vocab_file: str, lower_case: bool = True, min_sentences: int = 2,
               batch_size: int = 64):
    super().__init__()
    self._vocab_file = vocab_file
    self._lower_case = lower_case
    self._min_sentences = min_sentences
    self._batch_size = batch_size

  def expand(self, documents):
    return (documents
            | "Batch" >> beam.BatchElements(min_batch_size=1, max_batch_size=self._batch_size)
            | "Tokenize" >> beam.ParDo(_TokenizeBatch(self._vocab_file, self._lower_case,
                                                      self._min_sentences)))
