"""A pure-Python re-implementation of the original BERT tokenizer (google-research/bert tokenization.py).

The golden reference of the in-graph `BertTokenizer`'s tests and bench/bench_tokenizer.py; the steps:
  1. decode UTF-8, dropping undecodable bytes;
  2. drop NUL, U+FFFD and control characters (Cc/Cf except \\t \\n \\r), map whitespace to " ";
  3. put spaces around CJK ideographs (the original's code point ranges);
  4. split on whitespace (Python `str.split`); per word, when uncased: `str.lower`, NFD, drop Mn marks;
  5. split every punctuation character (Unicode P* and the ASCII symbol ranges) into its own word;
  6. greedy longest-match-first WordPiece with `##` continuations, [UNK] for a word longer than
     200 characters or with no match (Devlin et al., 2018, section 3: "WordPiece embeddings").
"""

from __future__ import annotations

import unicodedata

MAX_CHARS_PER_WORD = 200

# The original's `_is_chinese_char` ranges: CJK Unified Ideographs and extensions, compatibility
# ideographs. Hangul, Hiragana and Katakana are deliberately not in the list.
CJK_RANGES = ((0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F),
              (0x2B740, 0x2B81F), (0x2B820, 0x2CEAF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F))


def is_whitespace(char: str) -> bool:
  """\\t \\n \\r and the Zs category (what the original maps to a plain space)."""
  return char in " \t\n\r" or unicodedata.category(char) == "Zs"


def is_control(char: str) -> bool:
  """Cc and Cf, except \\t \\n \\r which count as whitespace."""
  return char not in "\t\n\r" and unicodedata.category(char) in ("Cc", "Cf")


def is_punctuation(char: str) -> bool:
  """Unicode P* plus every non-alphanumeric printable ASCII character ("$", "+", "^", "`" ...)."""
  cp = ord(char)
  if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
    return True
  return unicodedata.category(char).startswith("P")


def is_cjk(cp: int) -> bool:
  return any(lo <= cp <= hi for lo, hi in CJK_RANGES)


class ReferenceTokenizer:
  """`tokenize(text) -> list[str]` and `encode(text) -> list[int]` exactly as the original FullTokenizer.

  `vocabulary` is the list of tokens in id order (see `bert_keras.text.vocab.load_vocab`).
  """

  def __init__(self, vocabulary, lower_case: bool = True, unk_token: str = "[UNK]"):
    self.vocabulary = list(vocabulary)
    self.token_to_id = {t: i for i, t in enumerate(self.vocabulary)}
    self.lower_case = lower_case
    self.unk_token = unk_token

  # --- BasicTokenizer -------------------------------------------------------------------------
  def basic_tokenize(self, text) -> list[str]:
    if isinstance(text, bytes):
      text = text.decode("utf-8", "ignore")
    text = self._clean_text(text)
    text = self._space_cjk(text)
    words = []
    for word in text.split():
      if self.lower_case:
        word = self._strip_accents(word.lower())
      words.extend(self._split_on_punctuation(word))
    return " ".join(words).split()

  @staticmethod
  def _clean_text(text: str) -> str:
    out = []
    for char in text:
      if char in ("\0", "\ufffd") or is_control(char):
        continue
      out.append(" " if is_whitespace(char) else char)
    return "".join(out)

  @staticmethod
  def _space_cjk(text: str) -> str:
    return "".join(f" {c} " if is_cjk(ord(c)) else c for c in text)

  @staticmethod
  def _strip_accents(word: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFD", word) if unicodedata.category(c) != "Mn")

  @staticmethod
  def _split_on_punctuation(word: str) -> list[str]:
    pieces, current = [], []
    for char in word:
      if is_punctuation(char):
        if current:
          pieces.append("".join(current))
          current = []
        pieces.append(char)
      else:
        current.append(char)
    if current:
      pieces.append("".join(current))
    return pieces

  # --- WordpieceTokenizer ---------------------------------------------------------------------
  def wordpiece(self, word: str) -> list[str]:
    if len(word) > MAX_CHARS_PER_WORD:
      return [self.unk_token]
    pieces, start = [], 0
    while start < len(word):
      end = len(word)
      while end > start:  # the longest vocabulary entry that starts at `start`
        piece = word[start:end] if start == 0 else "##" + word[start:end]
        if piece in self.token_to_id:
          break
        end -= 1
      else:
        return [self.unk_token]  # one unmatched position makes the whole word unknown
      pieces.append(piece)
      start = end
    return pieces

  def tokenize(self, text) -> list[str]:
    return [piece for word in self.basic_tokenize(text) for piece in self.wordpiece(word)]

  def encode(self, text) -> list[int]:
    return [self.token_to_id[piece] for piece in self.tokenize(text)]
