"""Packs one or two token-id segments into BERT's fixed-length inputs (Devlin et al., 2018, section 3).

"The first token of every sequence is always a special classification token ([CLS]) ... Sentence pairs
are packed together into a single sequence ... separate them with a special token ([SEP])". Over-long
pairs lose tokens from the longer segment first, as the original `_truncate_seq_pair` does. Dense ops
from the segments' lengths: tensorflow-text's ragged packing, which tests hold them to, cost a fifth
of a batch-1 serving call's tokenization.
"""

from __future__ import annotations

import keras
import tensorflow as tf

from bert_keras.errors import UserError


@keras.saving.register_keras_serializable(package="bert_keras")
class BertPacker(keras.layers.Layer):
  """[seg_a] or [seg_a, seg_b] ragged int (batch, (tokens)) -> dict of int32 (batch, seq_length):
  `input_word_ids` [CLS] A [SEP] (B [SEP]) then pad_id, `input_mask`, `input_type_ids` (1 for B).
  Unbatched 1-D segments give (seq_length,) outputs."""

  def __init__(self, seq_length: int, cls_id: int, sep_id: int, pad_id: int = 0, **kwargs):
    super().__init__(**kwargs)
    if seq_length < 3:
      raise UserError(f"BertPacker: seq_length={seq_length} leaves no room for [CLS] A [SEP] B [SEP]")
    self.seq_length = int(seq_length)
    self.cls_id = int(cls_id)
    self.sep_id = int(sep_id)
    self.pad_id = int(pad_id)
    self.built = True

  def call(self, segments):
    if isinstance(segments, (tf.Tensor, tf.RaggedTensor)):
      segments = [segments]
    segments = list(segments)
    if len(segments) not in (1, 2):
      raise ValueError(f"BertPacker packs 1 or 2 segments, got {len(segments)}")
    unbatched = all(not isinstance(s, tf.RaggedTensor) and s.shape.rank == 1 for s in segments)
    batched = []
    for segment in segments:
      if not isinstance(segment, tf.RaggedTensor):
        segment = tf.convert_to_tensor(segment)
        segment = (tf.RaggedTensor.from_tensor(segment[None]) if unbatched
                   else tf.RaggedTensor.from_tensor(segment))
      batched.append(tf.cast(segment, tf.int32))
    if len(batched) == 2:
      outputs = self.pack_pair(*batched)
    else:  # [CLS] A [SEP], A cut to seq_length - 2 tokens
      length = tf.cast(batched[0].row_lengths(), tf.int32)[:, None]  # (batch, 1)
      outputs = self._layout(batched[0], keep_a=tf.minimum(length, self.seq_length - 2))
    return {k: v[0] for k, v in outputs.items()} if unbatched else outputs

  def pack_pair(self, segment_a: tf.RaggedTensor, segment_b: tf.RaggedTensor,
                has_b: tf.Tensor | None = None) -> dict:
    """`[CLS] A [SEP] B [SEP]`: the original `_truncate_seq_pair` (pop from the longer, B on ties)
    keeps ka = min(la, max(m - lb, ceil(m / 2))) of A and kb = min(lb, m - ka) of B, m = seq_length
    - 3. Rows where `has_b` (optional bool (batch,)) is False are packed `[CLS] A [SEP]` alone."""
    segment_a, segment_b = tf.cast(segment_a, tf.int32), tf.cast(segment_b, tf.int32)
    length_a = tf.cast(segment_a.row_lengths(), tf.int32)[:, None]  # (batch, 1)
    length_b = tf.cast(segment_b.row_lengths(), tf.int32)[:, None]
    if has_b is None:
      num_b = tf.ones_like(length_b)
    else:
      num_b = tf.cast(tf.reshape(has_b, [-1, 1]), tf.int32)  # 1: pair, 0: A alone
    budget = self.seq_length - 2 - num_b  # (batch, 1)
    length_b = length_b * num_b
    keep_a = tf.minimum(length_a, tf.maximum(budget - length_b, (budget + 1) // 2))
    keep_b = tf.minimum(length_b, budget - keep_a)
    return self._layout(segment_a, keep_a, (segment_b, keep_b, num_b))

  def _layout(self, segment_a: tf.RaggedTensor, keep_a: tf.Tensor, b=None) -> dict:
    """[CLS], A's first keep_a tokens, [SEP]; with b = (segment_b, keep_b, num_b) B's first keep_b
    tokens and num_b (0 or 1) [SEP]s; then padding. keep_*, num_b: int32 (batch, 1)."""
    seq_length = self.seq_length
    pad = tf.constant(self.pad_id, tf.int32)
    sep = tf.constant(self.sep_id, tf.int32)
    a = segment_a.to_tensor(default_value=pad, shape=[None, seq_length - 2])
    batch = tf.shape(a)[0]
    a = tf.concat([tf.fill([batch, 1], tf.constant(self.cls_id, tf.int32)), a,
                   tf.fill([batch, 1], pad)], axis=1)  # (batch, seq_length): A[p - 1] at p
    position = tf.range(seq_length, dtype=tf.int32)[None, :]  # (1, seq_length)
    after_a = sep  # what follows [CLS] A at positions > keep_a, before padding
    length = keep_a + 2  # real tokens, (batch, 1)
    if b is not None:
      segment_b, keep_b, num_b = b
      width = max(seq_length - 3, 1)
      b_ids = segment_b.to_tensor(default_value=pad, shape=[None, width])
      b_ids = tf.gather(b_ids, tf.clip_by_value(position - keep_a - 2, 0, width - 1),
                        batch_dims=1)  # B[p - keep_a - 2] at p
      in_b = (position >= keep_a + 2) & (position < keep_a + keep_b + 2)
      after_a = tf.where(in_b, b_ids, sep)
      length = length + keep_b + num_b
    real = position < length
    word_ids = tf.where(real, tf.where(position <= keep_a, a, after_a), pad)
    type_ids = (tf.cast(real & (position >= keep_a + 2), tf.int32) if b is not None
                else tf.zeros_like(word_ids))
    return {"input_word_ids": word_ids, "input_mask": tf.cast(real, tf.int32),
            "input_type_ids": type_ids}

  def get_config(self):
    config = super().get_config()
    config.update(seq_length=self.seq_length, cls_id=self.cls_id, sep_id=self.sep_id,
                  pad_id=self.pad_id)
    return config
