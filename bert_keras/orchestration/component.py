"""A pipeline node (one spec, a unique name, inputs, parameter values) and its output channels."""

from __future__ import annotations

import dataclasses
import re
from typing import Any, Mapping, Optional

from bert_keras.errors import UserError
from bert_keras.orchestration.artifact import Artifact

_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_.-]*$")


@dataclasses.dataclass(frozen=True)
class Channel:
  """`producer.outputs["model"]`: one output of one component; passed as an input, an edge."""

  producer: "Component"
  output_name: str
  type: type

  def __repr__(self) -> str:
    return f"Channel({self.producer.name}.{self.output_name}: {self.type.TYPE_NAME})"


class Component:
  """A component in a pipeline: `inputs` maps names to Channels (edges) or existing Artifacts;
  parameters are validated when the pipeline is defined, not an hour into the run."""

  def __init__(self, spec_class, name: str, inputs: Optional[Mapping[str, Any]] = None,
               parameters: Optional[Mapping[str, Any]] = None):
    if not _NAME.match(name or ""):
      raise UserError(f"component name {name!r} must match {_NAME.pattern}")
    self.spec_class = spec_class
    self.name = name
    self.inputs: dict[str, Any] = {}
    for key, value in (inputs or {}).items():
      if key not in spec_class.INPUTS:
        raise UserError(f"{name}: unknown input {key!r}; expected one of {sorted(spec_class.INPUTS)}")
      if value is None:
        continue
      expected = spec_class.INPUTS[key].type
      got = value.type if isinstance(value, Channel) else type(value)
      if not isinstance(value, (Channel, Artifact)) or got.TYPE_NAME != expected.TYPE_NAME:
        raise UserError(f"{name}: input {key!r} must be a {expected.TYPE_NAME} channel, got {value!r}")
      self.inputs[key] = value
    for key, spec in spec_class.INPUTS.items():
      if not spec.optional and key not in self.inputs:
        raise UserError(f"{name}: input {key!r} ({spec.type.TYPE_NAME}) is not connected")
    self.parameters = spec_class.resolve_parameters(parameters or {}, where=name)
    self.outputs = {out: Channel(self, out, t) for out, t in spec_class.OUTPUTS.items()}

  @property
  def upstream(self) -> list["Component"]:
    return [c.producer for c in self.inputs.values() if isinstance(c, Channel)]

  def __repr__(self) -> str:
    return f"Component({self.name}: {self.spec_class.__name__})"
