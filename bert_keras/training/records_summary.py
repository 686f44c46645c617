"""The summary.json that create_pretraining_data writes beside the shards it publishes (its name and
contents: bert_keras.data.pretraining_records), read in one place for run_pretraining: the vocabulary check before training (vocab_fit), the vocab.txt copied
into export/ (records_vocab) and the size check of the shards (recorded_sizes) take what this module
reads, once per directory (input_files.InputFiles holds it).

What a summary gives: the shard names it describes (`files`) and each one's size in bytes when it
was published, the vocabulary size (`vocab_size`) and the vocab.txt (`config.vocab_file`).
create_pretraining_data records an absolute vocab_file for a local one; a summary written before
that may hold a path relative to the working directory of the run that wrote it, resolved here
against the summary's directory when the file is there, else against the current working
directory (the resolution says which).
"""

from __future__ import annotations

import dataclasses
import json
import os

import tensorflow as tf

from bert_keras.data.pretraining_records import SUMMARY_NAME



class SummaryUnreadable(Exception):
  """A summary.json exists (or cannot be looked for) but cannot be read as a summary: the message
  names the file and the reason (a filesystem error, not JSON, not an object)."""


@dataclasses.dataclass(frozen=True)
class RecordsSummary:
  """What one summary.json says about the shards beside it."""
  path: str
  files: frozenset  # the shard names (no directory) it describes
  sizes: dict  # shard name -> its recorded size in bytes (the entries of `files` that give one)
  vocab_file: str | None  # its config's vocab_file, resolved (see `resolve_vocab_file`)
  vocab_note: str  # how a relative vocab_file was resolved; "" otherwise
  vocab_size: int | None  # the recorded vocabulary size; None in summaries older than it


def split_path(path: str) -> tuple[str, str]:
  """(directory, file name) of a local or remote (gs://...) path; "." for a bare name."""
  directory, _, name = path.rstrip("/").rpartition("/")
  return directory or ".", name


def is_remote(path: str) -> bool:
  return "://" in path


def resolve_vocab_file(vocab_file: str, directory: str) -> tuple[str, str]:
  """(path, note) of a summary's vocab_file: absolute and remote paths as they are; a relative one
  against `directory` (the summary's) when the file is there, else against the working directory."""
  if is_remote(vocab_file) or os.path.isabs(vocab_file):
    return vocab_file, ""
  beside = f"{directory.rstrip('/')}/{vocab_file}"
  try:
    found = tf.io.gfile.exists(beside) and not tf.io.gfile.isdir(beside)
  except (tf.errors.OpError, OSError):
    found = False
  if found:
    return beside, (f"its relative vocab_file {vocab_file!r} resolved against the summary's "
                    f"directory {directory}, where that file is")
  resolved = os.path.abspath(vocab_file)
  return resolved, (f"its relative vocab_file {vocab_file!r} is not in the summary's directory "
                    f"{directory}: resolved against the working directory, {resolved}")


def read_records_summary(directory: str) -> RecordsSummary | None:
  """The summary.json in `directory`; None when there is none. SummaryUnreadable when it cannot be
  read (tf.errors.OpError / OSError: permissions, offline gs://, a directory of that name) or is
  not a JSON object."""
  path = f"{directory.rstrip('/')}/{SUMMARY_NAME}"
  try:
    if not tf.io.gfile.exists(path):
      return None
    with tf.io.gfile.GFile(path) as f:
      values = json.load(f)
  except (tf.errors.OpError, OSError, ValueError) as e:  # ValueError: not JSON, not UTF-8
    raise SummaryUnreadable(f"{path} cannot be read ({type(e).__name__}: {e})") from None
  if not isinstance(values, dict):
    raise SummaryUnreadable(f"{path}: expected a JSON object, got {type(values).__name__}")
  files = values.get("files")
  entries = [f for f in files if isinstance(f, dict) and isinstance(f.get("name"), str)
             ] if isinstance(files, list) else []
  names = frozenset(f["name"] for f in entries)
  sizes = {f["name"]: f["bytes"] for f in entries if _is_count(f.get("bytes"))}
  config = values.get("config") if isinstance(values.get("config"), dict) else {}
  vocab_file, note = config.get("vocab_file"), ""
  if isinstance(vocab_file, str) and vocab_file:
    vocab_file, note = resolve_vocab_file(vocab_file, directory)
  else:
    vocab_file = None
  size = values.get("vocab_size")
  size = size if _is_count(size) and size > 0 else None
  return RecordsSummary(path=path, files=names, sizes=sizes, vocab_file=vocab_file,
                        vocab_note=note, vocab_size=size)


def _is_count(value) -> bool:
  """A JSON integer >= 0 (not a bool, which Python counts as an int)."""
  return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def count_lines(path: str) -> int:
  """The number of lines of a vocab.txt (its token count). tf.errors.OpError / OSError when it
  cannot be read; a directory is an IsADirectoryError."""
  if tf.io.gfile.isdir(path):
    raise IsADirectoryError(f"{path} is a directory")
  with tf.io.gfile.GFile(path, "rb") as f:
    return sum(1 for _ in f)
