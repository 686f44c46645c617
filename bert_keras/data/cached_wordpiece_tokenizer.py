"""A pure-Python WordPiece tokenizer for the data pipelines: the ids of `BertTokenizer`, without TensorFlow.

Why: a Beam worker that only makes pretraining data would otherwise import TensorFlow, Keras and
tensorflow-text and build the in-graph tokenizer (~15 CPU seconds and ~1 GB per worker) before its
first document; on a corpus of a few MB that start-up is most of the run. Natural text repeats its
words (Zipf), so a word -> ids cache in front of the original algorithm (`ReferenceTokenizer`, the
google-research/bert `FullTokenizer` step by step) makes Python as fast as the graph here.

Exactness. The original tokenizes `text` as: clean (drop \\0, U+FFFD, Cc/Cf except \\t\\n\\r; map
whitespace to " "), put spaces around CJK ideographs, `str.split()`, then per word: lowercase, NFD,
drop Mn marks, split punctuation, WordPiece. When `text` holds no character that cleaning drops
and no CJK ideograph, cleaning only turns some whitespace into spaces, so `text.split()` gives
the same words, and every later step works on one word at a time: the ids of `text` are the
concatenation of the ids of its words, which is what the cache stores. Any other text goes
through the original's basic tokenizer whole (then the cache per basic word). The test
tests/text/test_cached_wordpiece_tokenizer.py holds it equal to the in-graph `BertTokenizer` on
every sentence of the embedded Wikipedia dump and on adversarial strings.
"""

from __future__ import annotations

import re
import unicodedata
from typing import List, Sequence

from bert_keras.errors import UserError
from bert_keras.text.reference_tokenizer import ReferenceTokenizer, is_cjk
from bert_keras.text.vocab import load_vocab

# ASCII characters the original's cleaning drops (Cc other than \t \n \r): they join their neighbours.
_ASCII_DROPPED = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_NON_ASCII = re.compile("[^\x00-\x7f]")
# An ASCII word -> the original's basic words: each punctuation character (its four ASCII ranges)
# alone, the runs between them.
_ASCII_PIECES = re.compile("[!-/:-@\\[-`{-~]|[^!-/:-@\\[-`{-~]+")
# Caches are cleared when they reach this many entries, so memory stays bounded on any corpus.
MAX_CACHE_ENTRIES = 1 << 18


def _needs_whole_text(char: str) -> bool:
  """A non-ASCII character after which `text.split()` is not the original's word split."""
  return (char == "\ufffd" or unicodedata.category(char) in ("Cc", "Cf") or is_cjk(ord(char)))


class _Cache(dict):
  """A dict that computes a missing value with `compute(key)`, clearing itself when it gets too big."""

  def __init__(self, compute):
    super().__init__()
    self._compute = compute

  def __missing__(self, key):
    value = self._compute(key)
    if len(self) >= MAX_CACHE_ENTRIES:
      self.clear()
    self[key] = value
    return value


class CachedWordpieceTokenizer:
  """`encode(texts) -> list[list[int]]`: the ids `BertTokenizer(vocabulary, lower_case).tokenize` gives.

  Memory: the vocabulary plus two caches of at most MAX_CACHE_ENTRIES words each.
  """

  def __init__(self, vocabulary: Sequence[str], lower_case: bool = True):
    self._ref = ReferenceTokenizer(vocabulary, lower_case=lower_case)
    if self._ref.unk_token not in self._ref.token_to_id:
      raise UserError("vocabulary has no [UNK] token, which WordPiece needs")
    self._lower_case = lower_case
    self._word_cache = _Cache(self._compute_word_ids)     # a whitespace-separated word -> its ids
    self._basic_cache = _Cache(self._compute_basic_ids)   # a basic (normalised, split) word -> its ids

  @classmethod
  def from_vocab_file(cls, path: str, lower_case: bool = True) -> "CachedWordpieceTokenizer":
    return cls(load_vocab(path), lower_case)

  @property
  def vocabulary(self) -> List[str]:
    return self._ref.vocabulary

  def _compute_basic_ids(self, word: str) -> List[int]:
    token_to_id = self._ref.token_to_id
    return [token_to_id[piece] for piece in self._ref.wordpiece(word)]

  def _compute_word_ids(self, word: str) -> List[int]:
    """Ids of one whitespace-free word without dropped characters or CJK ideographs."""
    if word.isascii():
      # The original's steps on ASCII: lowercase, split off each ASCII punctuation character.
      basics = _ASCII_PIECES.findall(word.lower() if self._lower_case else word)
    else:
      basics = self._ref.basic_tokenize(word)
    cache = self._basic_cache
    return [i for basic in basics for i in cache[basic]]

  def encode_one(self, text: str) -> List[int]:
    """One string -> its WordPiece ids (a list of int)."""
    if isinstance(text, bytes):
      text = text.decode("utf-8", "ignore")
    simple = _ASCII_DROPPED.search(text) is None
    if simple and not text.isascii():
      simple = not any(_needs_whole_text(c) for c in set(_NON_ASCII.findall(text)))
    if simple:
      cache = self._word_cache
      return [i for word in text.split() for i in cache[word]]
    cache = self._basic_cache
    return [i for basic in self._ref.basic_tokenize(text) for i in cache[basic]]

  def encode(self, texts: Sequence[str]) -> List[List[int]]:
    return [self.encode_one(t) for t in texts]
