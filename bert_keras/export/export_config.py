"""What scripts/export_model.py exports, as a typed config, and the call that does it."""

from __future__ import annotations

import dataclasses
import json
import os
from typing import Optional

from bert_keras.errors import UserError
from bert_keras.json_io import read_json_file

FINETUNE_FILES = ("model.keras", "task_info.json")


@dataclasses.dataclass(frozen=True)
class ExportConfig:
  """Exactly one source: a fine-tuning output directory (model.keras, task_info.json, vocab.txt,
  as run_finetuning writes them) or an encoder checkpoint in any format bert_keras.interop reads
  (exported for feature extraction). lower_case None = the source's own casing."""

  output_dir: str
  finetune_dir: str = ""
  encoder_checkpoint: str = ""
  vocab_file: str = ""
  lower_case: Optional[bool] = None
  max_seq_length: int = 128  # encoder exports only; a task keeps its fine-tuning length
  doc_stride: int = 0  # squad and tagging windows; 0 = the task's own (tagging: half a window)
  jit_compile: bool | str = False  # True, False or "auto" (see serving_module.ServingModule)
  row_groups: int = 2  # TransformerBlock.row_groups of the plain graph; 1 = unsplit

  def __post_init__(self):
    if not self.output_dir:
      raise UserError("output_dir is required")
    if bool(self.finetune_dir) == bool(self.encoder_checkpoint):
      raise UserError("give exactly one of finetune_dir (a run_finetuning output directory) or "
                      "encoder_checkpoint")
    if self.max_seq_length < 3:
      raise UserError(f"max_seq_length={self.max_seq_length} must be >= 3")
    if self.doc_stride < 0:
      raise UserError(f"doc_stride={self.doc_stride} must be >= 0 (0 = the task's own)")
    if self.jit_compile not in (True, False, "auto"):
      raise UserError(f"jit_compile={self.jit_compile!r}; expected true, false or auto")
    if not isinstance(self.row_groups, int) or self.row_groups < 1:
      raise UserError(f"row_groups={self.row_groups!r}; expected an integer >= 1")

  def to_json(self) -> str:
    return json.dumps(dataclasses.asdict(self), indent=2, sort_keys=True) + "\n"


def _read_task_info(path: str) -> dict:
  info = read_json_file(path, "task_info.json", expected=dict)
  if "max_seq_length" not in info:
    raise UserError(f"{path}: expected a JSON object with max_seq_length (a task_info.json)")
  return info


def run_export(config: ExportConfig) -> dict:
  """Loads the source, builds the tokenizer, writes the SavedModel; returns a summary dict."""
  import keras

  from bert_keras.export import export_task_model as exporter
  from bert_keras.text.bert_tokenizer import BertTokenizer

  extra_files = {"export_config.json": config.to_json()}
  info_path = os.path.join(config.finetune_dir, "task_info.json") if config.finetune_dir else ""
  if info_path and os.path.isfile(info_path):
    task = _read_task_info(info_path).get("task", "")
    if isinstance(task, str) and task.startswith("gpt/"):
      # A run_gpt_finetuning directory (model.keras, bpe.model): the GPT-1 export path, resolved
      # through the same task registry.
      from bert_keras.gpt.gpt_runs import export_gpt_finetuned
      export_gpt_finetuned(config.finetune_dir, config.output_dir)
      return {"output_dir": config.output_dir, "kind": "gpt", "task": task, "vocab_file": "",
              "lower_case": False}
  if config.finetune_dir:
    for name in FINETUNE_FILES:
      if not os.path.isfile(os.path.join(config.finetune_dir, name)):
        raise UserError(f"{config.finetune_dir}: no {name}; expected a run_finetuning output "
                        f"directory ({', '.join(FINETUNE_FILES)}, vocab.txt)")
    info = _read_task_info(os.path.join(config.finetune_dir, "task_info.json"))
    vocab = config.vocab_file or os.path.join(config.finetune_dir,
                                              info.get("vocab_file") or "vocab.txt")
    lower_case = config.lower_case if config.lower_case is not None else info.get("lower_case")
    tokenizer = BertTokenizer(vocab_path=vocab, lower_case=True if lower_case is None
                              else bool(lower_case))
    # Registers the task heads with Keras before loading (safe mode: no code in the file runs).
    import bert_keras.tasks.heads.bert_classifier  # noqa: F401
    import bert_keras.tasks.heads.bert_feature_classifier  # noqa: F401
    import bert_keras.tasks.heads.bert_feature_tagger  # noqa: F401
    import bert_keras.tasks.heads.bert_multiple_choice  # noqa: F401
    import bert_keras.tasks.heads.bert_span_labeler  # noqa: F401
    import bert_keras.tasks.heads.bert_token_classifier  # noqa: F401
    import bert_keras.models.bert_encoder  # noqa: F401
    model = keras.saving.load_model(os.path.join(config.finetune_dir, "model.keras"),
                                    compile=False)
    encoder = getattr(model, "encoder", None)
    if encoder is not None and encoder.model_config.vocab_size != tokenizer.vocab_size:
      raise UserError(f"{vocab}: {tokenizer.vocab_size} tokens but the model's encoder has "
                      f"vocab_size={encoder.model_config.vocab_size}")
    kind = exporter.kind_for(model, info)
    exporter.export_finetuned(model, info, tokenizer, config.output_dir,
                              jit_compile=config.jit_compile, extra_files=extra_files,
                              doc_stride=config.doc_stride, row_groups=config.row_groups)
    task = info.get("task", "")
  else:
    from bert_keras.interop.loader import load_encoder
    encoder, ckpt = load_encoder(config.encoder_checkpoint)
    vocab = config.vocab_file or ckpt.vocab_path
    if not vocab:
      raise UserError(f"{config.encoder_checkpoint}: no vocab.txt beside it; pass --vocab_file")
    lower_case = config.lower_case if config.lower_case is not None else ckpt.lower_case
    tokenizer = BertTokenizer(vocab_path=vocab, lower_case=True if lower_case is None
                              else bool(lower_case))
    if tokenizer.vocab_size != encoder.model_config.vocab_size:
      raise UserError(f"{vocab}: {tokenizer.vocab_size} tokens but the encoder has "
                      f"vocab_size={encoder.model_config.vocab_size}")
    positions = encoder.model_config.max_position_embeddings
    if config.max_seq_length > positions:
      raise UserError(f"max_seq_length={config.max_seq_length} exceeds max_position_embeddings="
                      f"{positions} of {config.encoder_checkpoint}; expected --max_seq_length <= "
                      f"{positions}")
    kind, task = "encoder", "encoder"
    exporter.export_task_model(encoder, kind, tokenizer, config.output_dir,
                               max_seq_length=config.max_seq_length, task=task,
                               jit_compile=config.jit_compile, extra_files=extra_files,
                               row_groups=config.row_groups)
  return {"output_dir": config.output_dir, "kind": kind, "task": task, "vocab_file": vocab,
          "lower_case": tokenizer.lower_case}
