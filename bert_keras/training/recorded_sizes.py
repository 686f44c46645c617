"""Refuses, before training, an input file whose size is not the one its summary.json recorded.

A file cut short (an interrupted copy) otherwise fails hours into training, or never: a `.gz` shard
that lost only gzip's trailer reads without error. The sizes come from InputFiles: no file call.
"""

from __future__ import annotations

from bert_keras.errors import UserError
from bert_keras.training.input_files import InputFiles
from bert_keras.training.records_summary import SummaryUnreadable, split_path


def check_recorded_sizes(inputs: InputFiles, flag: str) -> None:
  """UserError naming the first file whose size differs from its summary.json's record (files
  without a recorded size are not checked)."""
  for path, size in zip(inputs.files, inputs.sizes):
    directory, name = split_path(path)
    try:
      summary = inputs.summary(directory)
    except SummaryUnreadable:
      continue
    recorded = summary.sizes.get(name) if summary else None
    if recorded is None or size is None or size == recorded:
      continue
    raise UserError(
        f"{path}: {size} bytes on disk, but {summary.path} records {recorded} bytes for it: the "
        f"file is {'cut short' if size < recorded else 'not the one written'} (e.g. an "
        f"interrupted copy); copy it again intact or write the records again "
        f"(--{flag}={inputs.patterns})")
