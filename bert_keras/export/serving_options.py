"""How an export's graphs run: the settings every export kind shares, passed along as one object."""

from __future__ import annotations

import dataclasses
from typing import Any


@dataclasses.dataclass(frozen=True)
class ServingOptions:
  """jit_compile: False (plain TF graph), True (XLA) or "auto" (XLA on single sequences).
  head_groups: head groups every block of the plain CPU graph runs side by side (both cores busy
  at small batches); None = by the model's width (kernels/host_tuning.default_head_groups).
  length_buckets: the lengths text-in calls pad to: None/"auto", "fixed" or ascending ints.
  implementation: "reference" or "cpu" (None: "cpu" on a host without GPU or TPU).
  doc_stride: for a fine-tuned squad or tagging model, pieces between window starts; 0 = the
  task's own (squad: its fine-tuning value; tagging: half a window).
  """

  jit_compile: bool | str = False
  head_groups: int | None = None
  length_buckets: Any = None
  implementation: str | None = None
  doc_stride: int = 0
