"""The vocab.txt run_pretraining copies into export/ (so it is a complete checkpoint), resolved
before training: `vocab_file` when given (a bad one is a UserError), else the one the records'
summary.json names; none found is a warning, never a failure.
"""

from __future__ import annotations

import os

import tensorflow as tf

from bert_keras.errors import UserError
from bert_keras.training.input_files import InputFiles
from bert_keras.training.records_summary import SummaryUnreadable, count_lines, split_path


def records_vocab(inputs: InputFiles, vocab_size: int) -> tuple[str | None, str]:
  """(vocab path, how found) when the inputs' summaries name one readable vocabulary of
  `vocab_size` lines; else (None, why not). Filesystem errors are reasons, not raised."""
  try:
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
      # Local paths compared normalised: one vocabulary under two spellings is one.
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
  except (tf.errors.OpError, OSError) as e:
    return None, f"{type(e).__name__}: {e}"


def export_vocab(vocab_file: str, inputs: InputFiles, vocab_size: int) -> tuple[str | None, str]:
  """`vocab_file` (UserError when unreadable or not `vocab_size` lines), else `records_vocab`."""
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
