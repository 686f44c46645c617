"""The one base class of every config: to and from plain dicts, JSON and YAML files, unknown keys
refused, the declared types and ranges checked.

A config is a frozen dataclass deriving from `Config`. Its fields may themselves be configs (the
training config nests data, model, optimizer, runtime and outputs, as Model Garden nests its
experiment configs); `from_dict` builds those from nested JSON objects. Every error names the key's
path from the outermost config, on one line: `pretraining.training.learning_rte: unknown key`.
A scalar field's annotation (int, float, str, bool) is checked, `RANGES` gives the bounds of
numeric fields ("> 0", ">= 1", "[0, 1)") and `CHOICES` the values of enumerations; `validate`
checks what spans several fields.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import math
import os
import operator
import re
import typing
from typing import Any, ClassVar, Mapping

from bert_keras.errors import UserError
from bert_keras.json_io import decode_utf8, json_type_name, read_json_file


class ConfigError(UserError, ValueError):
  """A config value is missing, of the wrong type, or out of range.

  `key` is the config field at fault (None when several are), so that readers of other formats
  (bert_config.json, HF config.json) can name their own key for it.
  """

  def __init__(self, message: str, key: str | None = None):
    super().__init__(message)
    self.key = key

  def under(self, path: str) -> "ConfigError":
    """The same error as seen from the config holding this one at `path` (e.g. "pretraining")."""
    message = str(self)
    if self.key is not None and message.startswith(self.key):
      return ConfigError(f"{path}.{message}", key=f"{path}.{self.key}")
    return ConfigError(f"{path}: {message}", key=path if self.key is None else f"{path}.{self.key}")


def is_int(value: Any) -> bool:
  """A JSON integer (bool is an int subclass in Python, but true/false is not a size)."""
  return isinstance(value, int) and not isinstance(value, bool)


def is_number(value: Any) -> bool:
  """A finite JSON number (int or float, not bool, NaN or infinity)."""
  return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


# Declared field type (a string: `from __future__ import annotations`) -> (check, what is expected).
_TYPES = {"int": (is_int, "an integer"), "float": (is_number, "a finite number"),
          "str": (lambda v: isinstance(v, str), "a string"),
          "bool": (lambda v: isinstance(v, bool), "true or false")}
_COMPARE = {">": operator.gt, ">=": operator.ge, "<": operator.lt, "<=": operator.le}


def in_range(value: Any, bounds: str) -> bool:
  """Whether `value` lies within `bounds`: "> 0", ">= 1", or an interval "[0, 1)", "(0, 1]"."""
  if bounds[0] in "[(":
    low, high = (float(b) for b in bounds[1:-1].split(","))
    return ((low <= value if bounds[0] == "[" else low < value)
            and (value <= high if bounds[-1] == "]" else value < high))
  op, limit = bounds.split()
  return _COMPARE[op](value, float(limit))


def field(default: Any, help_text: str) -> Any:
  """A field with its one-line help (metadata "help"): the one place that documents it, read by
  the scripts' --help."""
  if isinstance(default, (dict, list)):
    return dataclasses.field(default_factory=lambda: type(default)(default),
                             metadata={"help": help_text})
  return dataclasses.field(default=default, metadata={"help": help_text})


CONFIG_FILE_TYPES = {".json": "JSON", ".yaml": "YAML", ".yml": "YAML"}


def read_config_file(path: str, what: str) -> dict:
  """The object of a config file of `what` (e.g. "TrainingConfig"), JSON or YAML as its extension
  says (one shared reader: file named, line of a syntax error, top-level type checked); see
  bert_keras/json_io.py."""
  kind = CONFIG_FILE_TYPES.get(os.path.splitext(path)[1].lower())
  if kind is None:
    raise ConfigError(f"{path}: expected a .json, .yaml or .yml {what} file")
  what = f"{what} {kind} file"
  try:
    if kind == "JSON":
      return read_json_file(path, what, expected=dict)
    import yaml  # pylint: disable=import-outside-toplevel
    try:
      with open(path, "rb") as f:
        values = yaml.safe_load(decode_utf8(f.read(), path))  # data only: no Python tags
    except FileNotFoundError:
      raise UserError(f"{path}: no such {what}") from None
    except yaml.YAMLError as e:
      mark = getattr(e, "problem_mark", None)
      at = f":{mark.line + 1}" if mark else ""
      raise UserError(f"{path}{at}: not valid YAML ({getattr(e, 'problem', None) or e})") from None
    if not isinstance(values, dict):
      raise UserError(f"{path}: expected an object at the top level of the YAML, got "
                      f"{json_type_name(values)}")
    return values
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
def _field_kinds(cls) -> dict:
  """{field name: (the Config subclass it holds, is it a tuple of them), "tuple" for other tuples
  (a JSON list is read back as one), or None}."""
  out = {}
  for name, hint in typing.get_type_hints(cls).items():
    args = typing.get_args(hint)
    if _is_config(hint):
      out[name] = (hint, False)
    elif typing.get_origin(hint) is tuple and len(args) == 2 and _is_config(args[0]):
      out[name] = (args[0], True)  # tuple[SomeConfig, ...]
    elif hint is tuple or typing.get_origin(hint) is tuple:
      out[name] = "tuple"
    else:
      out[name] = None
  return {f.name: out[f.name] for f in dataclasses.fields(cls)}


def _nested(cls: type, value: Any, key: str) -> tuple:
  """A tuple of `cls` configs from a list of objects; configs pass through."""
  if isinstance(value, (str, bytes, Mapping)) or not hasattr(value, "__iter__"):
    raise ConfigError(f"{key} must be a list of {cls.__name__} objects, got "
                      f"{type(value).__name__}", key=key)
  out = []
  for i, v in enumerate(value):
    try:
      out.append(v if isinstance(v, Config) else cls.from_dict(v))
    except ConfigError as e:
      raise e.under(f"{key}[{i}]") from None
  return tuple(out)


class Config:
  """Base of every config dataclass: `to_dict`, `from_dict`, `to_json`, `from_file`,
  `replace`, with unknown keys refused and each field's type and range checked."""

  # Field name -> its bounds (see `in_range`) or its allowed values, checked on construction.
  RANGES: ClassVar[Mapping[str, str]] = {}
  CHOICES: ClassVar[Mapping[str, tuple]] = {}

  def __post_init__(self):
    kinds = _field_kinds(type(self))
    for field in dataclasses.fields(self):
      value = getattr(self, field.name)
      # "Optional[int]" and "int | None": None or an int.
      kind = re.sub(r"^Optional\[(.*)\]$|^(.*) \| None$", r"\1\2", str(field.type))
      check, expected = _TYPES.get(kind, (None, None))
      if check and not check(value) and not (value is None and kind != field.type):
        raise ConfigError(f"{field.name}={value!r} must be {expected}", key=field.name)
      if kinds[field.name] == "tuple" and isinstance(value, list):
        object.__setattr__(self, field.name, tuple(value))
    for name, bounds in self._merged("RANGES").items():
      value = getattr(self, name)
      if value is not None and not in_range(value, bounds):
        raise ConfigError(f"{name}={value!r} must be {'in ' * (bounds[0] in '[(')}{bounds}",
                          key=name)
    for name, allowed in self._merged("CHOICES").items():
      if getattr(self, name) not in allowed:
        raise ConfigError(f"{name}={getattr(self, name)!r}; expected one of {allowed}", key=name)
    self.validate()

  @classmethod
  def _merged(cls, name: str) -> dict:
    """RANGES or CHOICES of this class and its bases (a mixin's included)."""
    return {k: v for klass in reversed(cls.__mro__) for k, v in vars(klass).get(name, {}).items()}

  def validate(self) -> None:
    """Checks across fields; each config adds its own."""

  def given(self) -> list[str]:
    """The fields not at their defaults."""
    return [f.name for f in dataclasses.fields(self) if getattr(self, f.name) != f.default]

  @classmethod
  def field_names(cls) -> list[str]:
    return [f.name for f in dataclasses.fields(cls)]

  @classmethod
  def check_keys(cls, values: Mapping[str, Any]) -> None:
    """ConfigError naming the first key of `values` that is not a field of this class."""
    for key in values:
      if key not in _field_kinds(cls):
        raise ConfigError(f"{key}: unknown key in {cls.__name__}; expected one of "
                          f"{sorted(_field_kinds(cls))}", key=key)

  @classmethod
  def from_dict(cls, values: Mapping[str, Any]):
    """Builds a config from plain data (nested configs from nested objects); configs are data,
    never code."""
    if not isinstance(values, Mapping):
      raise ConfigError(f"{cls.__name__} must be a JSON object, got {type(values).__name__}")
    cls.check_keys(values)
    values = dict(values)
    for key, kind in _field_kinds(cls).items():
      if isinstance(kind, tuple) and key in values and not isinstance(values[key], Config):
        try:
          values[key] = _nested(kind[0], values[key], key) if kind[1] else kind[0].from_dict(
              values[key])
        except ConfigError as e:
          raise (e if kind[1] else e.under(key)) from None
    return cls(**values)

  def to_dict(self) -> dict:
    return {f.name: plain_data(getattr(self, f.name)) for f in dataclasses.fields(self)}

  def to_json(self) -> str:
    return json.dumps(self.to_dict(), indent=2, sort_keys=True)

  def replace(self, **changes: Any):
    """A copy with `changes`; unknown keys are refused naming the class."""
    self.check_keys(changes)
    return dataclasses.replace(self, **changes)

  @classmethod
  def from_file(cls, path: str, **overrides: Any):
    """`from_dict` of the JSON or YAML object in `path` (by its extension), `overrides` (the flags
    given; nested configs as dicts of their fields) replacing its values; an error in the file's
    own values names the file and the key's path."""
    values = _updated(read_config_file(path, cls.__name__), overrides)
    try:
      return cls.from_dict(values)
    except ConfigError as e:
      if e.key in set(_key_paths(overrides)):
        raise
      raise ConfigError(f"{path}: {e}", key=e.key) from None
    except TypeError as e:  # a missing field, or a wrongly typed value the checks did not foresee
      raise ConfigError(f"{path}: {e}") from None


def _updated(values: Mapping, overrides: Mapping) -> dict:
  """`values` with `overrides`, nested objects updated key by key."""
  out = dict(values)
  for key, value in overrides.items():
    nested = isinstance(value, Mapping) and isinstance(out.get(key), Mapping)
    out[key] = _updated(out[key], value) if nested else value
  return out


def _key_paths(values: Mapping, prefix: str = ""):
  """The paths ("task.learning_rate") of the leaves of nested `values`."""
  for key, value in values.items():
    if isinstance(value, Mapping):
      yield from _key_paths(value, f"{prefix}{key}.")
    else:
      yield f"{prefix}{key}"
