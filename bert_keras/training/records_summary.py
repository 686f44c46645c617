"""Reads the summary.json create_pretraining_data writes beside its shards (format:
bert_keras.data.pretraining_records): the shard names and sizes, the vocab_size and the vocab_file.
"""

from __future__ import annotations

import dataclasses
import json
import os

import tensorflow as tf

from bert_keras.data.pretraining_records import SUMMARY_NAME
from bert_keras.input_checks import is_remote


class SummaryUnreadable(Exception):
  """A summary.json that cannot be read; the message names the file and the reason."""


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
  directory, _, name = path.rstrip("/").rpartition("/")
  return directory or ".", name


def resolve_vocab_file(vocab_file: str, directory: str) -> tuple[str, str]:
  """(path, note): a relative vocab_file against the summary's directory when it is there, else
  against the working directory (the note says which)."""
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
  """`directory`'s summary.json, None without one; SummaryUnreadable when unreadable or no object."""
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
  return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def count_lines(path: str) -> int:
  """A vocab.txt's line count; OpError / OSError when unreadable (IsADirectoryError: a directory)."""
  if tf.io.gfile.isdir(path):
    raise IsADirectoryError(f"{path} is a directory")
  with tf.io.gfile.GFile(path, "rb") as f:
    return sum(1 for _ in f)
