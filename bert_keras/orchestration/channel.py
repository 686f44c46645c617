"""A typed reference to one output of one component: how pipeline edges are declared."""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True)
class Channel:
  """`producer.outputs["model"]` is a Channel; passing it as an input makes an edge."""

  producer: "object"  # bert_keras.orchestration.component.Component (kept loose to avoid a cycle)
  output_name: str
  type: type

  def __repr__(self) -> str:
    return f"Channel({self.producer.name}.{self.output_name}: {self.type.TYPE_NAME})"
