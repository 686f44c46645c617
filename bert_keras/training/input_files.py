"""The input files of a pretraining run, resolved once (on GCS every file call is a round trip):
glob patterns -> sorted files, their sizes, and each directory's summary.json.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses

import tensorflow as tf

from bert_keras.errors import UserError
from bert_keras.input_checks import split_patterns
from bert_keras.training.records_summary import (RecordsSummary, SummaryUnreadable,
                                                 read_records_summary, split_path)


@dataclasses.dataclass(frozen=True)
class InputFiles:
  """What one input flag's patterns resolved to; str() gives the patterns, as messages name them."""
  patterns: str
  files: tuple  # the matched paths, sorted per pattern, in the order of the patterns
  sizes: tuple  # the size in bytes of each of `files`; None when it could not be looked at
  summaries: dict  # directory -> RecordsSummary, None, or the SummaryUnreadable message

  def __str__(self) -> str:
    return self.patterns

  def by_directory(self) -> dict[str, list[str]]:
    groups: dict[str, list[str]] = {}
    for path in self.files:
      groups.setdefault(split_path(path)[0], []).append(path)
    return groups

  def summary(self, directory: str) -> RecordsSummary | None:
    """`directory`'s RecordsSummary, None without one; SummaryUnreadable when unreadable."""
    found = self.summaries[directory]
    if isinstance(found, str):
      raise SummaryUnreadable(found)
    return found


def resolve_input_files(patterns: str) -> InputFiles:
  """Lists `patterns` (as list_files) and reads each directory's summary.json once."""
  matched = _matched(patterns)
  files = tuple(path for path, _ in matched)
  directories = sorted({split_path(path)[0] for path in files})
  return InputFiles(patterns=patterns, files=files, sizes=tuple(size for _, size in matched),
                    summaries=dict(zip(directories, each_file(_read_summary, directories))))


def _read_summary(directory: str) -> RecordsSummary | str | None:
  try:
    return read_records_summary(directory)
  except SummaryUnreadable as e:
    return str(e)


def list_files(patterns: str) -> list[str]:
  """Comma-separated glob patterns -> sorted files; UserError for a pattern that matches nothing or
  a directory (which would fail only inside tf.data, mid-run)."""
  return [path for path, _ in _matched(patterns)]


def _matched(patterns: str) -> list[tuple[str, int | None]]:
  files = []
  for pattern in split_patterns(patterns):
    if tf.io.gfile.isdir(pattern):
      raise UserError(f"input pattern {pattern!r} is a directory; give the record files in it, "
                      f"e.g. '{join_path(pattern, 'pretraining-*')}'")
    matched = sorted(tf.io.gfile.glob(pattern))
    if not matched:
      raise UserError(f"input pattern {pattern!r} matches no file")
    for path, (is_dir, size) in zip(matched, each_file(_stat, matched)):
      if is_dir:
        raise UserError(f"input pattern {pattern!r} matches the directory {path}; give only the "
                        f"record files, e.g. '{join_path(split_path(pattern)[0], 'pretraining-*')}'")
      files.append((path, size))
  if not files:
    raise UserError(f"no input files given (input_files={patterns!r})")
  return files


def _stat(path: str) -> tuple[bool, int | None]:
  """(is a directory, size); (False, None) when unreadable: reading it next names the error."""
  try:
    stat = tf.io.gfile.stat(path)
  except tf.errors.OpError:
    return False, None
  return bool(stat.is_directory), int(stat.length)


def each_file(fn, items: list) -> list:
  """[fn(item) for item in items] on a few threads (TF's file calls wait outside the GIL)."""
  if len(items) < 2:
    return [fn(item) for item in items]
  with concurrent.futures.ThreadPoolExecutor(min(16, len(items))) as pool:
    return list(pool.map(fn, items))


def join_path(directory: str, name: str) -> str:
  return directory.rstrip("/") + "/" + name


def check_recorded_sizes(inputs: InputFiles, flag: str) -> None:
  """UserError naming the first file whose size differs from its summary.json's record: a file cut
  short (an interrupted copy) otherwise fails hours into training, or never (a `.gz` shard that lost
  only gzip's trailer reads without error). Files without a recorded size are not checked."""
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
