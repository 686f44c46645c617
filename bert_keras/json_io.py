"""Reading users' JSON files (configs, datasets, requests) as plain data: a bad file is one UserError
naming the file, line and what was expected (missing, not UTF-8, bad syntax, nested deeper than
Python's recursion limit, wrong top-level type), never a traceback. A UTF-8 byte-order mark, which
Windows editors write, is dropped by every reader of a user's text (also TEXT_ENCODING).
"""

from __future__ import annotations

import json
from typing import Any

from bert_keras.errors import UserError

_TYPE_NAMES = {dict: "an object", list: "an array", str: "a string", bool: "true/false",
               int: "a number", float: "a number", type(None): "null"}


def json_type_name(value: Any) -> str:
  """'an object', 'an array', ...: a parsed value's JSON type, for messages."""
  return _TYPE_NAMES.get(type(value), type(value).__name__)


def _where(source: str, line: int | None) -> str:
  return f"{source}:{line}" if line is not None else source


# The codec of every user text file opened in text mode: UTF-8, a leading byte-order mark dropped.
TEXT_ENCODING = "utf-8-sig"


def decode_utf8(data: bytes, source: str, line: int | None = None) -> str:
  """UTF-8 text of `data`, a leading BOM dropped; UserError naming the first bad byte's line."""
  try:
    return data.decode(TEXT_ENCODING)
  except UnicodeDecodeError as e:
    at = (line or 1) + e.object.count(b"\n", 0, e.start)  # e.object: after any BOM
    raise UserError(f"{source}:{at}: not valid UTF-8 ({e.reason} at byte {e.start}); expected a "
                    "UTF-8 text file") from None


def parse_json(text: str | bytes, source: str, line: int | None = None,
               expected: type | tuple | None = None) -> Any:
  """One JSON document read from `source` (from 1-based `line`, if given); `expected`: the
  required top-level type(s), or None."""
  if isinstance(text, bytes):
    text = decode_utf8(text, source, line)
  try:
    value = json.loads(text)
  except json.JSONDecodeError as e:
    at = (line or 1) + e.lineno - 1
    raise UserError(f"{source}:{at}: not valid JSON ({e.msg}, column {e.colno})") from None
  except RecursionError:
    raise UserError(f"{_where(source, line)}: JSON nested too deeply (deeper than Python's "
                    "recursion limit); expected plain data") from None
  if expected is not None and not isinstance(value, expected):
    kinds = expected if isinstance(expected, tuple) else (expected,)
    names = " or ".join(sorted({_TYPE_NAMES.get(k, k.__name__) for k in kinds}))
    raise UserError(f"{_where(source, line)}: expected {names} at the top level of the JSON, got "
                    f"{json_type_name(value)}")
  return value


def read_json_file(path: str, what: str = "JSON file", expected: type | tuple | None = None) -> Any:
  """The parsed content of the JSON file `path` (see `parse_json`); `what` names it when missing."""
  try:
    with open(path, "rb") as f:
      data = f.read()
  except FileNotFoundError:
    raise UserError(f"{path}: no such {what}") from None
  except IsADirectoryError:
    raise UserError(f"{path}: is a directory; expected a {what}") from None
  except OSError as e:
    raise UserError(f"{path}: cannot read the {what} ({e.strerror or e})") from None
  return parse_json(data, path, expected=expected)
