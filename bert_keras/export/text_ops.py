"""In-graph helpers for the serving modules: optional-pair packing, doc-stride windows, offsets.

Everything here is core TensorFlow, so it runs inside an exported SavedModel loaded by a process
that has only tensorflow and tensorflow_text (the tokenizer brings the only non-core ops).
"""

from __future__ import annotations

import tensorflow as tf


def pack_optional_pair(packer, segment_a: tf.RaggedTensor, segment_b: tf.RaggedTensor | None):
  """Packs `[CLS] A [SEP]` or `[CLS] A [SEP] B [SEP]`, per row.

  A row whose B has no pieces (text_b "" or only whitespace) is packed as a single sentence, as the
  original run_classifier.py does (`if tokens_b:`), so one signature serves both task kinds.
  segment_a, segment_b: int32 ragged (batch, (pieces)). Returns the packer's dict of
  int32 (batch, seq_length).
  """
  if segment_b is None:
    return packer([segment_a])
  # One dense packing for both kinds of row (BertPacker.pack_pair), not a single and a pair
  # packing of every row and a select: fewer ops on every serving call.
  return packer.pack_pair(segment_a, segment_b, has_b=segment_b.row_lengths() > 0)


def byte_to_char_offsets(text: tf.Tensor, byte_offsets: tf.Tensor) -> tf.Tensor:
  """Character (Unicode code point) index of each byte offset into `text`.

  text: string (batch,). byte_offsets: int (batch, n) dense, each in [0, len(text[row])].
  Returns int32 (batch, n): the number of characters that start before that byte, so a begin byte
  maps to its character's index and an exclusive end byte to the exclusive end character.
  Undecodable bytes count as one replacement character each, the way the UTF-8 decoder reads them.
  """
  _, char_starts = tf.strings.unicode_decode_with_offsets(
      text, "UTF-8", errors="replace")  # ragged (batch, (chars)) byte offset of each character
  # Pad with a byte offset larger than any string so padding never counts as "before".
  starts = char_starts.to_tensor(default_value=tf.int64.max)  # (batch, max_chars)
  starts = tf.concat([starts, tf.fill([tf.shape(starts)[0], 1], tf.int64.max)], axis=1)
  # One extra column, cut off again: searchsorted reshapes its values to (-1, n), which an empty
  # batch with n = 0 (no entities anywhere) cannot resolve.
  offsets = tf.concat([tf.cast(byte_offsets, tf.int64), tf.zeros_like(starts[:, :1])], axis=1)
  return tf.cast(tf.searchsorted(starts, offsets, side="left")[:, :-1], tf.int32)


def doc_windows(doc_lengths: tf.Tensor, max_doc_tokens: tf.Tensor, doc_stride: int):
  """Sliding windows over each document, exactly as the released run_squad.py lays them out.

  doc_lengths, max_doc_tokens: int32 (batch,). Window w of a document starts at w * stride, with
  stride = min(doc_stride, max_doc_tokens) (run_squad.py advances by min(length, doc_stride), so no
  token is skipped), and holds min(max_doc_tokens, length - start) tokens; the last window ends at
  the document's end. Every example gets at least one window (an empty context gets one empty
  window), so every question has an answer row. Returns int32 (windows,) tensors: example index,
  start, length.
  """
  doc_lengths = tf.cast(doc_lengths, tf.int32)
  max_doc_tokens = tf.cast(max_doc_tokens, tf.int32)
  stride = tf.maximum(tf.minimum(max_doc_tokens, doc_stride), 1)  # (batch,)
  overflow = tf.maximum(doc_lengths - max_doc_tokens, 0)
  num_windows = 1 + (overflow + stride - 1) // stride  # (batch,)
  example = tf.repeat(tf.range(tf.size(doc_lengths)), num_windows)  # (windows,)
  index = tf.ragged.range(num_windows).flat_values  # 0, 1, ... within each example
  start = index * tf.gather(stride, example)
  length = tf.maximum(
      tf.minimum(tf.gather(doc_lengths, example) - start, tf.gather(max_doc_tokens, example)), 0)
  return example, start, length


def gather_windows(values: tf.RaggedTensor, example: tf.Tensor, start: tf.Tensor,
                   length: tf.Tensor) -> tf.RaggedTensor:
  """Slices values[example[w]][start[w] : start[w] + length[w]] for every window w.

  values: ragged (batch, (n)). Returns ragged (windows, (length)).
  """
  positions = tf.ragged.range(start, start + length)  # (windows, (length))
  row_starts = tf.gather(tf.cast(values.row_starts(), tf.int32), example)  # (windows,)
  flat_index = positions + row_starts[:, None]
  return tf.gather(values.flat_values, flat_index)


def max_context(within: tf.Tensor, length: tf.Tensor, piece: tf.Tensor, total) -> tf.Tensor:
  """Which window scores each piece: the one where it has the most context on both sides.

  The released run_squad.py rule (_check_is_max_context): a piece's score in a window is
  min(left, right) + 0.01 * window length; the first window with the highest score owns it.
  within: int32 (windows or 1, seq) index of each position inside its window's document part
  (< 0 or >= length outside it); length: int32 (windows,); piece: int32 (windows, seq) the flat
  index of the document piece at each position; total: the number of pieces.
  Returns bool (windows, seq): True at exactly one position per piece.
  """
  within = tf.broadcast_to(within, tf.shape(piece))
  num_windows = tf.shape(piece)[0]
  in_doc = (within >= 0) & (within < length[:, None])
  segment = tf.where(in_doc, piece, total)  # outside the document -> a spare segment
  score = (tf.cast(tf.minimum(within, length[:, None] - 1 - within), tf.float32)
           + 0.01 * tf.cast(length[:, None], tf.float32))
  score = tf.where(in_doc, score, float("-inf"))
  best = tf.math.unsorted_segment_max(tf.reshape(score, [-1]), tf.reshape(segment, [-1]),
                                      total + 1)
  reaches_best = in_doc & (score >= tf.gather(best, segment))
  window_id = tf.broadcast_to(tf.range(num_windows)[:, None], tf.shape(segment))
  owner = tf.math.unsorted_segment_min(
      tf.reshape(tf.where(reaches_best, window_id, num_windows), [-1]),
      tf.reshape(segment, [-1]), total + 1)
  return reaches_best & tf.equal(window_id, tf.gather(owner, segment))
