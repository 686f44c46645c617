"""A pipeline node (one spec, a unique name, inputs, parameter values) and its output channels."""

from __future__ import annotations

import dataclasses
import re
from typing import Any, Mapping, Optional

from bert_keras.errors import UserError

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
    spec_class.check_inputs(inputs or {}, where=name)
    self.inputs = {key: value for key, value in (inputs or {}).items() if value is not None}
    self.parameters = spec_class.resolve_parameters(parameters or {}, where=name)
    self.outputs = {out: Channel(self, out, t) for out, t in spec_class.OUTPUTS.items()}

  @property
  def upstream(self) -> list["Component"]:
    return [c.producer for c in self.inputs.values() if isinstance(c, Channel)]

  def __repr__(self) -> str:
    return f"Component({self.name}: {self.spec_class.__name__})"
