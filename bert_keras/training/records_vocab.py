"""The vocab.txt that run_pretraining copies into model_dir/export/, resolved once before training.

The exported encoder is then a complete checkpoint: fine-tuning and conversion read vocab.txt
beside it, as they do for a Google or Hugging Face release. The vocabulary is TrainingConfig's
`vocab_file` when the caller knows it (a bad one is a UserError before training), else the one the
records' summary.json names (create_pretraining_data; read by records_summary, as the vocabulary
check before training reads it). A summary that cannot be read, names no usable vocabulary, or
describes none of the files is a reason for no vocab.txt, never a failure: the run trains and
exports the encoder all the same.
"""

from __future__ import annotations

import os

import tensorflow as tf

from bert_keras.errors import UserError
from bert_keras.training.input_files import InputFiles
from bert_keras.training.records_summary import SummaryUnreadable, count_lines, split_path


def records_vocab(inputs: InputFiles, vocab_size: int) -> tuple[str | None, str]:
  """(vocab path, how it was found) when the summary.json files describing the files of `inputs`
  (as resolved, with their summaries, by input_files.resolve_input_files) name one and the same
  readable vocabulary of `vocab_size` lines (their recorded vocab_size too); else (None, why not).
  Files that no summary describes (another directory, a name its `files` do not list) do not
  count: the vocabulary check before training read their token ids. Filesystem errors
  (tf.errors.OpError, OSError) are reasons, not raised."""
  try:
    return _records_vocab(inputs, vocab_size)
  except (tf.errors.OpError, OSError) as e:
    return None, f"{type(e).__name__}: {e}"


def _records_vocab(inputs: InputFiles, vocab_size: int) -> tuple[str | None, str]:
  found = {}  # vocab path -> (summary path, recorded vocab_size, note)
  uncovered = 0
  for directory, paths in sorted(inputs.by_directory().items()):
    try:
      summary = inputs.summary(directory)
    except SummaryUnreadable as e:
      return None, str(e)
    covered = [p for p in paths if summary and split_path(p)[1] in summary.files]
    uncovered += len(paths) - len(covered)
    if not covered:
      continue
    if not summary.vocab_file:
      return None, f"{summary.path} names no vocab_file"
    # One vocabulary under two spellings (an old summary's relative path, a new one's absolute)
    # is one vocabulary: local paths are compared normalised.
    key = summary.vocab_file if "://" in summary.vocab_file else os.path.normpath(
        summary.vocab_file)
    found.setdefault(key, (summary.path, summary.vocab_size, summary.vocab_note))
  if not found:
    return None, (f"no summary.json describes the files of {inputs} (they were not made by "
                  "create_pretraining_data, or its summary.json does not list them)")
  if len(found) != 1:
    return None, f"the inputs' summary.json files name several vocabularies {sorted(found)}"
  vocab, (summary, recorded, note) = found.popitem()
  if not tf.io.gfile.exists(vocab):
    return None, f"{vocab} (named by {summary}{'; ' + note if note else ''}) does not exist here"
  lines = count_lines(vocab)
  if recorded and lines != recorded:
    return None, (f"{vocab} has {lines} entries but {summary} records vocab_size={recorded}: it "
                  "changed since the records were made")
  if lines != vocab_size:
    return None, f"{vocab} has {lines} entries but the model has vocab_size={vocab_size}"
  how = f"named by {summary}" + (f"; {note}" if note else "")
  if uncovered:
    how += f"; {uncovered} input file(s) no summary.json describes"
  return vocab, how


def export_vocab(vocab_file: str, inputs: InputFiles, vocab_size: int) -> tuple[str | None, str]:
  """(the vocab.txt to copy into export/, how it was found) or (None, why none). `vocab_file`
  (TrainingConfig.vocab_file) when given: a UserError, before training, when it cannot be read or
  its line count is not the model's `vocab_size`. Else `records_vocab`."""
  if not vocab_file:
    return records_vocab(inputs, vocab_size)
  try:
    lines = count_lines(vocab_file) if tf.io.gfile.exists(vocab_file) else None
  except (tf.errors.OpError, OSError) as e:
    raise UserError(f"vocab_file {vocab_file} cannot be read ({type(e).__name__}: {e})") from None
  if lines is None:
    raise UserError(f"vocab_file {vocab_file}: no such file")
  if lines != vocab_size:
    raise UserError(f"vocab_file {vocab_file} has {lines} entries but the model has "
                    f"vocab_size={vocab_size}: pass the vocab.txt the records were made with")
  return vocab_file, "vocab_file"
