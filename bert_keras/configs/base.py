"""The one base class of every config: to and from plain dicts and JSON, unknown keys refused.

A config is a frozen dataclass deriving from `Config`. Its fields may themselves be configs (the
training config nests data, model, optimizer, runtime and outputs, as Model Garden nests its
experiment configs); `from_dict` builds those from nested JSON objects. A key that is not a field is
an error naming the key and the config class, on one line. A key renamed in a later version is
listed in the class's `RENAMED_KEYS` (old name -> current name): files written with the old name
still load, with a deprecation warning naming both.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import math
import typing
import warnings
from typing import Any, ClassVar, Mapping

from bert_keras.errors import UserError
from bert_keras.json_io import read_json_file


class ConfigError(UserError, ValueError):
  """A config value is missing, of the wrong type, or out of range.

  `key` is the config field at fault (None when several are), so that readers of other formats
  (bert_config.json, HF config.json) can name their own key for it.
  """

  def __init__(self, message: str, key: str | None = None):
    super().__init__(message)
    self.key = key


def is_int(value: Any) -> bool:
  """A JSON integer (bool is an int subclass in Python, but true/false is not a size)."""
  return isinstance(value, int) and not isinstance(value, bool)


def is_number(value: Any) -> bool:
  """A finite JSON number (int or float, not bool, NaN or infinity)."""
  return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def warn_deprecated(message: str) -> None:
  """The one deprecation warning of configs (FutureWarning: shown to users by default, unlike
  DeprecationWarning)."""
  warnings.warn(message, FutureWarning, stacklevel=4)


def warn_renamed(old: str, new: str, where: str) -> None:
  """The deprecation warning of a renamed key or flag."""
  warn_deprecated(f"{where}: {old!r} is deprecated, use {new!r} (the old name still works for now)")


def read_config_json(path: str, what: str) -> dict:
  """The JSON object of a config file (one shared reader: file named, line of a syntax error,
  "nested too deeply", top-level type checked); see bert_keras/json_io.py."""
  try:
    return read_json_file(path, what, expected=dict)
  except UserError as e:
    raise ConfigError(str(e)) from None


def plain_data(value: Any) -> Any:
  """JSON-ready data: configs as dicts, tuples as lists, mappings as dicts (recursively)."""
  if isinstance(value, Config):
    return value.to_dict()
  if isinstance(value, Mapping):
    return {k: plain_data(v) for k, v in value.items()}
  if isinstance(value, (list, tuple)):
    return [plain_data(v) for v in value]
  return value


def _is_config(hint: Any) -> bool:
  return isinstance(hint, type) and issubclass(hint, Config)


@functools.lru_cache(maxsize=None)
def _config_fields(cls) -> dict:
  """{field name: (the Config subclass it holds, is it a tuple of them), (tuple, True) for other
  tuples, or None}."""
  hints = typing.get_type_hints(cls)
  out = {}
  for field in dataclasses.fields(cls):
    hint = hints.get(field.name)
    args = typing.get_args(hint)
    if _is_config(hint):
      out[field.name] = (hint, False)
    elif typing.get_origin(hint) is tuple and len(args) == 2 and _is_config(args[0]):
      out[field.name] = (args[0], True)  # tuple[SomeConfig, ...]
    elif hint is tuple or typing.get_origin(hint) is tuple:
      out[field.name] = (tuple, True)  # a JSON list read back as the tuple the field holds
    else:
      out[field.name] = None
  return out


def _nested(kind: tuple, value: Any, where: str) -> Any:
  """A nested config (or a tuple of them) from plain data; configs pass through."""
  cls, many = kind
  if cls is tuple:
    return tuple(value) if isinstance(value, list) else value
  if not many:
    return value if isinstance(value, Config) else cls.from_dict(value)
  if isinstance(value, (str, bytes, Mapping)) or not hasattr(value, "__iter__"):
    raise ConfigError(f"{where} must be a list of {cls.__name__} objects, got "
                      f"{type(value).__name__}")
  return tuple(v if isinstance(v, Config) else cls.from_dict(v) for v in value)


class Config:
  """Base of every config dataclass: `to_dict`, `from_dict`, `to_json`, `from_json_file`,
  `replace`, with unknown keys refused and renamed keys accepted with a warning."""

  # Old key -> current key, read from dicts and JSON files with a deprecation warning.
  RENAMED_KEYS: ClassVar[Mapping[str, str]] = {}

  @classmethod
  def field_names(cls) -> list[str]:
    return [f.name for f in dataclasses.fields(cls)]

  @classmethod
  def _current_keys(cls, values: Mapping[str, Any]) -> dict:
    """`values` with renamed keys under their current name (warning once per key); unknown keys
    are a ConfigError naming the key and this class."""
    fields = _config_fields(cls)
    out = {}
    for key, value in values.items():
      if key in cls.RENAMED_KEYS and key not in fields:
        new = cls.RENAMED_KEYS[key]
        if new in values:
          raise ConfigError(f"{cls.__name__}: both {key!r} (deprecated) and {new!r} are given; "
                            f"keep {new!r}", key=new)
        warn_renamed(key, new, cls.__name__)
        key = new
      if key not in fields:
        raise ConfigError(f"unknown key {key!r} in {cls.__name__}; expected one of "
                          f"{sorted(fields)}", key=key)
      out[key] = value
    return out

  @classmethod
  def from_dict(cls, values: Mapping[str, Any]):
    """Builds a config from plain data (nested configs from nested objects); configs are data,
    never code."""
    if not isinstance(values, Mapping):
      raise ConfigError(f"{cls.__name__} must be a JSON object, got {type(values).__name__}")
    values = cls._current_keys(values)
    nested = _config_fields(cls)
    for key, value in values.items():
      if nested[key] is not None:
        values[key] = _nested(nested[key], value, f"{cls.__name__}.{key}")
    return cls(**values)

  def to_dict(self) -> dict:
    return {f.name: plain_data(getattr(self, f.name)) for f in dataclasses.fields(self)}

  def to_json(self) -> str:
    return json.dumps(self.to_dict(), indent=2, sort_keys=True)

  def replace(self, **changes: Any):
    """A copy with `changes`; unknown keys are refused naming the class, renamed keys warn."""
    return dataclasses.replace(self, **self._current_keys(changes))

  @classmethod
  def from_json_file(cls, path: str):
    """`from_dict` of the JSON object in `path`; every error names the file."""
    values = read_config_json(path, f"{cls.__name__} JSON file")
    try:
      return cls.from_dict(values)
    except ConfigError as e:
      raise ConfigError(f"{path}: {e}", key=e.key) from None
    except TypeError as e:  # a comparison of a wrongly typed value the checks did not foresee
      raise ConfigError(f"{path}: {e}") from None
