"""In-graph WordPiece tokenizer that gives exactly the ids of the original BERT tokenizer.

Devlin et al. (2018), section 3: "We use WordPiece embeddings (Wu et al., 2016) with a 30,000 token
vocabulary." tensorflow-text's own normaliser differs from the original beyond ASCII (NFKC folding,
control characters, a 100-byte word cap), so there only its WordPiece step is used and the
original's normalisation runs here on code points (`unicode_tables.py`). Printable-ASCII batches,
where tensorflow-text agrees, take its end-to-end path (docs/design.md, "In-graph tokenizer fast
path"); tests hold every path to `reference_tokenizer.py`.
"""

from __future__ import annotations

import keras
import numpy as np
import tensorflow as tf
import tensorflow_text as tf_text

from bert_keras.errors import UserError
from bert_keras.lazy_cond import lazy_cond
from bert_keras.text import unicode_tables as ut
from bert_keras.text.reference_tokenizer import MAX_CHARS_PER_WORD
from bert_keras.text.vocab import check_vocabulary, load_vocab

UNK, PAD, CLS, SEP, MASK = "[UNK]", "[PAD]", "[CLS]", "[SEP]", "[MASK]"
# Not fully matched (the string goes whole to the code-point pipeline): ASCII controls other than
# \t \n \r (deleted, not split), "Σ", or bytes RE2 cannot decode.
_FAST_PATH_OK = "(?s)[^\\x00-\\x08\\x0b\\x0c\\x0e-\\x1f\\x7f\u03a3]*"
# Printable ASCII with \t \n \r: `_tokenize_fast` sends a batch of such strings to tf-text whole.
_ASCII_OK = "[\\t\\n\\r -~]*"


def _range_lookup(starts: np.ndarray, values: np.ndarray, cp: tf.Tensor) -> tf.Tensor:
  """values[i] for the range [starts[i], starts[i+1]) holding each code point; cp (N,) int32."""
  index = tf.searchsorted(tf.constant(starts), cp, side="right") - 1
  return tf.gather(tf.constant(values), index)


def _interleave(n, first_at, first, second_at, second) -> tf.RaggedTensor:
  """Rows of two ragged (k, (items)) tensors put back at their positions `*_at` (k, 1) of n."""
  shape = tf.reshape(n, [1])
  offset = tf.size(first.flat_values, tf.int64)
  values = tf.concat([first.flat_values, second.flat_values], 0)
  begin = (tf.scatter_nd(first_at, first.row_splits[:-1], shape)
           + tf.scatter_nd(second_at, second.row_splits[:-1] + offset, shape))  # (n,)
  length = (tf.scatter_nd(first_at, first.row_lengths(), shape)
            + tf.scatter_nd(second_at, second.row_lengths(), shape))
  index = tf.ragged.range(begin, begin + length)
  return tf.RaggedTensor.from_row_splits(tf.gather(values, index.flat_values), index.row_splits,
                                         validate=False)


def _utf8_length(cp: tf.Tensor) -> tf.Tensor:
  """Bytes of each code point in UTF-8, int64 (N,)."""
  return tf.cast(1 + tf.cast(cp >= 0x80, tf.int32) + tf.cast(cp >= 0x800, tf.int32)
                 + tf.cast(cp >= 0x10000, tf.int32), tf.int64)


@keras.saving.register_keras_serializable(package="bert_keras")
class BertTokenizer(keras.layers.Layer):
  """Strings (batch,) -> WordPiece ids, ragged int32 (batch, (pieces)); a scalar -> (pieces,).

  `vocab_path` (the original vocab.txt) or `vocabulary`. `lower_case`: the uncased models'
  normalisation (str.lower, NFD, Mn marks dropped). "[CLS]" in the text is split like any text, as
  the original does; `BertPacker` adds the real special tokens.
  """

  def __init__(self, vocab_path: str | None = None, vocabulary=None, lower_case: bool = True,
               **kwargs):
    super().__init__(**kwargs)
    if (vocab_path is None) == (vocabulary is None):
      raise UserError("BertTokenizer: pass exactly one of vocab_path= or vocabulary=")
    source = vocab_path or "vocabulary"
    vocab = load_vocab(vocab_path) if vocab_path is not None else check_vocabulary(vocabulary)
    if UNK not in vocab:
      raise UserError(f"{source}: the vocabulary has no {UNK} token, which WordPiece needs")
    self._vocab = tuple(vocab)
    self._token_to_id = {token: i for i, token in enumerate(vocab)}
    self._lower_case = bool(lower_case)
    self._tables = ut.unicode_tables(self._lower_case)
    # A word longer than 200 characters becomes [UNK] in the original; such words are replaced by
    # this one-character string that no vocabulary entry starts with, so WordPiece maps it to [UNK].
    self._long_word = next(chr(c) for c in range(1, 0x110000)
                           if not any(t.startswith(chr(c)) for t in vocab))
    self._wordpiece = tf_text.FastWordpieceTokenizer(
        vocab=list(vocab), suffix_indicator="##", unknown_token=UNK, token_out_type=tf.int32,
        max_bytes_per_word=4 * MAX_CHARS_PER_WORD, no_pretokenization=True,
        support_detokenization=False)
    # For pure-ASCII chunks only: tensorflow-text's own whitespace and punctuation split agrees
    # with the original there, and a byte is a character, so its byte cap is the 200-char cap.
    self._ascii_wordpiece = tf_text.FastWordpieceTokenizer(
        vocab=list(vocab), suffix_indicator="##", unknown_token=UNK, token_out_type=tf.int32,
        max_bytes_per_word=MAX_CHARS_PER_WORD, no_pretokenization=False,
        support_detokenization=False)
    self.built = True

  # === Python helpers ===
  vocabulary = property(lambda self: list(self._vocab))
  vocab_size = property(lambda self: len(self._vocab))
  lower_case = property(lambda self: self._lower_case)

  def token_to_id(self, token: str) -> int:
    if token not in self._token_to_id:
      raise UserError(f"token {token!r} is not in the vocabulary ({self.vocab_size} tokens)")
    return self._token_to_id[token]

  def id_to_token(self, token_id: int) -> str:
    if not 0 <= int(token_id) < self.vocab_size:
      raise UserError(f"token id {token_id} is outside [0, {self.vocab_size})")
    return self._vocab[int(token_id)]

  pad_id = property(lambda self: self.token_to_id(PAD))
  unk_id = property(lambda self: self.token_to_id(UNK))
  cls_id = property(lambda self: self.token_to_id(CLS))
  sep_id = property(lambda self: self.token_to_id(SEP))
  mask_id = property(lambda self: self.token_to_id(MASK))

  def encode(self, texts) -> list[list[int]]:
    """A list of str (or bytes) -> a list of id lists, eagerly."""
    return self.tokenize(tf.constant(list(texts), dtype=tf.string, shape=[len(texts)])).to_list()

  # === In-graph API ===
  def call(self, strings):
    return self.tokenize(strings)

  def tokenize(self, strings):
    """(batch,) strings -> ragged int32 (batch, (pieces)); a scalar -> int32 (pieces,)."""
    strings, scalar = self._as_batch(strings)
    ids = self._tokenize_fast(strings)
    return ids[0] if scalar else ids

  def tokenize_with_offsets(self, strings):
    """(ids, begin, end), ragged (batch, (pieces)): `input[begin:end]` is the text a piece came
    from, before lowercasing (an [UNK]: its whole word)."""
    strings, scalar = self._as_batch(strings)
    pre = self._pretokenize(strings)
    ids, piece_begin, piece_end = self._wordpiece.tokenize_with_offsets(pre["words"])
    # Normalised byte position of every word character, over all words one after the other.
    char_bytes = _utf8_length(pre["word_chars"])
    char_start = tf.cumsum(char_bytes, exclusive=True)  # (chars,)
    word_first = pre["word_char_splits"][:-1]
    last_start = tf.maximum(tf.size(char_start, tf.int64) - 1, 0)
    word_base = tf.gather(char_start, tf.minimum(word_first, last_start))
    piece_word = ids.value_rowids()  # (pieces,)
    base = tf.gather(word_base, piece_word)
    first_char = tf.searchsorted(char_start, piece_begin.flat_values + base, side="right") - 1
    last_char = tf.searchsorted(char_start, piece_end.flat_values + base - 1, side="right") - 1
    begin = tf.gather(pre["char_begin"], first_char)
    end = tf.gather(pre["char_end"], last_char)
    # [UNK] for an over-long word: the placeholder string is 1 byte, the word is the whole span.
    word_last = pre["word_char_splits"][1:] - 1
    word_end = tf.gather(pre["char_end"], tf.maximum(word_last, 0))
    end = tf.where(tf.gather(pre["long_word"], piece_word), tf.gather(word_end, piece_word), end)
    outputs = []
    for values in (ids.flat_values, begin, end):
      ragged = tf.RaggedTensor.from_row_splits(values, ids.row_splits, validate=False)
      ragged = tf.RaggedTensor.from_row_splits(ragged, pre["word_splits"], validate=False)
      outputs.append(ragged[0].flat_values if scalar else ragged.merge_dims(-2, -1))
    return tuple(outputs)

  # === Internals ===
  @staticmethod
  def _as_batch(strings):
    strings = tf.convert_to_tensor(strings, dtype=tf.string)
    if strings.shape.rank == 0:
      return tf.reshape(strings, [1]), True
    if strings.shape.rank != 1:
      raise ValueError(f"BertTokenizer expects a scalar or a (batch,) string tensor, got shape "
                       f"{strings.shape}")
    return strings, False

  def _tokenize_fast(self, strings):
    """The ids of `_tokenize_code_points`; an all printable-ASCII batch skips the chunk path (188 ->
    57 ops per tokenize + pack call), and under `lazy_cond` never visits its nodes."""
    all_ascii = tf.reduce_all(tf.strings.regex_full_match(strings, _ASCII_OK))
    # On such strings the original's steps are tensorflow-text's own.
    ascii_ids = lambda: self._ascii_wordpiece.tokenize(
        tf.strings.lower(strings) if self._lower_case else strings)
    return lazy_cond(all_ascii, ascii_ids, lambda: self._tokenize_chunks(strings))

  def _tokenize_chunks(self, strings):
    """Cut at ASCII whitespace (always a word end): pure-ASCII chunks go through tensorflow-text,
    the rest through the code-point pipeline; a string with an ASCII control (deleted: joins its
    neighbours), a capital sigma (final form) or undecodable bytes goes through it whole."""
    special = ~tf.strings.regex_full_match(strings, _FAST_PATH_OK)  # (batch,)
    special_at, normal_at = tf.where(special), tf.where(~special)
    normal = tf.gather_nd(strings, normal_at)
    if self._lower_case:
      normal = tf.strings.lower(normal)  # ASCII letters only; the rest is lowercased below
    chunks = tf.strings.split(normal)  # (normal, (chunks)), cut at ASCII whitespace
    chunk_text = chunks.flat_values
    is_ascii = tf.strings.regex_full_match(chunk_text, "[\\x00-\\x7f]*")
    ascii_at, other_at = tf.where(is_ascii), tf.where(~is_ascii)
    chunk_ids = _interleave(
        tf.size(chunk_text, tf.int64),
        ascii_at, self._ascii_wordpiece.tokenize(tf.gather_nd(chunk_text, ascii_at)),
        other_at, self._tokenize_code_points_if_any(tf.gather_nd(chunk_text, other_at)))
    normal_ids = tf.RaggedTensor.from_row_splits(chunk_ids, chunks.row_splits,
                                                 validate=False).merge_dims(1, 2)
    return _interleave(tf.shape(strings, tf.int64)[0], normal_at, normal_ids, special_at,
                       self._tokenize_code_points_if_any(tf.gather_nd(strings, special_at)))

  def _tokenize_code_points_if_any(self, strings):
    """`_tokenize_code_points` under a `lazy_cond`: ~500 ops (1.5 ms a call) skipped for no input."""
    def empty():
      return tf.RaggedTensor.from_row_splits(tf.zeros([0], tf.int32), tf.zeros([1], tf.int64),
                                             validate=False)
    return lazy_cond(tf.size(strings) > 0, lambda: self._tokenize_code_points(strings), empty)

  def _tokenize_code_points(self, strings):
    """(n,) strings -> ragged int32 (n, (pieces)) through the code-point pipeline."""
    pre = self._pretokenize(strings)
    ids = self._wordpiece.tokenize(pre["words"])
    return tf.RaggedTensor.from_row_splits(ids, pre["word_splits"], validate=False).merge_dims(1, 2)

  def _final_sigma(self, cp, row, row_splits):
    """"Σ" -> "ς" where `str.lower` would (Final_Sigma: a cased letter before it, none after it,
    skipping case-ignorable characters, within one string); cp (N,) int32."""
    context = _range_lookup(self._tables["sigma_starts"], self._tables["sigma_values"], cp)
    significant = context != ut.CASE_IGNORABLE
    n = tf.size(cp, tf.int64)
    significant_at = tf.concat([tf.where(significant)[:, 0], [n]], 0)  # (M + 1,), padded
    before = tf.cumsum(tf.cast(significant, tf.int64), exclusive=True)  # significant chars before i
    sigma_at = tf.where(tf.equal(cp, ut.CAPITAL_SIGMA))[:, 0]  # (S,)
    count = tf.gather(before, sigma_at)
    sigma_row = tf.gather(row, sigma_at)
    previous = tf.gather(significant_at, tf.maximum(count - 1, 0))
    following = tf.gather(significant_at, count + 1)  # Σ itself is significant (cased)
    last = tf.maximum(n - 1, 0)
    is_cased = lambda at: tf.equal(tf.gather(context, tf.minimum(at, last)), ut.CASED)
    after_cased = ((count > 0) & (previous >= tf.gather(row_splits, sigma_row))
                   & is_cased(previous))
    before_cased = (following < tf.gather(row_splits, sigma_row + 1)) & is_cased(following)
    final = after_cased & ~before_cased
    updates = tf.where(final, ut.SMALL_FINAL_SIGMA, ut.CAPITAL_SIGMA)
    return tf.tensor_scatter_nd_update(cp, sigma_at[:, None], updates)

  def _pretokenize(self, strings):
    """The original BasicTokenizer on code points: `words` (words,), `word_splits` (batch + 1,),
    `word_chars` (chars,), `word_char_splits` (words + 1,), and each word character's source byte
    span (`char_begin`, `char_end`)."""
    t = self._tables
    cps, offsets = tf.strings.unicode_decode_with_offsets(strings, "UTF-8", errors="ignore")
    row_splits = cps.row_splits  # (batch + 1,) int64
    cp = cps.flat_values  # (N,) int32, N characters over the batch
    char_begin = offsets.flat_values  # (N,) int64
    char_end = char_begin + _utf8_length(cp)
    row = cps.value_rowids()  # (N,)
    if self._lower_case:
      cp = self._final_sigma(cp, row, row_splits)

    # 1. Expansion: each character -> 0 (dropped), 1 or more normalised characters.
    keys = tf.constant(t["expansion_keys"])
    key_at = tf.minimum(tf.searchsorted(keys, cp, side="left"), tf.size(keys) - 1)
    expands = tf.equal(tf.gather(keys, key_at), cp)
    splits = tf.constant(t["expansion_splits"])
    expansion_begin = tf.gather(splits, key_at)
    length = tf.where(expands, tf.gather(splits, key_at + 1) - expansion_begin, 1)  # (N,)
    source = tf.repeat(tf.range(tf.size(cp)), length)  # (E,) original character of each output
    within = tf.range(tf.size(source)) - tf.gather(tf.cumsum(length, exclusive=True), source)
    value_at = tf.gather(expansion_begin, source) + within
    from_table = tf.gather(expands, source)
    values = tf.constant(np.append(t["expansion_values"], 0).astype(np.int32))
    classes = tf.constant(np.append(t["expansion_classes"], 0).astype(np.int32))
    value_at = tf.where(from_table, value_at, tf.size(values) - 1)
    own_class = _range_lookup(t["class_starts"], t["class_values"], cp)  # (N,)
    char = tf.where(from_table, tf.gather(values, value_at), tf.gather(cp, source))  # (E,)
    char_class = tf.where(from_table, tf.gather(classes, value_at), tf.gather(own_class, source))

    # 2. Words: runs of WORD characters; ISOLATE characters alone; SPACE characters separate.
    char_row = tf.gather(row, source)  # (E,)
    new_row = tf.not_equal(char_row, tf.concat([[-1], char_row[:-1]], 0))
    previous_class = tf.concat([[ut.SPACE], char_class[:-1]], 0)
    in_word = tf.not_equal(char_class, ut.SPACE)
    starts_word = in_word & (new_row | tf.equal(char_class, ut.ISOLATE)
                             | tf.not_equal(previous_class, ut.WORD))
    keep = tf.where(in_word)[:, 0]  # (chars,)
    word_chars = tf.gather(char, keep)
    word_start_at = tf.where(tf.gather(starts_word, keep))[:, 0]  # (words,)
    num_chars = tf.size(keep, tf.int64)
    word_char_splits = tf.concat([word_start_at, [num_chars]], 0)  # (words + 1,)
    word_row = tf.gather(tf.gather(char_row, keep), word_start_at)
    word_splits = tf.RaggedTensor.from_value_rowids(
        word_row, word_row, nrows=tf.shape(strings, tf.int64)[0], validate=False).row_splits
    words = tf.strings.unicode_encode(
        tf.RaggedTensor.from_row_splits(word_chars, word_char_splits, validate=False), "UTF-8")
    long_word = (word_char_splits[1:] - word_char_splits[:-1]) > MAX_CHARS_PER_WORD
    words = tf.where(long_word, self._long_word, words)
    keep_source = tf.gather(source, keep)
    return {"words": words, "word_splits": word_splits, "word_chars": word_chars,
            "word_char_splits": word_char_splits, "long_word": long_word,
            "char_begin": tf.gather(char_begin, keep_source),
            "char_end": tf.gather(char_end, keep_source)}

  def get_config(self):
    config = super().get_config()
    config.update(vocabulary=list(self._vocab), lower_case=self._lower_case)
    return config
