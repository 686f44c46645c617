"""Serving for named-entity recognition (CoNLL-2003, Devlin et al., 2018, section 5.3)."""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from bert_keras.export import text_ops
from bert_keras.export.serving_module import (ServingModule, batched_function, single_or_batch,
                                              strings, text_input)

_OUTSIDE, _BEGIN, _INSIDE = 0, 1, 2


def parse_tags(labels) -> tuple[list[int], list[int], list[str]]:
  """IOB tags -> (prefix per label, type index per label, type names): "B-PER" -> BEGIN, "I-PER"
  -> INSIDE, anything without a type ("O", "[PAD]") -> OUTSIDE; IOBES "S-"/"E-" as B-/I-."""
  types: list[str] = []
  prefixes, type_ids = [], []
  for label in labels:
    head, sep, kind = str(label).partition("-")
    if not sep or not kind or head.upper() not in ("B", "I", "S", "E"):
      prefixes.append(_OUTSIDE)
      type_ids.append(-1)
      continue
    if kind not in types:
      types.append(kind)
    prefixes.append(_BEGIN if head.upper() in ("B", "S") else _INSIDE)
    type_ids.append(types.index(kind))
  return prefixes, type_ids, types


class TaggerServing(ServingModule):
  """text -> entities with their type and character offsets.

  Each word takes the label predicted at its first piece (section 5.3); tags become entities the
  conlleval way. With `doc_stride`, a text longer than one window is tagged in windows every
  doc_stride pieces, each piece labelled in the window where it has the most context
  (run_squad.py's rule); doc_stride=0 tags the first window only.

  Outputs, padded to the most entities in the batch: `entity_type`, `entity_text` string (batch, E)
  ("" padding), `entity_start`, `entity_end` int32 character offsets (end exclusive; -1 padding),
  `num_entities` int32 (batch,).
  """

  def __init__(self, model, tokenizer, max_seq_length: int, labels=None, doc_stride: int = 0,
               **kwargs):
    if not labels:
      raise ValueError("a tagging export needs its label names (labels=['O', 'B-PER', ...])")
    super().__init__("tagging", model, tokenizer, max_seq_length, labels=labels, **kwargs)
    if not 0 <= int(doc_stride) <= max_seq_length - 2:
      raise ValueError(f"doc_stride={doc_stride} must be in [0, max_seq_length - 2 = "
                       f"{max_seq_length - 2}] (0 = tag the first window only)")
    self.stride = int(doc_stride)
    self.doc_stride = tf.Variable(self.stride, trainable=False, name="doc_stride")
    prefixes, type_ids, types = parse_tags(labels)
    if not types:
      raise ValueError(f"labels={list(labels)} hold no B-/I- entity tags")
    self._prefix = tf.constant(prefixes, tf.int32)
    self._type = tf.constant(type_ids, tf.int32)
    self._type_names = tf.constant(types, tf.string)
    # A piece that continues a word ("##ing") never starts one.
    self._continues = tf.constant(
        np.array([t.startswith("##") for t in tokenizer.vocabulary], dtype=bool))
    self._serve_text = batched_function(self._serve_batch, strings(None))

  def _tags(self, inputs):
    logits = tf.cast(self.run_model_per_row_bucket(inputs)["logits"], tf.float32)  # (batch, seq, K)
    return tf.argmax(logits, axis=-1, output_type=tf.int32), tf.nn.softmax(logits, axis=-1)

  def metadata(self) -> dict:
    return {**super().metadata(), "doc_stride": self.stride}

  def _piece_tags(self, ids: tf.RaggedTensor) -> tf.Tensor:
    """ids ragged (batch, (pieces)) -> int32 (pieces,): each piece's tag from its best window."""
    room = self.seq_length - 2
    lengths = tf.cast(ids.row_lengths(), tf.int32)  # (batch,)
    if self.stride:
      example, start, length = text_ops.doc_windows(lengths, tf.fill(tf.shape(lengths), room),
                                                    self.stride)  # each (windows,)
    else:  # one window per text; the caller cut the text to it
      example, start, length = tf.range(tf.size(lengths)), tf.zeros_like(lengths), lengths
    inputs = self.to_bucket(self.packer([text_ops.gather_windows(ids, example, start, length)]))
    tags, _ = self._tags(inputs)  # (windows, bucket length)
    # [CLS] sits at position 0, so piece p of a window is at p + 1.
    within = tf.range(tf.shape(tags)[1])[None, :] - 1  # (1, seq)
    row_start = tf.gather(tf.cast(ids.row_starts(), tf.int32), example)  # (windows,)
    piece = row_start[:, None] + start[:, None] + within  # (windows, seq) flat piece index
    total = tf.size(ids.flat_values, tf.int32)
    owns = text_ops.max_context(within, length, piece, total)  # (windows, seq)
    segment = tf.where(owns, piece, total)
    return tf.math.unsorted_segment_max(tf.reshape(tf.where(owns, tags, 0), [-1]),
                                        tf.reshape(segment, [-1]), total + 1)[:total]

  def _serve_batch(self, text):
    ids, begin, end = self.tokenize_with_offsets(text)  # ragged (batch, (pieces))
    if not self.stride:
      room = self.seq_length - 2
      ids, begin, end = ids[:, :room], begin[:, :room], end[:, :room]
    piece_tag = self._piece_tags(ids)  # (pieces,)
    batch = tf.shape(text)[0]

    # Pieces -> words: a word starts at a piece that is not a "##" continuation.
    piece_row = tf.cast(ids.value_rowids(), tf.int32)  # (pieces,)
    piece_index = tf.range(tf.size(ids.flat_values)) - tf.gather(
        tf.cast(ids.row_starts(), tf.int32), piece_row)  # position inside its row
    starts_word = ~tf.gather(self._continues, ids.flat_values) | tf.equal(piece_index, 0)
    word_of_piece = tf.cumsum(tf.cast(starts_word, tf.int32)) - 1  # (pieces,) global word index
    num_words = tf.reduce_sum(tf.cast(starts_word, tf.int32))
    first_piece = tf.where(starts_word)[:, 0]
    word_row = tf.gather(piece_row, first_piece)  # (words,)
    word_begin = tf.gather(begin.flat_values, first_piece)
    word_end = tf.math.unsorted_segment_max(end.flat_values, word_of_piece, num_words)
    word_tag = tf.gather(piece_tag, first_piece)  # (words,) the label of its first piece

    # Tags -> entities (conlleval chunks).
    prefix = tf.gather(self._prefix, word_tag)
    kind = tf.gather(self._type, word_tag)
    word_index = tf.range(num_words)
    previous = tf.maximum(word_index - 1, 0)  # (words,); gathers stay valid when there are none
    has_previous = ((word_index > 0) & tf.equal(tf.gather(word_row, previous), word_row)
                    & tf.not_equal(tf.gather(prefix, previous), _OUTSIDE))
    previous_kind = tf.where(has_previous, tf.gather(kind, previous), -1)
    inside = tf.not_equal(prefix, _OUTSIDE)
    starts = inside & (tf.equal(prefix, _BEGIN) | tf.not_equal(previous_kind, kind))
    entity_of_word = tf.cumsum(tf.cast(starts, tf.int32)) - 1
    num_entities_total = tf.reduce_sum(tf.cast(starts, tf.int32))
    members = tf.where(inside)[:, 0]
    member_entity = tf.gather(entity_of_word, members)
    entity_begin = tf.math.unsorted_segment_min(tf.gather(word_begin, members), member_entity,
                                                num_entities_total)
    entity_end = tf.math.unsorted_segment_max(tf.gather(word_end, members), member_entity,
                                              num_entities_total)
    start_words = tf.where(starts)[:, 0]
    entity_row = tf.gather(word_row, start_words)
    entity_kind = tf.gather(self._type_names, tf.gather(kind, start_words))

    as_padded = lambda values, pad: tf.RaggedTensor.from_value_rowids(
        values, entity_row, nrows=batch).to_tensor(default_value=pad)
    begin_byte = as_padded(entity_begin, tf.constant(0, tf.int64))  # (batch, E)
    end_byte = as_padded(entity_end, tf.constant(0, tf.int64))
    num_entities = tf.math.bincount(entity_row, minlength=batch, maxlength=batch)
    real = tf.range(tf.shape(begin_byte)[1])[None, :] < num_entities[:, None]
    chars = text_ops.byte_to_char_offsets(text, tf.concat([begin_byte, end_byte], 1))
    begin_char, end_char = tf.split(chars, 2, axis=1)
    texts = tf.broadcast_to(text[:, None], tf.shape(begin_byte))
    return {"entity_type": as_padded(entity_kind, ""),
            "entity_text": tf.where(real, tf.strings.substr(texts, begin_byte,
                                                            end_byte - begin_byte), ""),
            "entity_start": tf.where(real, begin_char, -1),
            "entity_end": tf.where(real, end_char, -1),
            "num_entities": tf.cast(num_entities, tf.int32)}

  @tf.function(input_signature=[text_input("text")], autograph=False)
  def _serve(self, text):
    """text: string (batch,) or a scalar."""
    return single_or_batch(self._serve_text, {"text": text})

  def _outputs(self, inputs):
    """Per-piece labels: `tag_id` int32 (batch, seq), `tag` string, `probabilities` (.., K)."""
    tags, probabilities = self._tags(inputs)
    return {"tag_id": tags, "tag": tf.gather(self.labels, tags), "probabilities": probabilities}
