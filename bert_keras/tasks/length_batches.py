"""Fine-tuning and evaluation batches of similar length, each cut to the bucket of its longest row.

Most real examples are far shorter than max_seq_length (polarity: 27 pieces at the median of 64);
cutting removes only padding columns, which attention masks out and every loss ignores, while the
shapes stay few and static (one XLA program per bucket). Examples are shuffled before grouping and
the batches again after, so buckets interleave.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np
import tensorflow as tf

from bert_keras.errors import UserError
from bert_keras.text import length_buckets
from bert_keras.progress import Progress
from bert_keras.training.progress_callback import ProgressCallback

# Batches held for the cross-bucket shuffle: enough to mix the 5-10 buckets, few enough to start fast.
BATCH_SHUFFLE_BUFFER = 16


def batch_lengths(max_seq_length: int, spec: str | bool = "auto") -> tuple[int, ...]:
  """The padded lengths of a run's batches for RunConfig.length_buckets ("auto", "fixed", lengths;
  True / False: auto / fixed)."""
  try:
    return length_buckets.resolve_buckets(length_buckets.normalize_spec(spec), max_seq_length)
  except ValueError as e:
    raise UserError(f"--{e}") from None


def example_lengths(inputs: Mapping[str, np.ndarray]) -> np.ndarray:
  """Real tokens per example, from `input_mask` (n, seq) or (n, choices, seq): (n,) int."""
  mask = np.asarray(inputs["input_mask"])
  lengths = mask.reshape(mask.shape[0], -1, mask.shape[-1]).sum(-1)  # (n, choices or 1)
  return lengths.max(-1)


def _trim(inputs: dict, labels, buckets: Sequence[int]):
  """A batch cut to the bucket of its longest row: the inputs and the labels laid out like them
  (one per position: tagging)."""
  longest = tf.reduce_max(tf.reduce_sum(inputs["input_mask"], axis=-1))
  width = length_buckets.bucket_length(longest, buckets)
  shape = tuple(inputs["input_word_ids"].shape)
  cut = lambda value: value[..., :width] if tuple(value.shape) == shape else value
  return {k: v[..., :width] for k, v in inputs.items()}, tf.nest.map_structure(cut, labels)


def train_batches(inputs: Mapping[str, np.ndarray], labels: Any, batch_size: int, seed: int,
                  buckets: Sequence[int]) -> tf.data.Dataset:
  """Endless shuffled training batches of (inputs, labels), each of one bucket b: (batch_size, b)."""
  count = len(np.asarray(inputs["input_mask"]))
  ds = tf.data.Dataset.from_tensor_slices((dict(inputs), labels))
  ds = ds.shuffle(count, seed=seed, reshuffle_each_iteration=True).repeat()
  if len(buckets) == 1:
    return ds.batch(batch_size, drop_remainder=True)
  return grouped_batches(ds, batch_size, buckets).shuffle(BATCH_SHUFFLE_BUFFER, seed=seed)


def grouped_batches(ds: tf.data.Dataset, batch_size: int, buckets: Sequence[int]) -> tf.data.Dataset:
  """Batches of examples of one bucket each, cut to it; a finite dataset's last partial batch
  of every bucket comes out too."""
  table = tf.constant(list(buckets), tf.int32)
  key = lambda x, y: tf.cast(tf.searchsorted(
      table, tf.reshape(tf.reduce_max(tf.reduce_sum(x["input_mask"], -1)), [1]))[0], tf.int64)
  ds = ds.group_by_window(key_func=key, reduce_func=lambda _, window: window.batch(batch_size),
                          window_size=batch_size)
  return ds.map(lambda x, y: _trim(x, y, buckets), num_parallel_calls=tf.data.AUTOTUNE)


def predict(model, inputs: Mapping[str, np.ndarray], batch_size: int,
            buckets: Sequence[int], label: str = "predict"):
  """model.predict over `inputs` sorted by length and batched per bucket, outputs back in the input
  order with model.predict's shapes: per-position outputs (span, tag logits) padded with -1e9, so
  a padding position never outranks a real one."""
  inputs = {name: np.asarray(value) for name, value in inputs.items()}
  if len(buckets) == 1 or not len(inputs["input_word_ids"]):  # no example: model.predict's answer
    return model.predict(inputs, batch_size=batch_size, verbose=0,
                         callbacks=[ProgressCallback(label)])
  word_shape = inputs["input_word_ids"].shape[1:]  # (seq,) or (choices, seq)
  seq_axis = len(word_shape)  # of an output laid out like the inputs
  per_position = tf.nest.map_structure(
      lambda t: len(t.shape) > seq_axis and t.shape[seq_axis] is None, model.output)
  lengths = example_lengths(inputs)
  order = np.argsort(lengths, kind="stable")
  pieces = []
  progress = Progress(label, -(-len(order) // batch_size))  # `label step k/n ...` batches
  for start in range(0, len(order), batch_size):
    rows = order[start:start + batch_size]
    index = min(int(np.searchsorted(buckets, lengths[rows].max())), len(buckets) - 1)
    batch = {name: value[rows][..., :buckets[index]] for name, value in inputs.items()}
    pieces.append(tf.nest.map_structure(np.asarray, model.predict_on_batch(batch)))
    progress.update(len(pieces))

  def join(is_per_position, *parts):
    if is_per_position:
      pad = lambda p: [(0, 0)] * seq_axis + [(0, word_shape[-1] - p.shape[seq_axis])] + [
          (0, 0)] * (p.ndim - seq_axis - 1)
      parts = [np.pad(p, pad(p), constant_values=-1e9) for p in parts]
    joined = np.concatenate(parts)
    out = np.empty_like(joined)
    out[order] = joined
    return out

  return tf.nest.map_structure(join, per_position, *pieces)
