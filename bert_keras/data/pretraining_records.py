"""The pretraining record format, owned here: what create_pretraining_data writes and
run_pretraining reads. Records are the original's tf.train.Examples (FEATURES): input_ids,
input_mask, segment_ids (max_seq_length); masked_lm_positions, masked_lm_ids, masked_lm_weights
(max_predictions_per_seq, padded with 0; weights 1.0 real, 0.0 pad); next_sentence_labels (1:
B is a random next). summary.json beside the shards, written last, holds the run's counts and
what run_pretraining reads: "files" ([{"name", "bytes"}]), "vocab_size" and "config".
TensorFlow is imported only by the parsers.
"""

from __future__ import annotations

from typing import Dict

SEQUENCE, PREDICTIONS, ONE = "max_seq_length", "max_predictions_per_seq", "1"
# name -> (dtype, length): in the order of the original's writer.
FEATURES = {
    "input_ids": ("int64", SEQUENCE),
    "input_mask": ("int64", SEQUENCE),
    "segment_ids": ("int64", SEQUENCE),
    "masked_lm_positions": ("int64", PREDICTIONS),
    "masked_lm_ids": ("int64", PREDICTIONS),
    "masked_lm_weights": ("float32", PREDICTIONS),
    "next_sentence_labels": ("int64", ONE),
}
# The features holding token ids (of the vocabulary the records were made with).
TOKEN_ID_FEATURES = ("input_ids", "masked_lm_ids")

SUMMARY_NAME = "summary.json"
# Shards written with compression="gzip" end with it; every reader picks the compression by name.
GZIP_SUFFIX = ".gz"


def compression_type(path):
  """"GZIP" for a shard named with GZIP_SUFFIX, else "" (a string tensor for a string tensor)."""
  if isinstance(path, str):
    return "GZIP" if path.endswith(GZIP_SUFFIX) else ""
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  return tf.where(tf.strings.regex_full_match(path, ".*" + GZIP_SUFFIX.replace(".", r"\.")),
                  "GZIP", "")


def feature_lengths(seq_length: int, max_predictions: int) -> Dict[str, int]:
  lengths = {SEQUENCE: seq_length, PREDICTIONS: max_predictions, ONE: 1}
  return {name: lengths[length] for name, (_, length) in FEATURES.items()}


def feature_spec(seq_length: int, max_predictions: int):
  import tensorflow as tf  # pylint: disable=g-import-not-at-top

  lengths = feature_lengths(seq_length, max_predictions)
  return {name: tf.io.FixedLenFeature([lengths[name]], tf.as_dtype(dtype))
          for name, (dtype, _) in FEATURES.items()}


def parse_pretraining_example(serialized, seq_length: int, max_predictions: int) -> dict:
  """Serialized tf.Example(s), a scalar or (batch,) -> dict of tensors, int64 cast to int32."""
  import tensorflow as tf  # pylint: disable=g-import-not-at-top

  spec = feature_spec(seq_length, max_predictions)
  if serialized.shape.rank == 0:
    parsed = tf.io.parse_single_example(serialized, spec)
  else:
    parsed = tf.io.parse_example(serialized, spec)
  return {name: tf.cast(value, tf.int32) if value.dtype == tf.int64 else value
          for name, value in parsed.items()}
