"""Writes a task model as a text-in SavedModel that needs only tensorflow and tensorflow_text.

The exported graph holds the tokenizer (WordPiece with the original BERT normalisation), the packer
and the model, so a server or notebook calls it on raw strings; `serving_tokenized` takes packed
ids for servers that tokenize elsewhere. Usage:

  export_task_model(model, "classification", tokenizer, "out/sst2_export", max_seq_length=128,
                    labels=["neg", "pos"], options=ServingOptions(jit_compile="auto"))
  loaded = tf.saved_model.load("out/sst2_export")  # after `import tensorflow_text`
  loaded.serve(["a gripping film"])["label"]
"""

from __future__ import annotations

import json
import os
import tempfile
from typing import Mapping, Sequence

import tensorflow as tf

from bert_keras.atomic_io import staged_dir
from bert_keras.errors import UserError
from bert_keras.export.serving_options import ServingOptions
from bert_keras.export.span_serving import SETTINGS as SQUAD_SETTINGS, SpanServing
from bert_keras.export.text_pair_serving import TextPairServing

EXPORT_INFO = "export_info.json"  # under assets.extra/, the JSON twin of the saved attributes
KINDS = ("encoder", "classification", "regression", "squad", "multiple_choice", "tagging")


def build_serving_module(task_model, kind: str, tokenizer, max_seq_length: int,
                         labels: Sequence[str] | None = None, task: str = "",
                         extra: Mapping | None = None, options: ServingOptions = ServingOptions()):
  """The in-memory twin of what `export_task_model` writes (same functions, not yet saved)."""
  common = dict(task=task or kind, options=options)
  extra, max_seq_length = dict(extra or {}), int(max_seq_length)
  if kind in ("encoder", "classification", "regression"):
    return TextPairServing(kind, task_model, tokenizer, max_seq_length, labels=labels,
                           pair=bool(extra.get("pair", False)), **common)
  if kind == "squad":
    return SpanServing(task_model, tokenizer, max_seq_length, **extra, **common)
  if kind == "multiple_choice":
    from bert_keras.export.multiple_choice_serving import MultipleChoiceServing
    return MultipleChoiceServing(task_model, tokenizer, max_seq_length, **common)
  if kind == "tagging":
    from bert_keras.export.tagger_serving import TaggerServing
    return TaggerServing(task_model, tokenizer, max_seq_length, labels=labels, **extra, **common)
  raise UserError(f"export kind={kind!r}; expected one of {list(KINDS)}")


def write_extra_files(export_dir: str, files: Mapping[str, str]) -> None:
  """Writes name -> text under export_dir/assets.extra/ (tf.io.gfile: local or remote)."""
  tf.io.gfile.makedirs(os.path.join(export_dir, "assets.extra"))
  for name, text in files.items():
    with tf.io.gfile.GFile(os.path.join(export_dir, "assets.extra", name), "w") as f:
      f.write(text)


def save_serving_module(module, output_dir: str, extra_files: Mapping[str, str] | None = None) -> str:
  """Saves `module` with its signatures to output_dir atomically (staged, then renamed over any
  earlier export), `extra_files` (name -> text) under assets.extra/; returns output_dir."""
  output_dir = output_dir.rstrip("/")
  with tempfile.TemporaryDirectory() as scratch, staged_dir(output_dir) as stage:
    # The vocabulary travels with the model as an asset: `loaded.vocab_file.asset_path`.
    vocab_path = os.path.join(scratch, "vocab.txt")
    with open(vocab_path, "w", encoding="utf-8") as f:
      f.write("\n".join(module.tokenizer.vocabulary) + "\n")
    module.vocab_file = tf.saved_model.Asset(vocab_path)
    signatures = module.signatures()
    tf.saved_model.save(module, stage, signatures=signatures)
    info = dict(module.metadata(), signatures=sorted(signatures))
    write_extra_files(stage, {EXPORT_INFO: json.dumps(info, indent=2, ensure_ascii=False) + "\n",
                              **(extra_files or {})})
  return output_dir


def export_task_model(task_model, kind: str, tokenizer, output_dir: str, max_seq_length: int,
                      labels: Sequence[str] | None = None, task: str = "",
                      extra: Mapping | None = None,
                      options: ServingOptions = ServingOptions()) -> str:
  """Exports `task_model` (a Keras model over the packed encoder inputs) as a `kind` of KINDS, run
  as `options` (ServingOptions) says; returns output_dir. labels: class names in head order.
  extra: `pair` (classification/regression); for squad `version_2`, `null_score_diff_threshold`,
  `doc_stride`, `max_query_length`, `max_answer_length`; for tagging `doc_stride` (0: one window).
  """
  module = build_serving_module(task_model, kind, tokenizer, max_seq_length, labels=labels,
                                task=task, extra=extra, options=options)
  return save_serving_module(module, output_dir)


def kind_for(task_model, task_info: Mapping) -> str:
  """The export kind of a fine-tuned task model, from its outputs and its task_info.json."""
  outputs = task_model.output
  if not isinstance(outputs, Mapping):
    raise UserError(f"task model {task_model.name!r} must return a dict of outputs")
  if "start_logits" in outputs and "end_logits" in outputs:
    return "squad"
  if "logits" not in outputs:
    raise UserError(f"task model {task_model.name!r} outputs {sorted(outputs)}; expected "
                    "'logits' or 'start_logits'/'end_logits'")
  if len(task_model.input["input_word_ids"].shape) == 3:
    return "multiple_choice"  # (batch, choices, seq)
  if len(outputs["logits"].shape) == 3:
    return "tagging"  # (batch, seq, labels)
  if task_info.get("regression") or not task_info.get("label_names"):
    return "regression"
  return "classification"


def build_finetuned(task_model, task_info: Mapping, tokenizer,
                    options: ServingOptions = ServingOptions()):
  """A fine-tuned model's serving module, with the settings of its task_info.json (see
  Task.task_info), run as `options` says (its doc_stride included)."""
  kind = kind_for(task_model, task_info)
  if "max_seq_length" not in task_info:
    raise UserError("task_info has no max_seq_length")
  seq = int(task_info["max_seq_length"])
  doc_stride = options.doc_stride
  if doc_stride < 0 or (kind == "tagging" and doc_stride > seq - 2):
    raise UserError(f"doc_stride={doc_stride} must be in [0, max_seq_length - 2 = {seq - 2}]")
  extra = {}
  if kind in ("classification", "regression"):
    extra["pair"] = int(task_info.get("num_segments", 1)) == 2
  if kind == "squad":
    extra = {k: task_info[k] for k in SQUAD_SETTINGS if task_info.get(k) is not None}
    if doc_stride:
      extra["doc_stride"] = doc_stride
  if kind == "tagging":
    extra["doc_stride"] = doc_stride or max(1, (seq - 2) // 2)
  return build_serving_module(task_model, kind, tokenizer, seq,
                              labels=task_info.get("label_names"), task=task_info.get("task", ""),
                              extra=extra, options=options)
