"""Fine-tuning and evaluation batches of similar length, padded to a fixed set of lengths.

Task features are packed to max_seq_length (bert_keras/tasks/packing.py), but most real examples
are far shorter (polarity sentences: 27 pieces at the median of 64). Batching examples of similar
length and cutting each batch to the smallest bucket that holds its longest row
(bert_keras/text/length_buckets.py: 16, 24, 32, 48, 64, ... max_seq_length) skips the padding's
work while keeping the shapes few and static: one XLA program per bucket with jit_compile, as
TPUs need. Cutting only removes padding columns, which attention masks out and every task loss
ignores (classification and regression read [CLS]; tagging labels padding -1, which its loss
ignores; span labels are positions inside the real tokens), so each example's loss is the one
fixed padding gives.

Shuffling happens at both levels: examples are shuffled before they are grouped (each bucket's
batches hold a random subset of its examples) and the finished batches are shuffled again
(buckets interleave in random order instead of one bucket's run after another's).
`buckets=(max_seq_length,)` (RunConfig.length_buckets="fixed") is the fixed padding of before.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np
import tensorflow as tf

from bert_keras.errors import UserError
from bert_keras.text import length_buckets
from bert_keras.progress import Progress
from bert_keras.training.progress_callback import ProgressCallback

# Batches held for the cross-bucket shuffle: enough to mix the 5-10 buckets, small enough that an
# epoch of a small task still starts at once.
BATCH_SHUFFLE_BUFFER = 16


def batch_lengths(max_seq_length: int, spec: str | bool = "auto") -> tuple[int, ...]:
  """The padded lengths of a run's batches for its `length_buckets` setting (RunConfig): "auto"
  16, 24, 32, 48, 64, ... max_seq_length; "fixed" max_seq_length alone; or the given ascending
  lengths, max_seq_length appended (True / False: auto / fixed). A length past max_seq_length is a
  UserError naming it."""
  try:
    return length_buckets.resolve_buckets(length_buckets.normalize_spec(spec), max_seq_length)
  except ValueError as e:
    raise UserError(f"--{e}") from None


def example_lengths(inputs: Mapping[str, np.ndarray]) -> np.ndarray:
  """Real tokens per example, from `input_mask` (n, seq) or (n, choices, seq): (n,) int."""
  mask = np.asarray(inputs["input_mask"])
  lengths = mask.reshape(mask.shape[0], -1, mask.shape[-1]).sum(-1)  # (n, choices or 1)
  return lengths.max(-1)


def _per_position(value, word_ids_shape) -> bool:
  """A label laid out like the inputs (one per position: tagging) is cut with them."""
  return tuple(value.shape) == tuple(word_ids_shape)


def _trim(inputs: dict, labels, buckets: Sequence[int]):
  """A batch cut to the bucket of its longest row (inputs and per-position labels)."""
  longest = tf.reduce_max(tf.reduce_sum(inputs["input_mask"], axis=-1))
  width = length_buckets.bucket_length(longest, buckets)
  shape = inputs["input_word_ids"].shape
  cut = lambda value: value[..., :width] if _per_position(value, shape) else value
  return {k: v[..., :width] for k, v in inputs.items()}, tf.nest.map_structure(cut, labels)


def train_batches(inputs: Mapping[str, np.ndarray], labels: Any, batch_size: int, seed: int,
                  buckets: Sequence[int]) -> tf.data.Dataset:
  """Endless shuffled training batches of (inputs, labels), each cut to one of `buckets`.

  Every batch holds examples of one bucket (group_by_window on the bucket of each example's
  length) and has `batch_size` rows; shapes are (batch_size, b) for b in buckets. A single
  bucket gives plain fixed-length batches.
  """
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
  """model.predict over `inputs` in batches of similar length, outputs in the input order.

  Examples are sorted by length (stably: equal lengths keep their order) and batched; each batch
  runs cut to its bucket and the outputs are put back in the input order, so a task's
  post-processing (SQuAD's windows regrouped per question, CoNLL's first pieces, SWAG's choices)
  sees exactly the arrays fixed padding gives, up to float rounding. Per-position
  outputs (those whose model output has a free sequence axis: span and tag logits) are padded
  back to max_seq_length with a large negative value (a padding position never outranks a real
  one), so the result has model.predict's shapes.
  """
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
