"""A pure-Python WordPiece tokenizer with `BertTokenizer`'s ids, so a data worker never imports
TensorFlow (~15 CPU s and ~1 GB each): a word -> ids cache (text repeats its words) in front of the
original algorithm (`ReferenceTokenizer`).

Exact because, for text with no character the original's cleaning drops and no CJK ideograph,
cleaning only turns whitespace into spaces and every later step works word by word: the ids of
the text are those of its `split()` words. Other text goes through the basic tokenizer whole.
tests/text/test_cached_wordpiece_tokenizer.py holds it equal to `BertTokenizer`.
"""

from __future__ import annotations

import re
import unicodedata
from typing import List, Sequence

from bert_keras.errors import UserError
from bert_keras.text.reference_tokenizer import ReferenceTokenizer, is_cjk
from bert_keras.text.vocab import load_vocab

# ASCII characters the original's cleaning drops (Cc other than \t \n \r).
_ASCII_DROPPED = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_NON_ASCII = re.compile("[^\x00-\x7f]")
# An ASCII word -> the original's basic words: each punctuation character alone, the runs between.
_ASCII_PIECES = re.compile("[!-/:-@\\[-`{-~]|[^!-/:-@\\[-`{-~]+")
# Caches are cleared at this many entries: memory stays bounded on any corpus.
MAX_CACHE_ENTRIES = 1 << 18


def _needs_whole_text(char: str) -> bool:
  """A non-ASCII character after which `text.split()` is not the original's word split."""
  return (char == "\ufffd" or unicodedata.category(char) in ("Cc", "Cf") or is_cjk(ord(char)))


def whitespace_words(text: str) -> List[str] | None:
  """`text.split()` if the original's basic words of `text` are those of these words one by one."""
  simple = _ASCII_DROPPED.search(text) is None
  if simple and not text.isascii():
    simple = not any(_needs_whole_text(c) for c in set(_NON_ASCII.findall(text)))
  return text.split() if simple else None


class _Cache(dict):
  """A dict computing a missing value with `compute(key)`, cleared when it gets too big."""

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
  """`encode(texts) -> list[list[int]]`: the ids `BertTokenizer(vocabulary, lower_case)` gives."""

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
    if word.isascii():
      # The original's steps on ASCII: lowercase, split off each ASCII punctuation character.
      basics = _ASCII_PIECES.findall(word.lower() if self._lower_case else word)
    else:
      basics = self._ref.basic_tokenize(word)
    cache = self._basic_cache
    return [i for basic in basics for i in cache[basic]]

  def encode_one(self, text: str) -> List[int]:
    if isinstance(text, bytes):
      text = text.decode("utf-8", "ignore")
    words = whitespace_words(text)
    if words is not None:
      cache = self._word_cache
      return [i for word in words for i in cache[word]]
    cache = self._basic_cache
    return [i for basic in self._ref.basic_tokenize(text) for i in cache[basic]]

  def encode(self, texts: Sequence[str]) -> List[List[int]]:
    return [self.encode_one(t) for t in texts]
