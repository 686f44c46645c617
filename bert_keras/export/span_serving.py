"""Serving for SQuAD v1.1 / v2.0 span prediction (Devlin et al., 2018, sections 4.2 and 4.3)."""

from __future__ import annotations

import tensorflow as tf

from bert_keras.export import text_ops
from bert_keras.export.serving_module import (ServingModule, batched_function, single_or_batch,
                                              strings, text_input)

_NEG_INF = float("-inf")
# SpanServing's settings, as task_info.json and the LiteRT metadata name them.
SETTINGS = ("version_2", "null_score_diff_threshold", "doc_stride", "max_query_length",
            "max_answer_length", "n_best_size")


class SpanServing(ServingModule):
  """question, context -> answer text, its character offsets in the context, score.

  What run_squad.py does around the model runs in the graph: the question cut to max_query_length,
  windows every doc_stride pieces, each piece scored in its max-context window, spans from the
  n_best_size best starts and ends, at most max_answer_length long; the best S.T_i + E.T_j over
  the windows wins (section 4.2). v2.0 (4.3): no answer when s_null - s_best > the dev threshold.

  Outputs per question: `answer` ("" for none), `start`, `end` int32 character offsets (end
  exclusive; -1 for none), `score` (s_best; -inf when no span is possible), `null_score_diff`
  (s_null - s_best), `no_answer` bool.
  """

  def __init__(self, model, tokenizer, max_seq_length: int, version_2: bool = False,
               null_score_diff_threshold: float = 0.0, doc_stride: int = 128,
               max_query_length: int = 64, max_answer_length: int = 30, n_best_size: int = 20,
               **kwargs):
    super().__init__("squad", model, tokenizer, max_seq_length, **kwargs)
    for name, value in (("doc_stride", doc_stride), ("max_query_length", max_query_length),
                        ("max_answer_length", max_answer_length), ("n_best_size", n_best_size)):
      if int(value) <= 0:
        raise ValueError(f"{name}={value} must be a positive integer")
    if max_seq_length < 5:
      raise ValueError(f"max_seq_length={max_seq_length} leaves no room for a question and context")
    self.settings = {"version_2": bool(version_2),
                     "null_score_diff_threshold": float(null_score_diff_threshold),
                     "doc_stride": int(doc_stride), "max_query_length": int(max_query_length),
                     "max_answer_length": int(max_answer_length), "n_best_size": int(n_best_size)}
    for name in SETTINGS[:-1]:  # variables of the loaded model too (not n_best_size)
      setattr(self, name, tf.Variable(self.settings[name], trainable=False, name=name))
    self._serve_text = batched_function(self._serve_batch, strings(None), strings(None))

  def metadata(self) -> dict:
    return {**super().metadata(), **self.settings}

  def _serve_batch(self, question, context):
    s = self.settings
    # The question keeps at least one context piece per window.
    max_query = min(s["max_query_length"], self.seq_length - 4)
    query = self.tokenize(question)[:, :max_query]  # ragged (batch, (q))
    doc, doc_begin, doc_end = self.tokenize_with_offsets(context)  # ragged (batch, (d))
    query_length = tf.cast(query.row_lengths(), tf.int32)  # (batch,)
    doc_length = tf.cast(doc.row_lengths(), tf.int32)
    example, start, length = text_ops.doc_windows(doc_length, self.seq_length - 3 - query_length,
                                                  s["doc_stride"])  # each (windows,)
    window = text_ops.gather_windows(doc, example, start, length)  # ragged (windows, (length))
    # No trimming: it fits by design. Padded to the bucket of the call's longest window.
    inputs = self.to_bucket(self.packer([tf.gather(query, example), window]))
    seq = tf.shape(inputs["input_word_ids"])[1]  # the bucket length
    logits = self._outputs(inputs)
    start_logits, end_logits = logits["start_logits"], logits["end_logits"]  # (windows, seq)
    num_windows = tf.shape(example)[0]
    batch = tf.shape(question)[0]

    # Where each window's context sits: [CLS] question [SEP] context [SEP].
    first = tf.gather(query_length, example) + 2  # (windows,) position of the first context piece
    position = tf.range(seq)[None, :]  # (1, seq)
    within = position - first[:, None]  # (windows, seq) index inside the window's context
    in_context = (within >= 0) & (within < length[:, None])
    doc_row_start = tf.gather(tf.cast(doc.row_starts(), tf.int32), example)  # (windows,)
    doc_piece = doc_row_start[:, None] + start[:, None] + within  # global piece index (flat)

    # Max context: each context piece is scored in the window where it has the most context.
    total = tf.size(doc.flat_values, tf.int32)
    max_context = text_ops.max_context(within, length, doc_piece, total)  # (windows, seq)

    # Candidate spans (i, j) per window: the n-best start and end positions, i max-context,
    # j in the context, i <= j < i + max_answer_length.
    k = tf.minimum(s["n_best_size"], seq)
    top_start = start_logits >= tf.math.top_k(start_logits, k).values[:, -1:]
    top_end = end_logits >= tf.math.top_k(end_logits, k).values[:, -1:]
    # (seq, seq): 0 <= j - i < max_answer_length. A comparison, not tf.linalg.band_part, whose
    # bandwidth may not exceed the matrix: a call's bucket (16, 24) is often shorter than
    # max_answer_length (30).
    span_length = position - tf.range(seq)[:, None]  # j - i
    band = (span_length >= 0) & (span_length < s["max_answer_length"])
    valid = ((max_context & top_start)[:, :, None] & (in_context & top_end)[:, None, :]
             & band[None])
    span_score = tf.where(valid, start_logits[:, :, None] + end_logits[:, None, :], _NEG_INF)
    flat = tf.reshape(span_score, [num_windows, seq * seq])
    window_best = tf.reduce_max(flat, axis=1)  # (windows,)
    window_arg = tf.argmax(flat, axis=1, output_type=tf.int32)

    # The best window of each question (the first one on ties).
    has_span = tf.math.unsorted_segment_max(
        tf.cast(tf.reduce_any(valid, axis=[1, 2]), tf.int32), example, batch) > 0  # (batch,)
    best = tf.math.unsorted_segment_max(window_best, example, batch)
    best = tf.where(has_span, best, _NEG_INF)  # an empty segment's max is the lowest float
    is_best = window_best >= tf.gather(best, example)
    chosen = tf.math.unsorted_segment_min(
        tf.where(is_best, tf.range(num_windows), num_windows), example, batch)
    chosen = tf.minimum(chosen, num_windows - 1)  # every question has a window; guards the gather
    arg = tf.gather(window_arg, chosen)
    i, j = arg // seq, arg % seq
    flat_begin = tf.gather_nd(doc_piece, tf.stack([chosen, i], 1))
    flat_end = tf.gather_nd(doc_piece, tf.stack([chosen, j], 1))
    last_piece = tf.maximum(total - 1, 0)
    safe = lambda index: tf.clip_by_value(index, 0, last_piece)
    begin_byte = tf.gather(tf.concat([doc_begin.flat_values, [0]], 0), safe(flat_begin))
    end_byte = tf.gather(tf.concat([doc_end.flat_values, [0]], 0), safe(flat_end))

    null_score = tf.math.unsorted_segment_min(start_logits[:, 0] + end_logits[:, 0], example,
                                              batch)  # s_null, the smallest over the windows
    null_score_diff = null_score - best
    no_answer = ~has_span
    if s["version_2"]:
      no_answer = no_answer | (null_score_diff > self.null_score_diff_threshold)
    begin_byte = tf.where(no_answer, tf.zeros_like(begin_byte), begin_byte)
    end_byte = tf.where(no_answer, tf.zeros_like(end_byte), end_byte)
    chars = text_ops.byte_to_char_offsets(context, tf.stack([begin_byte, end_byte], 1))
    minus_one = tf.fill([batch], -1)
    return {"answer": tf.strings.substr(context, begin_byte, end_byte - begin_byte),
            "start": tf.where(no_answer, minus_one, chars[:, 0]),
            "end": tf.where(no_answer, minus_one, chars[:, 1]),
            "score": best, "null_score_diff": null_score_diff, "no_answer": no_answer}

  @tf.function(input_signature=[text_input("question"), text_input("context")],
               autograph=False)
  def _serve(self, question, context):
    """question, context: string (batch,) or scalars."""
    return single_or_batch(self._serve_text, {"question": question, "context": context})

  def _outputs(self, inputs):
    """The raw span logits (windows, seq) each, float32: post-processing is the caller's."""
    outputs = self._run_model(inputs)
    return {"start_logits": tf.cast(outputs["start_logits"], tf.float32),
            "end_logits": tf.cast(outputs["end_logits"], tf.float32)}
