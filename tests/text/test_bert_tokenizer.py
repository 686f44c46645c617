"""BertTokenizer gives exactly the ids of the original BERT tokenizer (the pure-Python reference).

Real bert-base-uncased vocabulary, hand-picked hard inputs, every line of the Lee corpora and a sample
of the Wikipedia dump, property tests on arbitrary text and bytes, byte offsets, and serialisation
(.keras, SavedModel).
"""

import os
import re

import hypothesis
import hypothesis.strategies as st
import keras
import numpy as np
import pytest
import tensorflow as tf

from bert_keras import resources
from bert_keras.errors import UserError
from bert_keras.text.bert_packer import BertPacker
from bert_keras.text.bert_tokenizer import _ASCII_OK, BertTokenizer
from bert_keras.text.reference_tokenizer import ReferenceTokenizer
from bert_keras.text.vocab import load_vocab
from tests.text import corpora

HARD_TEXTS = [
    "Hello world, this is BERT.",
    "Ünïcödé café naïve résumé Ångström İstanbul ǅemal",
    "中文字符测试，日本語のテキスト、한국어 텍스트",
    "Wait… what?! «quoted» — “curly” ‘single’ ¿qué? ¡sí! § ¶ † ‡ • ‰",
    "emoji 😀👍🏽 👨‍👩‍👧 flags 🇫🇷 ❤️",
    "Straße ß ẞ ﬁne ﬂow ﬀ ŉ",
    "Roman Ⅻ ⅻ Ⅳ superscripts x² x³ ⁿ ₂ ½ ™ ℃ ㎏",
    "ctrl\x07bell\x1bescape\x7fdel\u200bzero\u200dwidth\ufeffbom\u00adsoft",
    "nul\x00in\x00side and \ufffdreplacement\ufffd",
    "tabs\tnew\nlines\r\nform\x0cfeed\x0bvt\u2028ls\u2029ps\u00a0nbsp\u3000ideographic",
    "a" * 150, "a" * 200, "a" * 201, "ab" * 125, "x " + "é" * 201 + " y", "ü" * 200,
    "", " ", "\t\n\r ", "\x00", "\ufffd\u200b",
    "[CLS] literal [SEP] and [MASK] and [UNK] and [PAD]",
    "ΟΔΟΣ. ΣΑΣ ΌΣΟΣ'Σ Σ ΑΣ\u0301 ΑΣ\u0301Β ΑΣ\u200bΒ ΑΣ\x00Β σοφός",
    "$5+3^2=`x`~{y}|<z>@#%&*_\\",
    "Ǆ ǅ ǆ Ⅰ ⓐ Ⓐ ꟸ ᾼ ῌ ﬓ İi̇",
    "دمشق עברית हिन्दी ไทย Ελληνικά Русский",
    "\U00020000\U0002A700\U0002F800\uF900 compat ideographs",
    "combining e\u0301 a\u0308 o\u0302\u0323 alone \u0301\u0308",
    "Hangul 각 jamo ᄀ ᅡ ᆨ",
    "".join(map(chr, range(128))),  # every ASCII character, controls included
    "ΑΣ.Β ΑΣ. ΑΣ'Β x.Σ don't [CLS]",  # sigma context crosses punctuation, not whitespace
    "mixed ascii café, and \x1c\x1d\x1e\x1f\x85 separators",
]


@pytest.fixture(scope="module")
def vocab():
  return load_vocab(resources.uncased_vocab_path())


@pytest.fixture(scope="module")
def tokenizer(vocab):
  return BertTokenizer(vocabulary=vocab)


@pytest.fixture(scope="module")
def reference(vocab):
  return ReferenceTokenizer(vocab)


@pytest.fixture(scope="module")
def tokenize_fn(tokenizer):
  return tf.function(tokenizer.tokenize, input_signature=[tf.TensorSpec([None], tf.string)])


@pytest.mark.parametrize("text", HARD_TEXTS)
def test_hard_texts_match_reference(tokenizer, reference, text):
  assert tokenizer.encode([text]) == [reference.encode(text)]


def test_hard_texts_in_one_batch(tokenizer, reference, tokenize_fn):
  got = tokenize_fn(tf.constant(HARD_TEXTS)).to_list()
  assert got == [reference.encode(t) for t in HARD_TEXTS]


def test_tf_text_defaults_would_differ(vocab, reference):
  # Why the normalisation is ours: tf-text's own BERT normaliser folds "…" and "ß" (DATA.md).
  import tensorflow_text as tf_text
  fast = tf_text.FastBertTokenizer(vocab, lower_case_nfd_strip_accents=True, token_out_type=tf.int32)
  text = "Wait… Straße"
  assert fast.tokenize([text]).to_list()[0] != reference.encode(text)


def test_golden_packed_ids(tokenizer):
  packer = BertPacker(16, tokenizer.cls_id, tokenizer.sep_id, tokenizer.pad_id)
  packed = packer([tokenizer.tokenize(tf.constant(["Hello world, this is BERT."]))])
  ids = packed["input_word_ids"].numpy()[0]
  assert ids[:9].tolist() == [101, 7592, 2088, 1010, 2023, 2003, 14324, 1012, 102]
  assert ids[9:].tolist() == [0] * 7
  assert packed["input_mask"].numpy()[0].tolist() == [1] * 9 + [0] * 7


def test_special_ids_and_helpers(tokenizer):
  assert (tokenizer.pad_id, tokenizer.unk_id, tokenizer.cls_id, tokenizer.sep_id,
          tokenizer.mask_id) == (0, 100, 101, 102, 103)
  assert tokenizer.vocab_size == 30522 and tokenizer.lower_case
  assert tokenizer.id_to_token(7592) == "hello" and tokenizer.token_to_id("##s") == 2015
  with pytest.raises(UserError, match="not in the vocabulary"):
    tokenizer.token_to_id("no-such-token")
  with pytest.raises(UserError, match="outside"):
    tokenizer.id_to_token(30522)


def test_cased_small_vocabulary():
  vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "Hello", "hello", "H", "##ello", "café",
           "caf", "##é", "e", "##\u0301", "Ω", "ΟΔΟΣ", "ß", "…", "!", "[", "]", "CL", "##S", "中"]
  tokenizer = BertTokenizer(vocabulary=vocab, lower_case=False)
  reference = ReferenceTokenizer(vocab, lower_case=False)
  texts = ["Hello hello HELLO café cafe\u0301 ΟΔΟΣ ß… [CLS]! 中中", "Hello\x00ello", ""]
  assert tokenizer.encode(texts) == [reference.encode(t) for t in texts]
  assert tokenizer.encode(["Hello café [CLS]"])[0] == [5, 9, 19, 21, 22, 20]
  assert not tokenizer.lower_case


def test_lee_corpora_every_line(tokenizer, reference, tokenize_fn):
  lines = corpora.lee_lines()
  got = tokenize_fn(tf.constant(lines)).to_list()
  mismatches = [line for line, ids in zip(lines, got) if ids != reference.encode(line)]
  assert not mismatches, mismatches[:3]


def test_wikipedia_dump_sample(tokenizer, reference, tokenize_fn):
  lines = corpora.wikipedia_lines(every=13)  # ~3,000 lines of raw wikitext and XML
  got = tokenize_fn(tf.constant(lines)).to_list()
  mismatches = [line for line, ids in zip(lines, got) if ids != reference.encode(line)]
  assert not mismatches, mismatches[:3]


@pytest.mark.slow
def test_wikipedia_dump_every_line(tokenizer, reference, tokenize_fn):
  lines = corpora.wikipedia_lines()
  got = []
  for i in range(0, len(lines), 4096):
    got.extend(tokenize_fn(tf.constant(lines[i:i + 4096])).to_list())
  mismatches = [line for line, ids in zip(lines, got) if ids != reference.encode(line)]
  assert not mismatches, mismatches[:3]


def test_fast_path_agrees_with_code_point_path(tokenizer):
  # tokenize() sends pure-ASCII chunks through tensorflow-text's end-to-end WordPiece;
  # tokenize_with_offsets runs every character through the code-point pipeline.
  lines = tf.constant(corpora.lee_lines()[:200] + [t.encode() for t in HARD_TEXTS])
  fast = tokenizer.tokenize(lines).to_list()
  assert tokenizer.tokenize_with_offsets(lines)[0].to_list() == fast


# The batch path's boundaries: printable ASCII with \t \n \r goes through tf-text whole; ASCII
# controls (deleted, joining words), \x0b \x0c (spaces for the original, not for tf-text), DEL,
# sigma, other non-ASCII and undecodable bytes do not.
PATH_TEXTS = [
    "Hello world, this is BERT.", "", " ", "\t\n\r ", "tabs\tnew\nlines\r\nend\r",
    "a" * 200, "a" * 201 + " b", "ab" * 125 + "!", "x" + "unaffable" * 60,
    "".join(map(chr, range(32, 127))), "don't [CLS] $5+3^2=`x`~{y}|<z>@#%&*_\\ (a.b) ---",
    "  leading and trailing  ", "UPPER lower MiXeD 123 4.5e6",
    "caf\u00e9 latin", "ctrl\x07bell", "del\x7fdel", "vt\x0bff\x0cfs\x1cus\x1f", "\x00", "\x85",
    "\u03a3\u0391\u03a3 x", "\u4e2d\u6587", "\u00e9" * 201, "nbsp\u00a0x", "\udcff".encode("utf-8", "surrogatepass"),
    b"bad \xff\xfe bytes", b"\x80",
]


@pytest.mark.parametrize("lower_case", [True, False])
def test_batch_ascii_path_agrees_with_other_paths(vocab, lower_case):
  tokenizer = BertTokenizer(vocabulary=vocab, lower_case=lower_case)
  reference = ReferenceTokenizer(vocab, lower_case=lower_case)
  texts = [t if isinstance(t, bytes) else t.encode() for t in PATH_TEXTS]
  printable = [re.fullmatch(rb"[\t\n\r -~]*", t) is not None for t in texts]
  assert tf.strings.regex_full_match(tf.constant(texts), _ASCII_OK).numpy().tolist() == printable
  ascii_texts = [t for t, ok in zip(texts, printable) if ok]
  assert len(ascii_texts) == 13
  expected = [reference.encode(t) for t in ascii_texts]
  batch = tf.constant(ascii_texts)
  assert tokenizer.tokenize(batch).to_list() == expected  # the batch path
  assert tokenizer._tokenize_chunks(batch).to_list() == expected
  assert tokenizer._tokenize_code_points(batch).to_list() == expected
  tokenize = tf.function(tokenizer.tokenize, input_signature=[tf.TensorSpec([None], tf.string)])
  # All printable ASCII takes the batch path; one other string sends the batch to the chunk path.
  for batch in (ascii_texts, texts, texts[::-1], [b""], [b"\x07"], [b"a", b"\xc3\xa9"], []):
    got = tokenize(tf.constant(batch, tf.string, shape=[len(batch)])).to_list()
    assert got == [reference.encode(t) for t in batch], batch
  assert tokenizer.tokenize(texts[0]).numpy().tolist() == reference.encode(texts[0])


def test_cjk_code_points_this_unicode_does_not_know_are_isolated(tokenizer, reference, tokenize_fn):
  # The original isolates its CJK ranges by code point alone; U+2B739 (Extension C, assigned in
  # Unicode 15) is unassigned in older unicodedata versions and was joined to its neighbours.
  texts = ["0\U0002b739", "a\U0002b73fb", "\U0002b735x"]
  assert tokenize_fn(tf.constant(texts)).to_list() == [reference.encode(t) for t in texts]


PROPERTY_SETTINGS = hypothesis.settings(max_examples=150, deadline=None)


@PROPERTY_SETTINGS
@hypothesis.given(st.lists(st.text(max_size=60), min_size=1, max_size=4))
def test_property_arbitrary_unicode_matches_reference(tokenizer, reference, tokenize_fn, texts):
  got = tokenize_fn(tf.constant(texts)).to_list()
  assert got == [reference.encode(t) for t in texts]
  assert all(0 <= i < tokenizer.vocab_size for ids in got for i in ids)


@PROPERTY_SETTINGS
@hypothesis.given(st.lists(st.text(st.characters(max_codepoint=0x7f), max_size=80), min_size=1,
                           max_size=4))
def test_property_ascii_text_matches_reference(tokenizer, reference, tokenize_fn, texts):
  # Mostly printable batches, which take the batch path, with controls now and then.
  got = tokenize_fn(tf.constant(texts)).to_list()
  assert got == [reference.encode(t) for t in texts]


@PROPERTY_SETTINGS
@hypothesis.given(st.lists(st.binary(max_size=60), min_size=1, max_size=4))
@hypothesis.example([b"\x00\t\x80"])  # a control next to an undecodable byte (once a bug)
def test_property_undecodable_bytes_never_crash(tokenizer, reference, tokenize_fn, blobs):
  got = tokenize_fn(tf.constant(blobs)).to_list()
  assert got == tokenize_fn(tf.constant(blobs)).to_list()  # deterministic
  assert got == [reference.encode(b) for b in blobs]  # decoded like the original: bad bytes dropped
  assert all(0 <= i < tokenizer.vocab_size for ids in got for i in ids)


def test_huge_and_empty_inputs(tokenizer, tokenize_fn):
  huge = "word " * 100_000 + "x" * 100_000
  got = tokenize_fn(tf.constant([huge, ""])).to_list()
  assert len(got[0]) == 100_001 and got[0][-1] == tokenizer.unk_id and got[1] == []
  assert tokenize_fn(tf.constant([], tf.string)).to_list() == []


def test_scalar_input(tokenizer):
  ids = tokenizer.tokenize("Hello unaffable world")
  assert isinstance(ids, tf.Tensor) and ids.numpy().tolist() == [7592, 14477, 20961, 3468, 2088]


def _check_offsets(tokenizer, reference, texts):
  ids, begin, end = tokenizer.tokenize_with_offsets(tf.constant(texts))
  assert ids.to_list() == [reference.encode(t) for t in texts]
  for text, row_ids, row_begin, row_end in zip(texts, ids.to_list(), begin.to_list(),
                                               end.to_list()):
    data = text.encode("utf-8")
    assert row_begin == sorted(row_begin) and all(0 <= b < e <= len(data)
                                                  for b, e in zip(row_begin, row_end))
    for token_id, b, e in zip(row_ids, row_begin, row_end):
      piece = tokenizer.id_to_token(token_id)
      source = data[b:e].decode("utf-8")  # always whole characters
      if piece != "[UNK]":
        assert reference.basic_tokenize(source) == [piece.removeprefix("##")], (piece, source)
      else:
        assert reference.basic_tokenize(source), source


def test_offsets_ascii(tokenizer, reference):
  texts = ["Hello world, this is BERT.", "  unaffable  [CLS]x  ", "", "a" * 201 + " end"]
  _check_offsets(tokenizer, reference, texts)
  _, begin, end = tokenizer.tokenize_with_offsets(tf.constant(["  unaffable"]))
  assert begin.to_list() == [[2, 5, 8]] and end.to_list() == [[5, 8, 11]]


def test_offsets_non_ascii(tokenizer, reference):
  texts = ["Ünïcödé café … ß", "中文 ΟΔΟΣ. naïve", "nul\x00in\u200bside ctrl\x07x 😀 e\u0301"]
  _check_offsets(tokenizer, reference, texts)
  ids, begin, end = tokenizer.tokenize_with_offsets("Ünïcödé café")
  assert [("Ünïcödé café".encode()[b:e].decode()) for b, e in zip(begin.numpy(), end.numpy())] \
      == ["Ünïcödé", "café"]
  # A Hangul syllable decomposes into jamo pieces that each span the whole syllable.
  ids, begin, end = tokenizer.tokenize_with_offsets(tf.constant(["각"]))
  assert len(ids.to_list()[0]) == 3 and begin.to_list() == [[0, 0, 0]] and end.to_list() == [[3] * 3]


def test_constructor_errors(vocab, tmp_path):
  with pytest.raises(UserError, match="exactly one of"):
    BertTokenizer()
  with pytest.raises(UserError, match=r"no \[UNK\]"):
    BertTokenizer(vocabulary=["a", "b"])
  with pytest.raises(UserError, match="not found"):
    BertTokenizer(str(tmp_path / "missing.txt"))


def test_config_and_keras_file_round_trip(tokenizer, tmp_path):
  restored = BertTokenizer.from_config(tokenizer.get_config())
  assert restored.vocabulary == tokenizer.vocabulary and restored.lower_case
  a = keras.Input(shape=(), dtype="string")
  b = keras.Input(shape=(), dtype="string")
  packer = BertPacker(24, tokenizer.cls_id, tokenizer.sep_id, tokenizer.pad_id)
  model = keras.Model([a, b], packer([tokenizer(a), tokenizer(b)]))
  path = os.path.join(tmp_path, "preprocessor.keras")
  model.save(path)
  loaded = keras.saving.load_model(path)
  inputs = [tf.constant(["Hello world, this is BERT.", "ß…"]), tf.constant(["Second one", ""])]
  expected, got = model(inputs), loaded(inputs)
  for key in ("input_word_ids", "input_mask", "input_type_ids"):
    np.testing.assert_array_equal(got[key], expected[key])


def test_saved_model_tokenize_and_pack(tokenizer, tmp_path):
  class Preprocessor(tf.Module):

    def __init__(self):
      super().__init__()
      self.tokenizer = tokenizer
      self.packer = BertPacker(32, tokenizer.cls_id, tokenizer.sep_id, tokenizer.pad_id)

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string)] * 2)
    def __call__(self, a, b):
      return self.packer([self.tokenizer.tokenize(a), self.tokenizer.tokenize(b)])

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string)])
    def offsets(self, a):
      ids, begin, end = self.tokenizer.tokenize_with_offsets(a)
      return {"ids": ids.to_tensor(-1), "begin": begin.to_tensor(-1), "end": end.to_tensor(-1)}

  module = Preprocessor()
  path = os.path.join(tmp_path, "preprocessor")
  tf.saved_model.save(module, path)
  loaded = tf.saved_model.load(path)
  a = tf.constant(HARD_TEXTS[:12])
  b = tf.constant(HARD_TEXTS[12:24])
  expected, got = module(a, b), loaded(a, b)
  for key in expected:
    np.testing.assert_array_equal(got[key], expected[key])
  assert got["input_word_ids"].shape == (12, 32)
  expected, got = module.offsets(a), loaded.offsets(a)
  for key in expected:
    np.testing.assert_array_equal(got[key], expected[key])
  # Printable ASCII only: the other branch of the tokenizer's cond, after loading.
  ascii_a, ascii_b = tf.constant(["Hello world, this is BERT.", ""]), tf.constant(["A b", "c!"])
  expected, got = module(ascii_a, ascii_b), loaded(ascii_a, ascii_b)
  for key in expected:
    np.testing.assert_array_equal(got[key], expected[key])
  assert got["input_word_ids"].numpy()[1, :3].tolist() == [
      tokenizer.cls_id, tokenizer.sep_id, tokenizer.token_to_id("c")]
