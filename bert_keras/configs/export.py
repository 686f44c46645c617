"""What scripts/export_model.py exports (bert_keras.export.export_config.run_export does it)."""

from __future__ import annotations

import dataclasses
from typing import Optional

from bert_keras.configs.base import Config, require
from bert_keras.configs.finetuning import normalized_buckets


@dataclasses.dataclass(frozen=True)
class ExportConfig(Config):
  """One source: a run_finetuning output directory or an encoder checkpoint (any interop format). None:
  "not given", so that a GPT-1 fine-tuning directory refuses every BERT-only setting, not ignores it."""
  output_dir: str
  finetuned_dir: str = ""
  init_checkpoint: str = ""
  vocab_file: str = ""
  lower_case: Optional[bool] = None  # the source's
  max_seq_length: Optional[int] = None  # encoder exports only (default 128); a task keeps its own
  doc_stride: int = 0  # squad and tagging windows; 0: the task's own (tagging: half a window)
  jit_compile: bool | str = False  # or "auto" (serving_module.ServingModule)
  head_groups: Optional[int] = None  # split of the plain graph's blocks (None: by width)
  # "auto", "fixed" or ascending lengths "16,48": each row pads to its bucket (text/length_buckets.py).
  length_buckets: str = "auto"
  overwrite: bool = False  # replace an earlier export of a different task at output_dir
  # The text-in SavedModel, model.tflite (bert_keras/export/litert_export.py) instead, or both.
  format: str = "saved_model"
  quantize: str = "none"
  FORMATS = ("saved_model", "litert", "saved_model,litert")
  RANGES = dict(max_seq_length=">= 3", doc_stride=">= 0", head_groups=">= 1")
  CHOICES = dict(jit_compile=(True, False, "auto"), format=FORMATS, quantize=("none", "int8"))

  def validate(self):
    require(self.output_dir, "output_dir is required")
    require(bool(self.finetuned_dir) != bool(self.init_checkpoint), "give exactly one of finetuned_dir "
            "(a run_finetuning output directory) or init_checkpoint")
    require(self.quantize == "none" or "litert" in self.format,
            f"quantize={self.quantize}: applies to format=litert only")
    object.__setattr__(self, "length_buckets", normalized_buckets(self.length_buckets))
