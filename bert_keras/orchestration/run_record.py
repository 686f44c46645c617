"""What happened in one pipeline run: per component its status, duration, artifacts and metrics."""

from __future__ import annotations

import dataclasses
from typing import Optional

from bert_keras.atomic_io import write_json


@dataclasses.dataclass
class ComponentRecord:
  name: str
  spec: str
  status: str  # cached | succeeded | failed | not_run
  duration_s: float = 0.0
  fingerprint: str = ""
  artifacts: dict = dataclasses.field(default_factory=dict)  # output -> {"uri", "type"}
  metrics: dict = dataclasses.field(default_factory=dict)  # "output/metric" -> float
  curves: dict = dataclasses.field(default_factory=dict)  # "output/curve" -> [[step, value]]
  properties: dict = dataclasses.field(default_factory=dict)  # "output/key" -> value
  error: str = ""


@dataclasses.dataclass
class RunRecord:
  pipeline: str
  run_id: str
  pipeline_root: str
  started: float
  finished: float = 0.0
  status: str = "running"  # succeeded | failed
  components: list = dataclasses.field(default_factory=list)
  report_dir: str = ""

  @property
  def duration_s(self) -> float:
    return self.finished - self.started

  def component(self, name: str) -> Optional[ComponentRecord]:
    return next((c for c in self.components if c.name == name), None)

  def write_json(self, path: str) -> None:
    write_json(path, dict(dataclasses.asdict(self), duration_s=self.duration_s), default=str)

  def format_table(self) -> str:
    """A plain-text table: one row per component, the metrics it produced in the last column."""
    rows = [("component", "status", "time", "metrics")]
    for c in self.components:
      metrics = ", ".join(f"{k.split('/', 1)[-1]}={f'{v:.4g}' if isinstance(v, float) else v}"
                          for k, v in sorted(c.metrics.items()))
      if c.error:
        metrics = (metrics + "  " if metrics else "") + f"ERROR {c.error}"
      rows.append((c.name, c.status, f"{c.duration_s:.1f}s", metrics))
    widths = [max(len(r[i]) for r in rows) for i in range(3)]
    lines = []
    for i, r in enumerate(rows):
      lines.append("  ".join(r[j].ljust(widths[j]) for j in range(3)) + "  " + r[3])
      if i == 0:
        lines.append("  ".join("-" * w for w in widths) + "  " + "-" * 7)
    lines.append(f"{self.pipeline}: {self.status} in {self.duration_s:.1f}s (run {self.run_id})")
    return "\n".join(lines)
