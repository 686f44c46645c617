"""Reading JSON files that come from users (configs, datasets, request files) as plain data.

Every reader of a user's JSON goes through here, so each bad file gets the same one-line UserError
naming the file and what was expected, instead of a traceback:

  missing file          `<file>: no such <what>`
  not UTF-8             `<file>:<line>: not valid UTF-8 (invalid start byte at byte 17)`
  syntax error          `<file>:<line>: not valid JSON (Expecting ',' delimiter, column 5)`
  nested too deeply     `<file>: JSON nested too deeply (Python's recursion limit); expected ...`
  wrong top-level type  `<file>: expected an object at the top level of the JSON, got an array`

A UTF-8 byte-order mark (U+FEFF, which Windows editors write at the start of a file) is accepted
and dropped by every reader of a user's text: `decode_utf8` here, and `TEXT_ENCODING` for files
opened in text mode (the task readers of bert_keras/tasks/readers.py and swag.py).

The standard library's parser recurses once per nesting level, so `"[" * 100000` would otherwise
end in a RecursionError; JSON is only ever data here (never code, never pickles).

  values = read_json_file(path, "model config file", expected=dict)
  record = parse_json(line, path, line=12, expected=dict)   # one line of a JSON-lines file
"""

from __future__ import annotations

import json
from typing import Any

from bert_keras.errors import UserError

_TYPE_NAMES = {dict: "an object", list: "an array", str: "a string", bool: "true/false",
               int: "a number", float: "a number", type(None): "null"}


def json_type_name(value: Any) -> str:
  """'an object', 'an array', ...: the JSON name of a parsed value's type, for messages."""
  return _TYPE_NAMES.get(type(value), type(value).__name__)


def _where(source: str, line: int | None) -> str:
  return f"{source}:{line}" if line is not None else source


# The codec of every user text file opened in text mode: UTF-8, a leading byte-order mark dropped.
TEXT_ENCODING = "utf-8-sig"


def decode_utf8(data: bytes, source: str, line: int | None = None) -> str:
  """UTF-8 text of `data`, a leading byte-order mark dropped; a UserError names the 1-based line
  of the first undecodable byte."""
  try:
    return data.decode(TEXT_ENCODING)
  except UnicodeDecodeError as e:
    at = (line or 1) + e.object.count(b"\n", 0, e.start)  # e.object: after any BOM
    raise UserError(f"{source}:{at}: not valid UTF-8 ({e.reason} at byte {e.start}); expected a "
                    "UTF-8 text file") from None


def parse_json(text: str | bytes, source: str, line: int | None = None,
               expected: type | tuple | None = None) -> Any:
  """Parses one JSON document read from `source` (starting at 1-based `line`, if given).

  expected: the required top-level type(s) (dict, list, ...), or None for any value.
  """
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
