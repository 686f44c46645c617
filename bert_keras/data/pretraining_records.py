"""The pretraining record format, owned here: what create_pretraining_data writes and
run_pretraining reads.

Records: serialized tf.train.Example, the original create_pretraining_data.py's features (FEATURES):
  input_ids, input_mask, segment_ids         int64, (max_seq_length,)
  masked_lm_positions, masked_lm_ids         int64, (max_predictions_per_seq,), padded with 0
  masked_lm_weights                          float32, (max_predictions_per_seq,): 1.0 real, 0.0 pad
  next_sentence_labels                       int64, (1,): 1 = B is a random next sentence, 0 = the
                                             actual next
Written by pretraining_instances.serialize_instance (without TensorFlow), parsed by
`parse_pretraining_example` (bert_keras.training.pretraining_input's pipeline).

summary.json (SUMMARY_NAME), beside the shards, written last by tfrecord_shards.publish_shards:
the run's counts and ratios (pretraining_data_pipeline.summarize), and what run_pretraining reads
(bert_keras.training.records_summary): "files" ([{"name", "bytes"}]: each published shard and its
size on disk), "vocab_size" (the vocabulary's line count) and "config" (with "vocab_file").

TensorFlow is imported only by the parsers: Beam workers import this module without it.
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
  """TFRecord compression of the shard `path` by its name: "GZIP" for GZIP_SUFFIX, else "". For
  a string tensor (a tf.data pipeline's file name), the same as a string tensor."""
  if isinstance(path, str):
    return "GZIP" if path.endswith(GZIP_SUFFIX) else ""
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  return tf.where(tf.strings.regex_full_match(path, ".*" + GZIP_SUFFIX.replace(".", r"\.")),
                  "GZIP", "")


def feature_lengths(seq_length: int, max_predictions: int) -> Dict[str, int]:
  """{feature name: its number of values} at these lengths."""
  lengths = {SEQUENCE: seq_length, PREDICTIONS: max_predictions, ONE: 1}
  return {name: lengths[length] for name, (_, length) in FEATURES.items()}


def feature_spec(seq_length: int, max_predictions: int):
  """The `tf.io.parse_example` spec of one pretraining example."""
  import tensorflow as tf  # pylint: disable=g-import-not-at-top

  lengths = feature_lengths(seq_length, max_predictions)
  return {name: tf.io.FixedLenFeature([lengths[name]], tf.as_dtype(dtype))
          for name, (dtype, _) in FEATURES.items()}


def parse_pretraining_example(serialized, seq_length: int, max_predictions: int) -> dict:
  """Serialized tf.Example(s) -> dict of tensors, int64 cast to int32 (TPU/GPU friendly).

  `serialized` is a scalar (one example: (seq_length,) features) or (batch,) (then (batch, ...)).
  """
  import tensorflow as tf  # pylint: disable=g-import-not-at-top

  spec = feature_spec(seq_length, max_predictions)
  if serialized.shape.rank == 0:
    parsed = tf.io.parse_single_example(serialized, spec)
  else:
    parsed = tf.io.parse_example(serialized, spec)
  return {name: tf.cast(value, tf.int32) if value.dtype == tf.int64 else value
          for name, value in parsed.items()}
