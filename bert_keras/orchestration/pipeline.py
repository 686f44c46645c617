"""A pipeline: named components with a root directory for their artifacts, in dependency order."""

from __future__ import annotations

import os
from typing import Sequence

from bert_keras.errors import UserError
from bert_keras.orchestration.component import Component


class Pipeline:
  """Components (any order; `ordered()` is a stable topological sort) and `pipeline_root`, where
  artifacts live at `<root>/<component>/<output>/`."""

  def __init__(self, name: str, pipeline_root: str, components: Sequence[Component]):
    self.name = name
    self.pipeline_root = pipeline_root
    self.components = list(components)
    names = [c.name for c in self.components]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
      raise UserError(f"pipeline {name!r}: duplicate component names {duplicates}")
    for c in self.components:
      for up in c.upstream:
        if up not in self.components:
          raise UserError(f"pipeline {name!r}: {c.name} consumes an output of {up.name}, "
                          f"which is not in the pipeline")

  def output_uri(self, component: Component, output_name: str) -> str:
    return os.path.join(self.pipeline_root, component.name, output_name)

  def ordered(self) -> list[Component]:
    remaining = list(self.components)
    done: set[int] = set()
    order = []
    while remaining:
      ready = next((c for c in remaining if all(id(u) in done for u in c.upstream)), None)
      if ready is None:
        raise UserError(f"pipeline {self.name!r}: dependency cycle among "
                        f"{[c.name for c in remaining]}")
      order.append(ready)
      done.add(id(ready))
      remaining.remove(ready)
    return order
