"""tf.data input for pretraining: the original BERT TFRecords -> batches of (accum, micro, ...).

files (shuffled, repeated) -> interleave -> shuffle -> enumerate -> skip -> shard -> parse (+ dynamic
masking) -> batch -> micro-batches -> prefetch. Sharding comes AFTER the seeded shuffle, so a step's
global batch is the same whatever the number of workers; `skip` counts global batches and
`enumerate` seeds each record's masking, so a resumed run reads and masks as an uninterrupted one.
"""

from __future__ import annotations

import contextlib
import re

import numpy as np
import tensorflow as tf
from absl import logging
from tensorflow.python.util import deprecation  # silence(): not public

from bert_keras.configs.training import TrainingConfig
from bert_keras.data import pretraining_records
from bert_keras.data.pretraining_records import compression_type
from bert_keras.errors import UserError
from bert_keras.training.dataset_options import without_autotune
from bert_keras.training.input_files import InputFiles, each_file, join_path, list_files

AUTOTUNE = tf.data.AUTOTUNE


def check_record_shapes(files: list[str], seq_length: int, max_predictions: int) -> None:
  """UserError naming the first file whose first record is not BERT pretraining TFRecords of these
  lengths, before training rather than mid-run. Empty files are allowed, but not all of them."""
  with deprecation.silence():  # tf_record_iterator is deprecated
    problems = each_file(lambda path: _check_file(path, seq_length, max_predictions), files)
  for problem in problems:
    if problem:
      raise UserError(problem)
  if all(problem is None for problem in problems):  # every file was empty
    raise UserError(f"{files[0]}: no records in any of the {len(files)} input file(s)")


def _check_file(path: str, seq_length: int, max_predictions: int) -> str | None:
  """The error message for one file, "" if its first record fits, None if it has no records."""
  try:
    raw = _first_record(path)
  except UserError as e:
    return str(e)
  if raw is None:
    return None
  try:
    feats = tf.train.Example.FromString(raw).features.feature
  except Exception as e:  # google.protobuf.message.DecodeError (not importable everywhere)
    return (f"{path}: record 1 is not a tf.train.Example ({type(e).__name__}: {_first_line(e)}); "
            "expected BERT pretraining TFRecords")
  lengths = pretraining_records.feature_lengths(seq_length, max_predictions)
  for name, (dtype, length) in pretraining_records.FEATURES.items():
    if name not in feats:
      return (f"{path}: record 1 has no feature {name!r}; expected the BERT "
              f"pretraining format ({sorted(pretraining_records.FEATURES)})")
    values = feats[name].float_list if dtype == "float32" else feats[name].int64_list
    got = len(values.value)
    if got != lengths[name]:
      return (f"{path}: record 1 has {name} of length {got}, but the config says "
              f"{lengths[name]} ({length})")
  return ""


def _first_line(error: Exception) -> str:
  text = str(error).strip()
  return text.splitlines()[0] if text else type(error).__name__


def record_options(path: str) -> tf.io.TFRecordOptions:
  """`.gz` shards are GZIP TFRecords."""
  return tf.io.TFRecordOptions(compression_type=compression_type(path))


def _first_record(path: str):
  """The first record's bytes, None if none; a corrupt or unreadable file is a UserError.
  (The record iterator: 200 local files in 7 ms, a tf.data pipeline per file 5 s.)"""
  options = record_options(path)
  try:
    raw = next(tf.compat.v1.io.tf_record_iterator(path, options), None)
    if raw is not None:
      return raw
    size = tf.io.gfile.stat(path).length
  except (tf.errors.DataLossError, tf.errors.InvalidArgumentError, tf.errors.OutOfRangeError,
          tf.errors.UnknownError) as e:
    raise UserError(f"{path}: corrupt TFRecord file ({type(e).__name__}: {_first_line(e)}); "
                    f"{_expected(path)}") from None
  except tf.errors.OpError as e:  # not found, permission denied, a directory
    raise UserError(f"{path}: cannot read ({type(e).__name__}: {_first_line(e)})") from None
  if size and not options.compression_type:  # shorter than a record header: not TFRecords at all
    raise UserError(f"{path}: not a TFRecord file ({size} bytes, no complete record); "
                    f"{_expected(path)}")
  return None


def _expected(path: str) -> str:
  directory = path.rsplit("/", 1)[0] if "/" in path else "."
  return ("expected TFRecords written by create_pretraining_data (if this file is not an input, "
          f"narrow --input_files, e.g. to '{join_path(directory, 'pretraining-*')}')")


def find_corrupt_records(files: list[str]) -> list[tuple[str, str]]:
  """(path, message naming the record and byte offset) per file that cannot be read to its end
  (after a tf.data DataLossError, whose message names no file)."""
  with deprecation.silence():  # tf_record_iterator is deprecated
    return [(path, problem) for path, problem in zip(files, each_file(_bad_record, files)) if problem]


def _bad_record(path: str) -> str | None:
  """The message naming the first unreadable record of `path`, None if it reads to its end."""
  compression = compression_type(path)
  try:
    tf.data.TFRecordDataset(path, compression_type=compression, buffer_size=1 << 22).reduce(
        np.int64(0), lambda n, _: n + 1)
    return None
  except tf.errors.OpError:
    pass
  count, error = 0, None
  try:
    for _ in tf.compat.v1.io.tf_record_iterator(path, tf.io.TFRecordOptions(compression)):
      count += 1
  except tf.errors.OpError as e:
    error = e
  if error is None:  # read fine the second time: not a property of the file
    return None
  text = _first_line(error)
  offset = re.search(r"record at (\d+)", text)
  where = f"record {count + 1}"
  if offset:
    where += f" (at byte {offset.group(1)}{' of the uncompressed stream' if compression else ''})"
  what = ("corrupt TFRecord file" if isinstance(error, tf.errors.DataLossError) else
          "cannot read the file")  # e.g. deleted or its permissions changed since the start
  return (f"{path}: {what}: {where} cannot be read ({type(error).__name__}: {text}); the "
          f"{count} record(s) before it read fine")


@contextlib.contextmanager
def corrupt_records_are_user_errors(input_files: str | InputFiles, flag: str, hint=None):
  """A tf.data DataLossError within becomes a UserError naming the file, record and `--flag`,
  then `hint()`; left as it is when no input file is at fault."""
  try:
    yield
  except tf.errors.DataLossError as e:
    files = input_files.files if isinstance(input_files, InputFiles) else list_files(input_files)
    logging.warning("reading --%s failed (%s); reading its %d file(s) to find the corrupt one",
                    flag, type(e).__name__, len(files))
    problems = find_corrupt_records(files)
    if not problems:
      raise
    others = [path for path, _ in problems[1:]]
    more = f"; also corrupt: {', '.join(others)}" if others else ""
    advice = hint() if hint else ("replace it with an intact copy of the same name (or write it "
                                  "again) and re-run")
    raise UserError(f"{problems[0][1]}{more}; matched by --{flag}={input_files}; {advice}"
                    ) from None


def _files_to_read(input_files: str | InputFiles, seq_length: int,
                   max_predictions: int) -> list[str]:
  """Patterns are listed and checked; an InputFiles was checked once by its caller."""
  if isinstance(input_files, InputFiles):
    return list(input_files.files)
  files = list_files(input_files)
  check_record_shapes(files, seq_length, max_predictions)
  return files


def _read_records(path):
  return tf.data.TFRecordDataset(path, compression_type=compression_type(path))


def unmask(features: dict) -> tf.Tensor:
  """The original token ids: the stored masked-LM labels put back at their positions. (seq,)"""
  real = features["masked_lm_weights"] > 0
  positions = tf.boolean_mask(features["masked_lm_positions"], real)
  labels = tf.boolean_mask(features["masked_lm_ids"], real)
  return tf.tensor_scatter_nd_update(features["input_ids"], positions[:, None], labels)


def dynamic_mask(features: dict, index: tf.Tensor, seed: int, masked_lm_prob: float,
                 mask_token_id: int, vocab_size: int, special_token_ids) -> dict:
  """Re-masks one example (RoBERTa-style) with the paper's 80/10/10 rule (A.1), keyed by (seed,
  global record index): deterministic, resumable, and new in each epoch."""
  ids = unmask(features)  # (seq,)
  num_predictions = features["masked_lm_positions"].shape[0]
  rng = tf.random.experimental.stateless_split(
      tf.stack([tf.cast(seed, tf.int64), tf.cast(index, tf.int64)]), 3)
  is_special = tf.reduce_any(ids[:, None] == tf.constant(list(special_token_ids), ids.dtype), -1)
  candidate = (features["input_mask"] > 0) & ~is_special
  n_tokens = tf.reduce_sum(tf.cast(features["input_mask"], tf.float32))
  n_pred = tf.minimum(
      tf.minimum(num_predictions, tf.reduce_sum(tf.cast(candidate, tf.int32))),
      tf.maximum(1, tf.cast(tf.round(n_tokens * masked_lm_prob), tf.int32)))
  scores = tf.random.stateless_uniform(tf.shape(ids), rng[0])
  scores = tf.where(candidate, scores, -1.0)
  chosen = tf.math.top_k(scores, k=num_predictions).indices[:n_pred]  # random candidates
  positions = tf.sort(chosen)
  labels = tf.gather(ids, positions)
  action = tf.random.stateless_uniform(tf.shape(positions), rng[1])
  random_ids = tf.random.stateless_uniform(tf.shape(positions), rng[2], 0, vocab_size, ids.dtype)
  replaced = tf.where(action < 0.8, tf.cast(mask_token_id, ids.dtype),
                      tf.where(action < 0.9, labels, random_ids))
  input_ids = tf.tensor_scatter_nd_update(ids, positions[:, None], replaced)
  pad = num_predictions - n_pred
  out = dict(features)
  out["input_ids"] = input_ids
  fixed = lambda t: tf.ensure_shape(tf.pad(t, [[0, pad]]), [num_predictions])
  out["masked_lm_positions"] = fixed(positions)
  out["masked_lm_ids"] = fixed(labels)
  out["masked_lm_weights"] = fixed(tf.ones_like(positions, tf.float32))
  return out


def label_frequencies(input_files: str | InputFiles, *, seq_length: int, max_predictions: int,
                      objective: str = "mlm_nsp", max_records: int = 100_000) -> np.ndarray:
  """float64 counts per token id of the prediction targets in the first `max_records` records
  (masked-LM: real masked_lm_ids; "ltr": every real token after the first)."""
  files = _files_to_read(input_files, seq_length, max_predictions)

  def targets(record):
    f = pretraining_records.parse_pretraining_example(record, seq_length, max_predictions)
    if objective == "ltr":
      return unmask(f)[1:], tf.cast(f["input_mask"][1:], tf.float32)
    return f["masked_lm_ids"], f["masked_lm_weights"]

  ds = tf.data.Dataset.from_tensor_slices(files).flat_map(_read_records).take(max_records)
  ds = ds.map(targets, num_parallel_calls=AUTOTUNE).batch(1024)
  counts = np.zeros([0])
  with corrupt_records_are_user_errors(input_files, "input_files"):
    for labels, weights in ds.as_numpy_iterator():
      batch = np.bincount(labels.ravel(), weights=weights.ravel().astype(np.float64))
      if batch.size > counts.size:
        counts = np.pad(counts, [0, batch.size - counts.size])
      counts[:batch.size] += batch
  if not counts.sum():
    raise UserError(f"{input_files}: no prediction targets in the first {max_records} records")
  return counts


def make_dataset(config: TrainingConfig, input_files: str | InputFiles, *, training: bool = True,
                 input_context: tf.distribute.InputContext | None = None,
                 skip_batches: int = 0) -> tf.data.Dataset:
  """Per-replica dicts (accum, micro, ...): the GLOBAL train_batch_size per step split over
  replicas and micro-batches; evaluation eval_batch_size in file order. Resuming skips
  `skip_batches` global batches."""
  data, seed, objective = config.data, config.runtime.seed, config.model.objective
  seq_length, max_predictions = data.max_seq_length, data.max_predictions_per_seq
  batch_size = data.train_batch_size if training else data.eval_batch_size or data.train_batch_size
  gradient_accumulation_steps = config.optimizer.gradient_accumulation_steps if training else 1
  files = _files_to_read(input_files, seq_length, max_predictions)
  num_pipelines = input_context.num_input_pipelines if input_context else 1
  pipeline_id = input_context.input_pipeline_id if input_context else 0
  num_replicas = input_context.num_replicas_in_sync if input_context else 1
  if batch_size % (num_replicas * gradient_accumulation_steps):
    raise UserError(f"batch_size={batch_size} is not divisible by {num_replicas} replica(s) "
                    f"x gradient_accumulation_steps={gradient_accumulation_steps}")
  # One pipeline per worker; it feeds its local replicas round-robin, one per-replica batch each.
  local_batch = batch_size // num_replicas
  micro = local_batch // gradient_accumulation_steps

  ds = tf.data.Dataset.from_tensor_slices(files)
  if training:
    ds = ds.shuffle(len(files), seed=seed, reshuffle_each_iteration=True)
  ds = ds.repeat()
  ds = ds.interleave(_read_records, cycle_length=min(data.cycle_length, len(files)),
                     block_length=1, num_parallel_calls=AUTOTUNE, deterministic=True)
  if training:
    ds = ds.shuffle(data.shuffle_buffer_size, seed=seed, reshuffle_each_iteration=True)
  ds = ds.enumerate()
  if skip_batches:
    ds = ds.skip(skip_batches * batch_size)
  if num_pipelines > 1:
    ds = ds.shard(num_pipelines, pipeline_id)

  masking_vocab_size = config.masking_vocab_size() if data.dynamic_masking and training else 0

  def parse(index, record):
    features = pretraining_records.parse_pretraining_example(record, seq_length, max_predictions)
    if objective == "ltr":
      # Every position predicts the next token of the ORIGINAL text: undo the stored masking.
      features["input_ids"] = unmask(features)
    elif data.dynamic_masking and training:
      features = dynamic_mask(features, index, seed, data.masked_lm_prob, data.mask_token_id,
                              masking_vocab_size, data.special_token_ids)
    return features

  options = tf.data.Options()
  options.deterministic = True
  options.experimental_distribute.auto_shard_policy = tf.data.experimental.AutoShardPolicy.OFF
  ds = ds.with_options(options)
  ds = ds.map(parse, num_parallel_calls=AUTOTUNE, deterministic=True)
  ds = ds.batch(local_batch, drop_remainder=True)
  ds = ds.map(lambda f: {k: tf.reshape(v, [gradient_accumulation_steps, micro] + v.shape.as_list()[1:])
                         for k, v in f.items()}, num_parallel_calls=AUTOTUNE, deterministic=True)
  return without_autotune(ds.prefetch(AUTOTUNE))  # its thread stalls the end of training
