"""Refuses, before training, an input file whose size is not the one its summary.json recorded.

A record file cut short (an interrupted copy, a full disk) passes the first-record check and fails
only when tf.data reaches the cut (a DataLossError mid-run, at corpus scale hours into training), or
never: a `.gz` shard that lost no more than gzip's trailer reads without an error, so a copy that
stopped there goes unnoticed. create_pretraining_data records every published shard's final size on
disk in summary.json (`files`: [{"name", "bytes"}], measured after the shard was closed and moved
into place, for compression "none" and "gzip" alike), so the size of each file the summary lists is
compared with it: the sizes come from the one stat per file of input_files.resolve_input_files, so
the check itself makes no file call.
"""

from __future__ import annotations

from bert_keras.errors import UserError
from bert_keras.training.input_files import InputFiles
from bert_keras.training.records_summary import SummaryUnreadable, split_path


def check_recorded_sizes(inputs: InputFiles, flag: str) -> None:
  """UserError naming the first file of `inputs` (given by `--flag`) whose size differs from the
  bytes its directory's summary.json records for it, with both sizes.

  Files no summary.json lists are not checked: nothing says what their size should be (records made
  elsewhere, a summary that cannot be read, an entry without "bytes", a file that could not be
  stat'ed, which reading it names instead)."""
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
