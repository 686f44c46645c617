"""How an export's graphs run: the settings every export kind shares, passed along as one object."""

from __future__ import annotations

import dataclasses
from typing import Any


@dataclasses.dataclass(frozen=True)
class ServingOptions:
  """jit_compile: False runs the model as a plain TF graph, True XLA-compiles it, "auto" uses XLA
  on single sequences and the plain graph on batches (ServingModule._run_model_auto).

  head_groups: groups of heads (each with its share of the feed-forward width) that every
  Transformer block of the plain graph runs side by side (kernels/cpu_transformer_block.py; same
  outputs, both cores busy at small batches; the export holds a copy of the q-k-v and widening
  kernels in the groups' layout); 1 = unsplit; None = by the model's width
  (kernels/host_tuning.default_head_groups: 2, or 1 from hidden 768 on).

  length_buckets: the lengths text-in calls pad to (the bucket of each call's longest row; in a
  batch, encoder, classifier and NER exports without XLA run each row at its own bucket): None or
  "auto" = 16, 24, 32, 48, 64, ... max_seq_length; "fixed" = max_seq_length only; or ascending
  ints (bert_keras/text/length_buckets.py).

  implementation: what the traced graphs run, "reference" or "cpu" (bert_keras/kernels; None =
  "cpu" on a host without GPU or TPU, else "reference"); head_groups apply to "cpu" only.

  doc_stride: for a fine-tuned model (export_finetuned), pieces between window starts for texts
  longer than one window (squad, tagging); 0 = the task's own (squad: its fine-tuning value;
  tagging: half a window, so every piece is labelled with at least a quarter window of context on
  each side but at the text's ends).
  """

  jit_compile: bool | str = False
  head_groups: int | None = None
  length_buckets: Any = None
  implementation: str | None = None
  doc_stride: int = 0
