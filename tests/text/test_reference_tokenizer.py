"""The pure-Python reference follows the original BERT tokenizer step by step (real uncased vocab).

Expected pieces are what google-research/bert tokenization.py produces by its documented steps; the
first case is the Hugging Face BertModel golden input of DATA.md.
"""

import unicodedata

import pytest

from bert_keras import resources
from bert_keras.text.reference_tokenizer import ReferenceTokenizer
from bert_keras.text.vocab import load_vocab


@pytest.fixture(scope="module")
def uncased():
  return ReferenceTokenizer(load_vocab(resources.uncased_vocab_path()), lower_case=True)


def test_golden_ids(uncased):
  assert uncased.encode("Hello world, this is BERT.") == [7592, 2088, 1010, 2023, 2003, 14324, 1012]


@pytest.mark.parametrize("text, words", [
    ("[CLS] x [SEP]", ["[", "cls", "]", "x", "[", "sep", "]"]),  # special tokens in text are text
    ("Café NAÏVE İ", ["cafe", "naive", "i"]),  # str.lower, NFD, Mn marks dropped
    ("a…b ﬁne Ⅻ x²", ["a", "…", "b", "ﬁne", "ⅻ", "x²"]),  # no NFKC folding
    ("Straße", ["straße"]),  # no case folding: ß stays
    ("don't $5+3^2`x~", ["don", "'", "t", "$", "5", "+", "3", "^", "2", "`", "x", "~"]),
    ("a\x00b\ufffdc\u200bd\x07e", ["abcde"]),  # NUL, U+FFFD, Cf and Cc are deleted, not split
    ("ΟΔΟΣ. ΣΑ", ["οδος", ".", "σα"]),  # str.lower final sigma (ς) before ".", σ before a letter
    ("中文abc한국", ["中", "文", "abc한국"]),  # spaces around CJK ideographs only, not Hangul
    ("a\tb\nc\u3000d\u2028e", ["a", "b", "c", "d", "e"]),
    (" \t\n ", []),
    ("", []),
])
def test_basic_steps(uncased, text, words):
  got = uncased.basic_tokenize(text)
  # Hangul is decomposed into jamo by NFD; compare what a reader sees.
  assert [unicodedata.normalize("NFC", w) for w in got] == words


@pytest.mark.parametrize("text, pieces", [
    ("[CLS]", ["[", "cl", "##s", "]"]),
    ("unaffable", ["una", "##ffa", "##ble"]),
    ("Straße", ["st", "##raße"]),
    ("ΟΔΟΣ", ["ο", "##δ", "##ος"]),
    ("ﬁne Ⅻ x²", ["ﬁ", "##ne", "[UNK]", "x", "##²"]),
])
def test_wordpiece(uncased, text, pieces):
  assert uncased.tokenize(text) == pieces


def test_long_words(uncased):
  assert uncased.tokenize("a" * 200) != ["[UNK]"]
  assert uncased.tokenize("a" * 201) == ["[UNK]"]
  assert uncased.tokenize("x " + "b" * 250 + " y") == ["x", "[UNK]", "y"]


def test_unmatchable_word_is_one_unk(uncased):
  assert uncased.tokenize("Ⅻ abc\U0001F600def") == ["[UNK]", "[UNK]"]


def test_bytes_are_decoded_ignoring_bad_sequences(uncased):
  assert uncased.tokenize(b"hel\xfflo w\xe2\x82orld") == uncased.tokenize("hello world")


def test_cased_keeps_case_and_accents():
  cased = ReferenceTokenizer(["[UNK]", "Café", "caf", "##é", "HE", "##LL", "##O", "."],
                             lower_case=False)
  assert cased.tokenize("Café HELLO.") == ["Café", "HE", "##LL", "##O", "."]
  assert cased.tokenize("café") == ["caf", "##é"]
