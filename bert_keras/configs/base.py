"""The base class of every config: frozen dataclasses (nested by concern) to and from dicts, JSON and
YAML. Errors name the key's path (`pretraining.training.learning_rte: unknown key ...`); checks are declared
(a scalar's annotation, `RANGES`, `CHOICES`); `validate` adds those across fields."""

from __future__ import annotations

import dataclasses
import functools
import json
import math
import operator
import os
import re
import typing
from typing import Any, Callable, ClassVar, Mapping

from bert_keras.errors import UserError
from bert_keras.json_io import decode_utf8, json_type_name, read_json_file


class ConfigError(UserError, ValueError):
  """A bad config value; `key`: the field at fault (None when several are)."""

  def __init__(self, message: str, key: str | None = None):
    super().__init__(message)
    self.key = key

  def under(self, path: str) -> "ConfigError":
    message, key = str(self), self.key
    if key is not None and message.startswith(key):
      return ConfigError(f"{path}.{message}", key=f"{path}.{key}")
    return ConfigError(f"{path}: {message}", key=path if key is None else f"{path}.{key}")


def under(path: str, make: Callable, *args: Any, **kwargs: Any) -> Any:
  """make(*args, **kwargs), its error seen from the config holding this one at `path`."""
  try:
    return make(*args, **kwargs)
  except ConfigError as e:
    raise e.under(path) from None


def require(ok: Any, message: str, key: str | None = None) -> None:
  if not ok:
    raise ConfigError(message, key=key)


def is_int(value: Any) -> bool:  # true/false is not a size, though bool is an int in Python
  return isinstance(value, int) and not isinstance(value, bool)


def is_number(value: Any) -> bool:  # finite: not NaN or infinity
  return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


_TYPES = {"int": (is_int, "an integer"), "float": (is_number, "a finite number"),
          "str": (lambda v: isinstance(v, str), "a string"),
          "bool": (lambda v: isinstance(v, bool), "true or false"),
          "Mapping": (lambda v: isinstance(v, Mapping), "an object"),
          "tuple[int, ...]": (lambda v: type(v) in (list, tuple) and all(map(is_int, v)), "a list of ints")}
_COMPARE = {">": operator.gt, ">=": operator.ge, "<": operator.lt, "<=": operator.le}


def _in_range(value: Any, bounds: str) -> bool:
  if bounds[0] in "[(":
    low, high = (float(b) for b in bounds[1:-1].split(","))
    return ((low <= value if bounds[0] == "[" else low < value)
            and (value <= high if bounds[-1] == "]" else value < high))
  op, limit = bounds.split()
  return _COMPARE[op](value, float(limit))


def field(default: Any, help_text: str) -> Any:
  """A field with its one-line help (metadata "help"), which the scripts' --help shows."""
  if isinstance(default, (dict, list)):
    return dataclasses.field(default_factory=lambda: type(default)(default), metadata={"help": help_text})
  return dataclasses.field(default=default, metadata={"help": help_text})


def read_config_file(path: str, what: str) -> dict:
  """The object in a JSON or YAML file (by its extension) of `what`, e.g. "TrainingConfig"."""
  kind = {".json": "JSON", ".yaml": "YAML", ".yml": "YAML"}.get(os.path.splitext(path)[1].lower())
  if kind is None:
    raise ConfigError(f"{path}: expected a .json, .yaml or .yml {what} file")
  what = f"{what} {kind} file"
  import yaml  # pylint: disable=import-outside-toplevel
  try:
    if kind == "JSON":
      return read_json_file(path, what, expected=dict)
    with open(path, "rb") as f:
      values = yaml.safe_load(decode_utf8(f.read(), path))  # data only: no Python tags
  except FileNotFoundError:
    raise ConfigError(f"{path}: no such {what}") from None
  except UserError as e:
    raise ConfigError(str(e)) from None
  except yaml.YAMLError as e:
    at = f":{e.problem_mark.line + 1}" if getattr(e, "problem_mark", None) else ""
    raise ConfigError(f"{path}{at}: not valid YAML ({getattr(e, 'problem', None) or e})") from None
  if not isinstance(values, dict):
    raise ConfigError(f"{path}: expected an object at the top level of the YAML, got "
                      f"{json_type_name(values)}")
  return values


@functools.lru_cache(maxsize=None)
def presets() -> dict:
  """The named model and task presets, data: bert_keras/configs/presets.yaml."""
  return read_config_file(os.path.join(os.path.dirname(__file__), "presets.yaml"), "presets")


def plain_data(value: Any) -> Any:  # JSON-ready: configs as dicts, tuples as lists
  if isinstance(value, Config):
    return value.to_dict()
  if isinstance(value, Mapping):
    return {k: plain_data(v) for k, v in value.items()}
  return [plain_data(v) for v in value] if isinstance(value, (list, tuple)) else value


def _is_config(hint: Any) -> bool:
  return isinstance(hint, type) and issubclass(hint, Config)


def _nested(hint: Any, value: Any, key: str) -> Any:
  """`value` as the config, or tuple of configs, the field's annotation `hint` names."""
  args = typing.get_args(hint)
  if typing.get_origin(hint) is tuple and args and _is_config(args[0]):  # tuple[SomeConfig, ...]
    if isinstance(value, (str, bytes, Mapping)) or not hasattr(value, "__iter__"):
      raise ConfigError(f"{key} must be a list of {args[0].__name__} objects, got "
                        f"{type(value).__name__}", key=key)
    return tuple(v if isinstance(v, Config) else under(f"{key}[{i}]", args[0].from_dict, v)
                 for i, v in enumerate(value))
  return under(key, hint.from_dict, value) if _is_config(hint) and not isinstance(value, Config) else value


class Config:
  """Base of every config dataclass: unknown keys refused, each field's type and range checked."""

  RANGES: ClassVar[Mapping[str, str]] = {}  # field -> bounds: "> 0", "[0, 1)", "[0, other_field]"
  CHOICES: ClassVar[Mapping[str, tuple]] = {}  # field -> its allowed values

  def __post_init__(self):
    for f in dataclasses.fields(self):
      value = getattr(self, f.name)
      kind = re.sub(r"^Optional\[(.*)\]$|^(.*) \| None$", r"\1\2", str(f.type))  # None allowed
      check, expected = _TYPES.get(kind, _TYPES.get(kind.split("[")[0], (None, None)))
      if check and not check(value) and not (value is None and kind != f.type):
        raise ConfigError(f"{f.name}={value!r} must be {expected}", key=f.name)
      if (kind.split("[")[0] == "tuple" and isinstance(value, list)) or kind.startswith("Mapping"):
        object.__setattr__(self, f.name, (tuple if isinstance(value, list) else dict)(value))
    for name, bounds in self._merged("RANGES").items():  # a bound may name another field
      value, other = getattr(self, name), lambda m: getattr(self, m[0])
      if value is not None and not _in_range(value, re.sub(r"[a-z_]\w*", lambda m: str(other(m)),
                                                           bounds)):
        shown = re.sub(r"[a-z_]\w*", lambda m: f"{m[0]}={other(m)!r}", bounds)
        raise ConfigError(f"{name}={value!r} must be {'in ' * (bounds[0] in '[(')}{shown}", key=name)
    for name, allowed in self._merged("CHOICES").items():
      if getattr(self, name) not in allowed:
        raise ConfigError(f"{name}={getattr(self, name)!r}; expected one of {allowed}", key=name)
    self.validate()

  @classmethod
  def _merged(cls, name: str) -> dict:  # RANGES or CHOICES of the class and its bases
    return {k: v for klass in reversed(cls.__mro__) for k, v in vars(klass).get(name, {}).items()}

  def validate(self) -> None:
    pass

  def given(self) -> list[str]:  # the fields not at their defaults
    return [f.name for f in dataclasses.fields(self) if getattr(self, f.name) != f.default]

  @classmethod
  def field_names(cls) -> list[str]:
    return [f.name for f in dataclasses.fields(cls)]

  @classmethod
  def check_keys(cls, values: Mapping[str, Any], known: Any = None) -> None:
    """The first key of `values` not in `known` (default: the fields) is an error."""
    known = cls.field_names() if known is None else known
    for key in values:
      if key not in known:
        raise ConfigError(f"{key}: unknown key in {cls.__name__}; expected one of "
                          f"{sorted(known)}", key=key)

  @classmethod
  def from_dict(cls, values: Mapping[str, Any]):
    """A config from plain data (nested configs from nested objects), never code."""
    if not isinstance(values, Mapping):
      raise ConfigError(f"{cls.__name__} must be a JSON object, got {type(values).__name__}")
    cls.check_keys(values)
    hints = typing.get_type_hints(cls)
    return cls(**{key: _nested(hints[key], value, key) for key, value in values.items()})

  def to_dict(self) -> dict:
    return {f.name: plain_data(getattr(self, f.name)) for f in dataclasses.fields(self)}

  def to_json(self) -> str:
    return json.dumps(self.to_dict(), indent=2, sort_keys=True)

  def replace(self, **changes: Any):
    self.check_keys(changes)
    return dataclasses.replace(self, **changes)

  @classmethod
  def from_file(cls, path: str, **overrides: Any):
    """The file's config, `overrides` (the flags given) over its values; errors name the file."""
    values = updated(read_config_file(path, cls.__name__), overrides)
    try:
      return cls.from_dict(values)
    except ConfigError as e:
      if e.key in set(_key_paths(overrides)):
        raise
      raise ConfigError(f"{path}: {e}", key=e.key) from None
    except TypeError as e:  # a missing field, or a wrongly typed value the checks did not foresee
      raise ConfigError(f"{path}: {e}") from None


class SectionedConfig(Config):
  """A config of sections whose fields' names are unique: their flat names (the flags)."""

  @classmethod
  def sections(cls) -> dict[str, str]:  # {flat name: its section}
    return {f: s.name for s in dataclasses.fields(cls) for f in s.default.field_names()}

  def to_flat(self) -> dict:
    return self.flat_values(self.to_dict())

  def override(self, **flat: Any):
    self.check_keys(flat, self.sections())
    changes: dict[str, dict] = {}
    for name, value in flat.items():
      changes.setdefault(self.sections()[name], {})[name] = value
    return dataclasses.replace(self, **{section: dataclasses.replace(getattr(self, section), **values)
                                        for section, values in changes.items()})

  @classmethod
  def from_flat(cls, flat: Mapping[str, Any] | None = None, **more: Any):
    return cls().override(**dict(flat or {}), **more)

  @classmethod
  def flat_values(cls, values: Mapping[str, Any]) -> dict:  # of a written object, unvalidated
    return {name: values[section][name] for name, section in cls.sections().items()
            if isinstance(values.get(section), Mapping) and name in values[section]}


def updated(values: Mapping, overrides: Mapping) -> dict:  # nested objects key by key
  out = dict(values)
  for key, value in overrides.items():
    nested = isinstance(value, Mapping) and isinstance(out.get(key), Mapping)
    out[key] = updated(out[key], value) if nested else value
  return out


def _key_paths(values: Mapping, prefix: str = ""):  # "task.learning_rate", ...
  for key, value in values.items():
    if isinstance(value, Mapping):
      yield from _key_paths(value, f"{prefix}{key}.")
    else:
      yield f"{prefix}{key}"
