"""Line-oriented file reading shared by the task readers, with 1-based line numbers for errors."""

from __future__ import annotations

import codecs
import os
from typing import Iterator

from bert_keras.errors import UserError
from bert_keras.json_io import TEXT_ENCODING


def require_file(path: str, what: str = "") -> str:
  if not os.path.isfile(path):
    hint = f" ({what})" if what else ""
    raise UserError(f"{path}: no such file{hint}")
  return path


def first_undecodable_line(path: str, encoding: str):
  """(1-based line number, UnicodeDecodeError) of the first line that does not decode, or None:
  the text-mode reader decodes in chunks, so its error names no line."""
  with open(path, "rb") as f:
    for number, raw in enumerate(f, 1):
      try:
        raw.decode(encoding)
      except UnicodeDecodeError as e:
        return number, e
  return None


def read_lines(path: str, encoding: str = "utf-8") -> Iterator[tuple[int, str]]:
  """Yields (1-based line number, line without its newline) of a text file; a UTF-8 file's
  byte-order mark is dropped (bert_keras/json_io.py: the rule of every reader)."""
  require_file(path)
  codec = TEXT_ENCODING if codecs.lookup(encoding).name == "utf-8" else encoding
  try:
    with open(path, encoding=codec, newline="") as f:
      for number, line in enumerate(f, 1):
        yield number, line.rstrip("\r\n")
  except UnicodeDecodeError as e:
    found = first_undecodable_line(path, encoding)
    if found is None:
      raise UserError(f"{path}: not valid {encoding} ({e.reason} at byte {e.start})") from None
    number, line_error = found
    raise UserError(f"{path}:{number}: not valid {encoding} ({line_error.reason} at byte "
                    f"{line_error.start} of the line)") from None


def read_tsv(path: str) -> Iterator[tuple[int, list[str]]]:
  """GLUE TSV rows: tab-separated, no quoting (the official files contain bare quote characters);
  blank lines are skipped."""
  for number, line in read_lines(path):
    if line.strip():
      yield number, line.split("\t")
