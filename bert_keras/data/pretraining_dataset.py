"""tf.data parsing of pretraining TFRecords (ours or the original create_pretraining_data.py's).

Feature names and dtypes are the original's: input_ids, input_mask, segment_ids (seq_length int64),
masked_lm_positions, masked_lm_ids (max_predictions int64), masked_lm_weights (max_predictions
float32), next_sentence_labels (1 int64; 1 = B is a random next sentence, 0 = the actual next).
"""

from __future__ import annotations

from typing import Dict

import tensorflow as tf


def feature_spec(seq_length: int, max_predictions: int) -> Dict[str, tf.io.FixedLenFeature]:
  """The `tf.io.parse_example` spec of one pretraining example."""
  return {
      "input_ids": tf.io.FixedLenFeature([seq_length], tf.int64),
      "input_mask": tf.io.FixedLenFeature([seq_length], tf.int64),
      "segment_ids": tf.io.FixedLenFeature([seq_length], tf.int64),
      "masked_lm_positions": tf.io.FixedLenFeature([max_predictions], tf.int64),
      "masked_lm_ids": tf.io.FixedLenFeature([max_predictions], tf.int64),
      "masked_lm_weights": tf.io.FixedLenFeature([max_predictions], tf.float32),
      "next_sentence_labels": tf.io.FixedLenFeature([1], tf.int64),
  }


def parse_pretraining_example(serialized: tf.Tensor, seq_length: int, max_predictions: int
                              ) -> Dict[str, tf.Tensor]:
  """Serialized tf.Example(s) -> dict of tensors, int64 cast to int32 (TPU/GPU friendly).

  `serialized` is a scalar (one example: (seq_length,) features) or (batch,) (then (batch, ...)).
  """
  spec = feature_spec(seq_length, max_predictions)
  if serialized.shape.rank == 0:
    parsed = tf.io.parse_single_example(serialized, spec)
  else:
    parsed = tf.io.parse_example(serialized, spec)
  return {name: tf.cast(value, tf.int32) if value.dtype == tf.int64 else value
          for name, value in parsed.items()}
