"""What a component takes and makes, as plain data (TFX's ComponentSpec): validated before anything
runs; the executor is an import path, so defining a pipeline imports no TensorFlow or Beam."""

from __future__ import annotations

import dataclasses
import importlib
import json
from typing import Any, ClassVar, Mapping, Sequence

from bert_keras.beam_runner import check_runner_available
from bert_keras.errors import UserError
from bert_keras.orchestration.artifact import Artifact

_REQUIRED = object()


@dataclasses.dataclass(frozen=True)
class Parameter:
  """One execution parameter; `is_path` ones also fingerprint the size and mtime of the files they
  name, so an edited corpus is not served from the cache."""

  type: type
  default: Any = _REQUIRED
  is_path: bool = False
  doc: str = ""

  @property
  def required(self) -> bool:
    return self.default is _REQUIRED


@dataclasses.dataclass(frozen=True)
class InputSpec:
  """One input channel: the artifact type it carries."""

  type: type
  optional: bool = False


class ComponentSpec:
  """Subclasses set INPUTS, OUTPUTS, PARAMETERS, EXECUTOR and bump VERSION when outputs change."""

  INPUTS: ClassVar[Mapping[str, InputSpec]] = {}
  OUTPUTS: ClassVar[Mapping[str, type]] = {}
  PARAMETERS: ClassVar[Mapping[str, Parameter]] = {}
  EXECUTOR: ClassVar[str] = ""  # "package.module:ClassName"
  # Part of the fingerprint: a change in what the executor produces invalidates cached artifacts.
  VERSION: ClassVar[str] = "1"
  # Which runtime options the launcher forwards to the executor (not part of the fingerprint).
  USES_BEAM: ClassVar[bool] = False
  USES_DISTRIBUTION: ClassVar[bool] = False

  @classmethod
  def type_name(cls) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"

  @classmethod
  def check_parameter_names(cls, values: Mapping[str, Any], where: str = "") -> None:
    """Every name declared; else a UserError naming the unknown ones and the declared ones."""
    unknown = sorted(set(values) - set(cls.PARAMETERS))
    if unknown:
      raise UserError(f"{where or cls.__name__}: unknown parameters {unknown}; expected a subset "
                      f"of {sorted(cls.PARAMETERS)}")

  @classmethod
  def resolve_parameters(cls, values: Mapping[str, Any], where: str = "") -> dict:
    """Fills defaults and checks names and types; UserError naming the component and parameter."""
    where = where or cls.__name__
    cls.check_parameter_names(values, where)
    resolved = {}
    for name, param in cls.PARAMETERS.items():
      if name in values:
        value = values[name]
      elif param.required:
        raise UserError(f"{where}: parameter {name!r} is required")
      else:
        value = param.default
      if value is not None and not _has_type(value, param.type):
        raise UserError(f"{where}: parameter {name}={value!r} must be of type "
                        f"{param.type.__name__}, got {type(value).__name__}")
      try:
        json.dumps(value)
      except TypeError as e:
        raise UserError(f"{where}: parameter {name}={value!r} is not JSON-serializable") from e
      resolved[name] = value
    return resolved

  @classmethod
  def check_inputs(cls, inputs: Mapping[str, Any], where: str = "") -> None:
    """Every required input present, no unknown input, and each an Artifact (or, in a pipeline, a
    Channel) of the declared artifact type."""
    where = where or cls.__name__
    unknown = sorted(set(inputs) - set(cls.INPUTS))
    if unknown:
      raise UserError(f"{where}: unknown inputs {unknown}; expected a subset of {sorted(cls.INPUTS)}")
    for name, spec in cls.INPUTS.items():
      value = inputs.get(name)
      if value is None:
        if not spec.optional:
          raise UserError(f"{where}: input {name!r} ({spec.type.TYPE_NAME}) is required")
        continue
      kind = getattr(value, "type", type(value))  # a Channel's artifact type, or the artifact's own
      if getattr(kind, "TYPE_NAME", None) != spec.type.TYPE_NAME:
        got = f"{value.TYPE_NAME} from {value.uri}" if isinstance(value, Artifact) else repr(value)
        raise UserError(f"{where}: input {name!r} must be a {spec.type.TYPE_NAME}, got {got}")

  @classmethod
  def check_runtime_options(cls, beam_pipeline_args: Sequence[str]) -> None:
    """UserError, before anything runs, when a Beam component's runner cannot run here."""
    if cls.USES_BEAM:
      check_runner_available(beam_pipeline_args)

  @classmethod
  def executor_class(cls):
    module_name, _, class_name = cls.EXECUTOR.partition(":")
    if not module_name or not class_name:
      raise ValueError(f"{cls.__name__}.EXECUTOR={cls.EXECUTOR!r}; expected 'module:ClassName'")
    return getattr(importlib.import_module(module_name), class_name)


def _has_type(value: Any, expected: type) -> bool:
  if expected is float:  # JSON and YAML hand back ints for whole numbers.
    return isinstance(value, (int, float)) and not isinstance(value, bool)
  if expected is int:
    return isinstance(value, int) and not isinstance(value, bool)
  return isinstance(value, expected)
