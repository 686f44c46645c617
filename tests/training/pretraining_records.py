"""Writes small random-but-valid TFRecords in the original BERT pretraining format (test helper).

Learnable on purpose: segment B is the continuation of segment A (label 0) or a random segment
(label 1) drawn from another "document", and tokens follow a simple bigram pattern, so a tiny model
can beat chance quickly. Masking follows the 80/10/10 rule with [MASK] = 103.
"""

from __future__ import annotations

import os

import numpy as np
import tensorflow as tf


def _feature(values, kind):
  if kind == "int":
    return tf.train.Feature(int64_list=tf.train.Int64List(value=[int(v) for v in values]))
  return tf.train.Feature(float_list=tf.train.FloatList(value=[float(v) for v in values]))


def make_example(rng, seq_length, max_predictions, vocab_size=64, first_id=104):
  """One tf.train.Example with random masked positions; ids in [first_id, vocab_size)."""
  assert vocab_size > first_id or vocab_size > 8
  lo = first_id if vocab_size > first_id else 5
  n_real = int(rng.integers(seq_length // 2, seq_length + 1))
  len_a = (n_real - 3) // 2
  len_b = n_real - 3 - len_a
  start = int(rng.integers(lo, vocab_size))
  span = vocab_size - lo
  seq = [lo + (start - lo + i) % span for i in range(len_a + len_b)]  # "text": a counting pattern
  is_random = int(rng.integers(0, 2))
  a, b = seq[:len_a], seq[len_a:]
  if is_random:
    other = int(rng.integers(lo, vocab_size))
    b = [lo + (other - lo + 3 * i) % span for i in range(len_b)]
  tokens = [101] + a + [102] + b + [102]
  segments = [0] * (len_a + 2) + [1] * (len_b + 1)
  candidates = [i for i, t in enumerate(tokens) if t not in (101, 102)]
  n_pred = min(max_predictions, max(1, int(round(len(tokens) * 0.15))))
  positions = sorted(rng.choice(candidates, size=n_pred, replace=False).tolist())
  input_ids = list(tokens)
  labels = []
  for p in positions:
    labels.append(tokens[p])
    u = rng.random()
    input_ids[p] = 103 if u < 0.8 else (tokens[p] if u < 0.9 else int(rng.integers(lo, vocab_size)))
  pad = seq_length - len(tokens)
  pad_p = max_predictions - n_pred
  features = {
      "input_ids": _feature(input_ids + [0] * pad, "int"),
      "input_mask": _feature([1] * len(tokens) + [0] * pad, "int"),
      "segment_ids": _feature(segments + [0] * pad, "int"),
      "masked_lm_positions": _feature(positions + [0] * pad_p, "int"),
      "masked_lm_ids": _feature(labels + [0] * pad_p, "int"),
      "masked_lm_weights": _feature([1.0] * n_pred + [0.0] * pad_p, "float"),
      "next_sentence_labels": _feature([is_random], "int"),
  }
  return tf.train.Example(features=tf.train.Features(feature=features))


def write_records(directory, num_files=2, per_file=64, seq_length=32, max_predictions=5,
                  vocab_size=128, seed=0):
  """Writes num_files x per_file examples; returns the glob pattern."""
  os.makedirs(directory, exist_ok=True)
  rng = np.random.default_rng(seed)
  for i in range(num_files):
    with tf.io.TFRecordWriter(os.path.join(directory, f"part-{i:05d}.tfrecord")) as w:
      for _ in range(per_file):
        w.write(make_example(rng, seq_length, max_predictions, vocab_size).SerializeToString())
  return os.path.join(directory, "part-*.tfrecord")
