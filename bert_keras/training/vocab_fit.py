"""Refuses pretraining records whose token ids do not fit the model's vocabulary, before training.

Otherwise the run dies mid-training in the embedding gather with a raw InvalidArgumentError (the
usual cause: learn_vocab.py's --vocab_size is a target; its vocab.txt has another line count). The
size comes from the shards' summary.json, else from the largest token id of each file's first
records. A model larger than the vocabulary is left alone.
"""

from __future__ import annotations

import json

import tensorflow as tf
from tensorflow.python.util import deprecation  # silence(): not public

from bert_keras.data.pretraining_records import TOKEN_ID_FEATURES
from bert_keras.errors import UserError
from bert_keras.training.input_files import InputFiles, each_file
from bert_keras.training.pretraining_input import record_options
from bert_keras.training.records_summary import (SummaryUnreadable, count_lines,
                                                 read_records_summary, split_path)

# Records read from the start of each file that no summary.json covers (one stream per file).
RECORDS_PER_FILE = 8


def summary_vocabulary(directory: str, read=read_records_summary
                       ) -> tuple[int, str, set] | None:
  """(vocabulary size, where from, the shard names it describes) from `directory`'s summary.json,
  its vocab_size or its vocab_file's line count; None when it gives no size."""
  try:
    summary = read(directory)
  except SummaryUnreadable:
    return None
  if summary is None:
    return None
  vocab_file, names = summary.vocab_file, set(summary.files)
  note = f"; {summary.vocab_note}" if summary.vocab_note else ""
  if summary.vocab_size:
    where = f"{vocab_file}, per {summary.path}{note}" if vocab_file else summary.path
    return summary.vocab_size, where, names
  if vocab_file:
    try:
      size = count_lines(vocab_file)
    except (tf.errors.OpError, OSError):
      size = 0
    if size:
      return size, f"the {size} lines of {vocab_file}, named by {summary.path}{note}", names
  return None


def largest_token_ids(files: list[str], records: int = RECORDS_PER_FILE) -> list[int | None]:
  """Per file, the largest token id of its first `records` records (None when none); a bad record
  stops the reading (pretraining_input reports those)."""

  def largest(path: str) -> int | None:
    options = record_options(path)
    best = None
    try:
      for i, raw in enumerate(tf.compat.v1.io.tf_record_iterator(path, options)):
        if i >= records:
          break
        feats = tf.train.Example.FromString(raw).features.feature
        for name in TOKEN_ID_FEATURES:
          values = feats[name].int64_list.value if name in feats else ()
          if values:
            best = max(best if best is not None else -1, max(values))
    except Exception:  # pylint: disable=broad-except  (tf.errors.OpError, protobuf DecodeError)
      pass
    return best

  with deprecation.silence():  # tf_record_iterator is deprecated for tf.data
    return each_file(largest, files)


def _fix(overrides: dict, size: int | None) -> str:
  """The --model_overrides that fits: the given overrides with vocab_size `size` (N if unknown)."""
  text = json.dumps(dict(overrides, vocab_size=size or "N"), sort_keys=True)
  if size:
    return f"pass --model_overrides='{text}'"
  text = text.replace('"N"', "N")
  return (f"pass --model_overrides='{text}' with N the line count of the vocab.txt the records "
          "were made with")


def check_vocab_fits(inputs: InputFiles, flag: str, vocab_size: int, model_preset: str,
                     model_overrides: dict) -> None:
  """UserError when the records of `inputs` hold (or their vocabulary holds) ids >= `vocab_size`,
  naming the files, the size found and the --model_overrides that fits."""
  model = (f"the model's vocab_size is {vocab_size} (model={model_preset!r} with "
           f"model_overrides {json.dumps(model_overrides, sort_keys=True)})")
  unchecked = []
  for directory, paths in sorted(inputs.by_directory().items()):
    found = summary_vocabulary(directory, inputs.summary)
    covered = {p for p in paths if found and split_path(p)[1] in found[2]}
    unchecked.extend(p for p in paths if p not in covered)
    if covered and found[0] > vocab_size:
      raise UserError(
          f"--{flag}={inputs}: the records in {directory} were made with a vocabulary of "
          f"{found[0]} tokens ({found[1]}), but {model}: their token ids up to {found[0] - 1} fall "
          f"outside its embedding table; {_fix(model_overrides, found[0])} (the line count of that "
          "vocab.txt, which learn_vocab_config.json records as vocab_tokens)")
  if not unchecked:
    return
  largest = largest_token_ids(unchecked)
  worst = max(range(len(unchecked)), key=lambda i: -1 if largest[i] is None else largest[i])
  if largest[worst] is not None and largest[worst] >= vocab_size:
    raise UserError(
        f"--{flag}={inputs}: {unchecked[worst]} holds token id {largest[worst]} (the largest "
        f"in the first {RECORDS_PER_FILE} records of each file), but {model}: ids must be below "
        f"it; {_fix(model_overrides, None)} (at least {largest[worst] + 1})")
