"""GPT-1's traversal-style input transformations (section 3.3, Figure 1 right), in-graph."""

from __future__ import annotations

from typing import Sequence

import keras
import tensorflow as tf
import tensorflow_text as tf_text


@keras.saving.register_keras_serializable(package="bert_keras")
class GPTInputTransform(keras.layers.Layer):
  """Turns structured inputs into the token sequences a left-to-right model reads.

  Every sequence starts with the start token and ends with the extract token, whose final state the
  classifier reads; pairs are joined by the delimiter:
    classification  [start; text; extract]                          -> (batch, seq)
    entailment      [start; premise; delim; hypothesis; extract]    -> (batch, seq)
    similarity      both orders of the pair, stacked                -> (batch, 2, seq)
    multiple choice [start; context; delim; answer_c; extract] per c -> (batch, choices, seq)
  Segments are ragged int32 (batch, (tokens)) from `GPTTokenizer.tokenize`. Too long inputs are
  trimmed round-robin across segments (the longer loses most), never the special tokens.
  Returns dicts `input_word_ids` / `input_mask`, int32, right-padded with `pad_id`.
  """

  def __init__(self, seq_length: int, start_id: int, delimiter_id: int, extract_id: int,
               pad_id: int = 0, **kwargs):
    kwargs.setdefault("trainable", False)
    super().__init__(**kwargs)
    if seq_length < 5:
      raise ValueError(f"seq_length={seq_length} leaves no room for text next to the start, "
                       "delimiter and extract tokens; use >= 5")
    self.seq_length = seq_length
    self.start_id = start_id
    self.delimiter_id = delimiter_id
    self.extract_id = extract_id
    self.pad_id = pad_id

  def _column(self, like: tf.RaggedTensor, token_id: int) -> tf.RaggedTensor:
    batch = like.nrows()
    return tf.RaggedTensor.from_tensor(tf.fill(tf.stack([batch, 1]), tf.cast(token_id, like.dtype)))

  def _pack(self, segments: Sequence[tf.RaggedTensor]) -> dict:
    segments = [tf.cast(s, tf.int32) for s in segments]
    budget = self.seq_length - 1 - len(segments)  # start + one delimiter/extract per segment
    trimmed = tf_text.RoundRobinTrimmer(max_seq_length=budget).trim(segments)
    parts = [self._column(trimmed[0], self.start_id)]
    for i, segment in enumerate(trimmed):
      parts.append(segment)
      last = i == len(trimmed) - 1
      parts.append(self._column(segment, self.extract_id if last else self.delimiter_id))
    ids = tf.concat(parts, axis=1)  # ragged (batch, (length <= seq_length))
    shape = [None, self.seq_length]
    return {"input_word_ids": ids.to_tensor(default_value=self.pad_id, shape=shape),
            "input_mask": tf.ones_like(ids).to_tensor(default_value=0, shape=shape)}

  def call(self, segments):
    """One segment: classification; two: entailment (premise, hypothesis)."""
    if isinstance(segments, (tf.RaggedTensor, tf.Tensor)):
      segments = [segments]
    if len(segments) not in (1, 2):
      raise ValueError(f"got {len(segments)} segments; expected 1 (text) or 2 (premise, "
                       "hypothesis). Use similarity() or multiple_choice() for the other layouts")
    return self._pack(list(segments))

  def classification(self, text):
    return self._pack([text])

  def entailment(self, premise, hypothesis):
    return self._pack([premise, hypothesis])

  def similarity(self, text_a, text_b) -> dict:
    """(batch, 2, seq): [a; delim; b] and [b; delim; a], as there is no inherent order."""
    forward, backward = self._pack([text_a, text_b]), self._pack([text_b, text_a])
    return {k: tf.stack([forward[k], backward[k]], axis=1) for k in forward}

  def multiple_choice(self, context, answers: Sequence) -> dict:
    """context (batch, (tokens)) and a list of C answers (batch, (tokens)) -> (batch, C, seq)."""
    if not answers:
      raise ValueError("multiple_choice needs at least one answer")
    packed = [self._pack([context, answer]) for answer in answers]
    return {k: tf.stack([p[k] for p in packed], axis=1) for k in packed[0]}

  def get_config(self):
    config = super().get_config()
    config.update(seq_length=self.seq_length, start_id=self.start_id,
                  delimiter_id=self.delimiter_id, extract_id=self.extract_id, pad_id=self.pad_id)
    return config
