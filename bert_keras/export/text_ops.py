"""In-graph helpers of the serving modules (core TensorFlow only): windows and offsets."""

from __future__ import annotations

import tensorflow as tf


def byte_to_char_offsets(text: tf.Tensor, byte_offsets: tf.Tensor) -> tf.Tensor:
  """int32 (batch, n): the characters that start before each byte offset (batch, n) into `text`
  (batch,); an undecodable byte counts as one replacement character, as the UTF-8 decoder reads it."""
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
  """Windows over each document as run_squad.py lays them out: window w starts at
  w * min(doc_stride, max_doc_tokens), the last ends at the document's end, an empty document gets
  one. doc_lengths, max_doc_tokens: (batch,) -> (example, start, length), each int32 (windows,)."""
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
  """values[example[w]][start[w]:start[w] + length[w]] per window w: ragged (windows, (length))."""
  positions = tf.ragged.range(start, start + length)  # (windows, (length))
  row_starts = tf.gather(tf.cast(values.row_starts(), tf.int32), example)  # (windows,)
  flat_index = positions + row_starts[:, None]
  return tf.gather(values.flat_values, flat_index)


def max_context(within: tf.Tensor, length: tf.Tensor, piece: tf.Tensor, total) -> tf.Tensor:
  """bool (windows, seq), True at the one position per piece whose window gives it the most
  context: min(left, right) + 0.01 * length, the first window on ties (run_squad.py). within:
  (windows or 1, seq) position inside the window's document part; piece: (windows, seq) flat piece
  index; total: the number of pieces."""
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
