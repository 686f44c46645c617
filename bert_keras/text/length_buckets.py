"""Length buckets: pad a batch to its longest row rounded up to one of a few fixed lengths.

Real inputs are mostly short (movie-review sentences: 10-40 WordPiece pieces), so padding every
batch to max_seq_length spends most of the Transformer's work on padding (attention is quadratic
in the padded length, everything else linear). Padding to the batch's longest row alone would
make a new shape for almost every batch: a new XLA program each time, and a new graph shape for
TPUs. Rounding up to a few fixed lengths (16, 24, 32, 48, 64, 96, ...: each power of two and
1.5 times it, then max_seq_length) bounds the shapes to about 2 log2(max_seq_length / 16) + 1
while keeping padding under a third of each row's bucket above the smallest. Outputs on the real
tokens do not change: padding is masked out of attention and of every per-token reduction.

Why the half steps: with doubling alone (16, 32, 64, ...) a row pads up to half of its bucket. On
the embedded polarity sentences (median 27 pieces) the half steps cut the positions run per
sentence from 39.1 to 33.2; a MiniLM export served one sentence 2-9% faster and mixed batches of 32
with 4-14% more throughput, and a fine-tuning epoch at length 64 ran 1.82x faster than fixed
padding where doubling gave 1.33x, with the same dev metric (docs/benchmarks.md). The price is
more shapes: with XLA, one more program per length.

Shared by the fine-tuning input pipeline (bert_keras/tasks/length_batches.py) and the serving
signatures (bert_keras/export/serving_module.py), so training and serving use the same shapes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

if TYPE_CHECKING:
  import tensorflow as tf

SMALLEST_BUCKET = 16  # one row of [CLS] + a few words + [SEP]; smaller buckets save little


def default_buckets(max_seq_length: int) -> tuple[int, ...]:
  """SMALLEST_BUCKET and each power of two from it, with 1.5 times each, below max_seq_length,
  then max_seq_length itself.

  128 -> (16, 24, 32, 48, 64, 96, 128); 384 -> (16, 24, 32, 48, 64, 96, 128, 192, 256, 384);
  40 -> (16, 24, 32, 40); 10 -> (10,).
  """
  buckets, length = [], SMALLEST_BUCKET
  while length < max_seq_length:
    buckets.append(length)
    if length * 3 // 2 < max_seq_length:
      buckets.append(length * 3 // 2)
    length *= 2
  return tuple(buckets) + (int(max_seq_length),)


def normalize_spec(spec) -> str:
  """A bucket setting as the string configs store: "auto", "fixed" or "16,24,32" (checked for
  syntax; the length it must not exceed is known only with max_seq_length). True / False, the
  fine-tuning setting of earlier versions, read as "auto" / "fixed". ValueError names a bad
  value."""
  if spec is None or spec is True:
    return "auto"
  if spec is False:
    return "fixed"
  if isinstance(spec, str) and spec in ("auto", "fixed"):
    return spec
  return ",".join(map(str, resolve_buckets(spec, None)))


def resolve_buckets(spec, max_seq_length: int | None) -> tuple[int, ...]:
  """Bucket lengths from a user setting: None or "auto" (default_buckets), "fixed" (pad to
  max_seq_length only, the layout TPUs prefer) or ascending lengths, to which max_seq_length is
  appended when missing. ValueError names the bad value."""
  if spec is None or spec == "auto":
    return default_buckets(max_seq_length)
  if spec == "fixed":
    return (int(max_seq_length),)
  if isinstance(spec, str):
    try:
      spec = [int(x) for x in spec.split(",") if x.strip()]
    except ValueError:
      raise ValueError(f"length_buckets={spec!r}; expected 'auto', 'fixed' or ascending "
                       "integers like '16,32,64'") from None
  lengths = [int(x) for x in spec]
  if not lengths or any(b <= a for a, b in zip(lengths, lengths[1:])) or lengths[0] < 3:
    raise ValueError(f"length_buckets={list(spec)}: expected ascending lengths >= 3")
  if max_seq_length is None:  # (normalize_spec: the syntax alone)
    return tuple(lengths)
  if lengths[-1] > max_seq_length:
    raise ValueError(f"length_buckets={lengths}: {lengths[-1]} exceeds max_seq_length="
                     f"{max_seq_length}")
  if lengths[-1] != max_seq_length:
    lengths.append(int(max_seq_length))
  return tuple(lengths)


def bucket_length(longest: tf.Tensor, buckets: Sequence[int]) -> tf.Tensor:
  """The smallest bucket >= `longest` (int32 scalar or any shape); the last bucket above them.

  buckets: ascending Python ints. Works inside tf.data maps and serving graphs alike.
  """
  import tensorflow as tf  # here, so that configs and flag checks read settings without it
  table = tf.constant(list(buckets), tf.int32)
  index = tf.searchsorted(table, tf.reshape(tf.cast(longest, tf.int32), [-1]), side="left")
  index = tf.minimum(index, len(buckets) - 1)
  return tf.reshape(tf.gather(table, index), tf.shape(longest))


def trim_to_bucket(inputs: dict, buckets: Sequence[int]) -> dict:
  """Packed inputs (dict of int (..., max_seq_length), padding at the end of every row) cut to
  the bucket of their longest row, read from `input_mask`. Every tensor keeps its leading axes;
  positions past the bucket are padding in every row, so nothing real is dropped."""
  import tensorflow as tf  # (see bucket_length)
  if len(buckets) == 1:  # fixed padding: nothing to compute
    return inputs
  longest = tf.reduce_max(tf.reduce_sum(tf.cast(inputs["input_mask"], tf.int32), axis=-1))
  width = bucket_length(longest, buckets)
  return {name: value[..., :width] for name, value in inputs.items()}
