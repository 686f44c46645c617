"""The executor base class: the code that does one component's work (TFX's BaseExecutor)."""

from __future__ import annotations

import dataclasses
import sys
import time
from typing import Callable, Mapping, Sequence

from bert_keras.orchestration.artifact import Artifact


def print_log(message: str) -> None:
  print(message, file=sys.stderr, flush=True)


@dataclasses.dataclass
class ExecutionContext:
  """Runtime options of one execution, not part of the cache key (reaching only USES_BEAM /
  USES_DISTRIBUTION specs)."""

  component_name: str = ""
  beam_pipeline_args: Sequence[str] = ()
  distribution_strategy: str = "default"
  tmp_dir: str = ""
  log_fn: Callable[[str], None] = print_log

  def log(self, message: str) -> None:
    self.log_fn(f"[{time.strftime('%H:%M:%S')}] {self.component_name}: {message}")


class BaseExecutor:
  """Subclasses implement `run`: read `inputs`, write under each (staged) `outputs[name].uri`,
  set metrics, curves and properties on them; a UserError stops the run with its one line."""

  def __init__(self, context: ExecutionContext | None = None):
    self.context = context or ExecutionContext()

  def log(self, message: str) -> None:
    self.context.log(message)

  def run(self, inputs: Mapping[str, Artifact], outputs: Mapping[str, Artifact],
          parameters: Mapping) -> None:
    raise NotImplementedError(f"{type(self).__name__}.run")
