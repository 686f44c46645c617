"""The export of scripts/export_model.py: `run_export(ExportConfig)` (bert_keras/configs/export.py)."""

from __future__ import annotations

import dataclasses
import json
import os
from typing import Optional

from bert_keras.atomic_io import check_output_dir as check_writable_dir, gfile_write_text, staged_dir
from bert_keras.errors import UserError
from bert_keras.json_io import read_json_file
from bert_keras.output_task import check_earlier_task
from bert_keras.configs.export import ExportConfig
from bert_keras.export.serving_options import ServingOptions

FINETUNE_FILES = ("model.keras", "task_info.json")
DEFAULT_MAX_SEQ_LENGTH = 128  # encoder exports


def _read_task_info(path: str) -> dict:
  info = read_json_file(path, "task_info.json", expected=dict)
  if "max_seq_length" not in info:
    raise UserError(f"{path}: expected a JSON object with max_seq_length (a task_info.json)")
  return info


def _resolved(path: str) -> str:
  """A path compared by where it points: local paths through symlinks, URLs as written."""
  path = path.rstrip("/") or "/"
  return path if "://" in path else os.path.realpath(path)


def _earlier_task(output_dir: str, isfile) -> Optional[str]:
  """The task of the earlier export at output_dir, from its export_info.json; None if unrecorded."""
  import tensorflow as tf  # pylint: disable=g-import-not-at-top

  path = output_dir.rstrip("/") + "/assets.extra/export_info.json"
  if not isfile(path):
    return None
  try:
    with tf.io.gfile.GFile(path, "rb") as f:
      task = json.loads(f.read()).get("task")
  except (ValueError, AttributeError, tf.errors.OpError):
    return None
  return task if isinstance(task, str) else None


def check_output_dir(config: ExportConfig, task: Optional[str] = None) -> None:
  """UserError before anything is loaded or written, for an output_dir whose replacement (the
  export replaces it whole) would lose data: a source, a file, a non-empty non-export directory;
  an export of another task than `task` (None: not known) only with config.overwrite."""
  output_dir = _resolved(config.output_dir)
  for flag in ("finetuned_dir", "init_checkpoint", "vocab_file"):
    source = getattr(config, flag)
    if not source:
      continue
    resolved = _resolved(source)
    if resolved == output_dir or resolved.startswith(output_dir.rstrip("/") + "/"):
      relation = "is" if resolved == output_dir else "contains"
      raise UserError(f"output_dir={config.output_dir} {relation} the {flag} {source}, which the "
                      "export would replace and delete; "
                      "expected a new directory or an earlier export")
  check_writable_dir(config.output_dir)  # a file, or a path under one: refused
  remote = "://" in config.output_dir  # gs://, s3://, ...: through TensorFlow's file systems
  if remote:
    import tensorflow as tf  # pylint: disable=g-import-not-at-top

    isdir, listdir, has_file = tf.io.gfile.isdir, tf.io.gfile.listdir, tf.io.gfile.exists
  else:
    isdir, listdir, has_file = os.path.isdir, os.listdir, os.path.isfile
  if not isdir(config.output_dir):
    if remote and has_file(config.output_dir):  # (a local file: check_writable_dir refused it)
      raise UserError(f"output_dir={config.output_dir} is a file: expected a directory (new, "
                      "empty or an earlier export)")
    return
  if not listdir(config.output_dir):
    return
  if not any(has_file(f"{config.output_dir.rstrip('/')}/{name}")
             for name in ("saved_model.pb", "model.tflite")):
    raise UserError(f"output_dir={config.output_dir} is a non-empty directory that is not an "
                    "earlier export (no saved_model.pb or model.tflite); the export would replace "
                    "and delete it: expected a new or empty directory or an earlier export")
  if task is not None:
    check_earlier_task(f"output_dir={config.output_dir}", "an export",
                       _earlier_task(config.output_dir, has_file), task, config.overwrite)


def _options(config: ExportConfig, max_seq_length: int) -> ServingOptions:
  """How the export's graphs run, as `config` says, for a model of `max_seq_length`."""
  from bert_keras.tasks.length_batches import batch_lengths
  return ServingOptions(jit_compile=config.jit_compile, head_groups=config.head_groups,
                        length_buckets=batch_lengths(max_seq_length, config.length_buckets),
                        doc_stride=config.doc_stride)


def run_export(config: ExportConfig) -> dict:
  """Checks output_dir, loads the source, builds the tokenizer, writes the SavedModel; returns a
  summary dict."""
  from bert_keras import keras_classes
  from bert_keras.export import export_task_model as exporter
  from bert_keras.export import litert_export
  from bert_keras.tasks.finetuning import bert_tokenizer, check_sequence_length
  from bert_keras.tasks.registry import get_task_class, task_names

  info_path = os.path.join(config.finetuned_dir, "task_info.json") if config.finetuned_dir else ""
  info = _read_task_info(info_path) if info_path and os.path.isfile(info_path) else None
  # None: unknown until the source is checked below (no task-change check then).
  new_task = info.get("task", "") if info is not None else (
      "encoder" if config.init_checkpoint else None)
  check_output_dir(config, new_task)

  if new_task is not None and config.finetuned_dir:
    task = new_task
    export_run = (getattr(get_task_class(task), "export_run", None)
                  if isinstance(task, str) and task in task_names() else None)
    if export_run is not None:
      # A GPT-1 fine-tuning directory (model.keras, bpe.model), resolved through the task
      # registry. Its BPE tokenizer, length and plain-graph serving are fixed by the run, so a
      # BERT-only setting is refused instead of silently ignored.
      bert_only = [name for name in config.given() if name not in (
          "output_dir", "finetuned_dir", "init_checkpoint", "overwrite")]
      if bert_only:
        raise UserError(f"{config.finetuned_dir}: a GPT-1 fine-tuning directory (task {task!r}); "
                        f"{', '.join(bert_only)} apply to BERT exports only: leave them unset")
      export_run(config.finetuned_dir, config.output_dir,
                 {"export_config.json": config.to_json() + "\n"})
      return {"output_dir": config.output_dir, "kind": "gpt", "task": task, "vocab_file": "",
              "lower_case": False}
  if config.finetuned_dir and config.max_seq_length is not None:
    raise UserError(f"--max_seq_length={config.max_seq_length}: applies to encoder exports only; "
                    f"a fine-tuned task ({config.finetuned_dir}) keeps the length it was trained with "
                    "(its task_info.json): leave it unset")
  if config.finetuned_dir:
    for name in FINETUNE_FILES:
      if not os.path.isfile(os.path.join(config.finetuned_dir, name)):
        if name == "model.keras" and os.path.isfile(info_path):
          raise UserError(f"{config.finetuned_dir}: no model.keras beside its task_info.json (a "
                          "run_finetuning run with --save_model=false); rerun with "
                          "--save_model=true to export it")
        raise UserError(f"{config.finetuned_dir}: no {name}; expected a run_finetuning output "
                        f"directory ({', '.join(FINETUNE_FILES)}, vocab.txt)")
    vocab = config.vocab_file or os.path.join(config.finetuned_dir,
                                              info.get("vocab_file") or "vocab.txt")
    # Registers the task heads with Keras before loading (safe mode: no code in the file runs).
    model = keras_classes.load_model(os.path.join(config.finetuned_dir, "model.keras"),
                                     compile=False)
    tokenizer = bert_tokenizer(vocab, getattr(model, "encoder", None), config.lower_case,
                               info.get("lower_case"))
    if "litert" in config.format:
      litert_export.check_kind(exporter.kind_for(model, info))
    module = exporter.build_finetuned(model, info, tokenizer,
                                      _options(config, int(info["max_seq_length"])))
  else:
    config = dataclasses.replace(
        config, max_seq_length=(DEFAULT_MAX_SEQ_LENGTH if config.max_seq_length is None
                                else config.max_seq_length))
    from bert_keras.interop.loader import load_encoder
    encoder, ckpt = load_encoder(config.init_checkpoint)
    vocab = config.vocab_file or ckpt.vocab_path
    if not vocab:
      raise UserError(f"{config.init_checkpoint}: no vocab.txt beside it; pass --vocab_file")
    tokenizer = bert_tokenizer(vocab, encoder, config.lower_case, ckpt.lower_case)
    check_sequence_length(config.max_seq_length, encoder.model_config, config.init_checkpoint)
    module = exporter.build_serving_module(encoder, "encoder", tokenizer, config.max_seq_length,
                                           task="encoder",
                                           options=_options(config, config.max_seq_length))
  files = {"export_config.json": resolved_config(config, module.metadata(), vocab).to_json() + "\n"}
  if "litert" in config.format:  # converted first: a failure leaves an earlier export as it was
    tflite = litert_export.litert_model(
        module.model, module.kind_name, tokenizer, module.seq_length, labels=module.label_list,
        task=module.task_name, extra=module.metadata(), length_buckets=module.buckets,
        quantize=config.quantize)
  if "saved_model" not in config.format:  # model.tflite and assets.extra/ as a SavedModel's
    files[exporter.EXPORT_INFO] = json.dumps(module.metadata(), indent=2, ensure_ascii=False) + "\n"
    with staged_dir(config.output_dir.rstrip("/")) as stage:
      gfile_write_text(os.path.join(stage, litert_export.LITERT_FILE), tflite)
      exporter.write_extra_files(stage, files)
  else:
    exporter.save_serving_module(module, config.output_dir, extra_files=files)
    if "litert" in config.format:
      gfile_write_text(os.path.join(config.output_dir, litert_export.LITERT_FILE), tflite)
  return {"output_dir": config.output_dir, "kind": module.kind_name, "task": module.task_name,
          "vocab_file": vocab, "lower_case": tokenizer.lower_case}


def resolved_config(config: ExportConfig, metadata: dict, vocab_file: str) -> ExportConfig:
  """`config` with every setting as the export resolved and used it (the module's metadata, the
  vocabulary): export_config.json says how the export was made, not which flags were unset."""
  return dataclasses.replace(
      config, vocab_file=vocab_file, lower_case=metadata["lower_case"],
      max_seq_length=metadata["max_seq_length"], head_groups=metadata["head_groups"],
      length_buckets=",".join(str(length) for length in metadata["length_buckets"]),
      doc_stride=metadata.get("doc_stride", config.doc_stride))
