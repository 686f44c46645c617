"""Calls an exported text-in SavedModel on JSON records (scripts/predict.py), with only tensorflow
and tensorflow_text."""

from __future__ import annotations

import math
from typing import Iterable, Mapping, Sequence

import numpy as np
import tensorflow as tf
import tensorflow_text  # noqa: F401  (registers the tokenizer ops the SavedModel uses)

from bert_keras.errors import UserError
from bert_keras.json_io import parse_json

# The inputs of `serve` per exported kind, in call order; the last of a pair may be optional.
INPUTS = {"classification": ("text_a", "text_b"), "regression": ("text_a", "text_b"),
          "encoder": ("text_a", "text_b"), "squad": ("question", "context"),
          "multiple_choice": ("context", "endings"), "tagging": ("text",),
          # GPT-1 exports (kind "gpt_<layout>", bert_keras/gpt/gpt_export.SIGNATURE_FIELDS) need
          # every input: their signatures have no optional second text.
          "gpt_classification": ("text",), "gpt_entailment": ("text_a", "text_b"),
          "gpt_similarity": ("text_a", "text_b"), "gpt_multiple_choice": ("context", "endings")}
OPTIONAL_KINDS = ("classification", "regression", "encoder")  # whose text_b may be optional


def load(path: str):
  """tf.saved_model.load with a one-line error for a missing or foreign directory."""
  if not tf.io.gfile.exists(path):
    raise UserError(f"{path}: no such SavedModel directory")
  if not tf.saved_model.contains_saved_model(path):
    raise UserError(f"{path}: not a SavedModel directory (no saved_model.pb); expected the "
                    "directory export_model wrote")
  loaded = tf.saved_model.load(path)
  if not hasattr(loaded, "kind") or not hasattr(loaded, "serve"):
    raise UserError(f"{path}: not a text-in SavedModel written by export_model (no kind/serve)")
  return loaded


def _to_json(value):
  """Plain JSON data (str, numbers, lists) of one output tensor row. JSON has no NaN or infinity
  (a SQuAD passage without a valid span scores -inf): those become null."""
  if isinstance(value, bytes):
    return value.decode("utf-8", errors="replace")
  if isinstance(value, (np.ndarray, np.generic)):
    value = value.tolist()
  if isinstance(value, (list, tuple)):
    return [_to_json(v) for v in value]
  if isinstance(value, float) and not math.isfinite(value):
    return None
  return value


_ALL_INPUTS = sorted({name for names in INPUTS.values() for name in names})


def check_input_types(records: Sequence[Mapping], where: Sequence[str] | None = None) -> None:
  """UserError naming `where[i]` (file:line; default "record i+1") for an input value that is not
  text: every input a string, `endings` a non-empty list of strings. Needs no model, so a
  script can check its whole input file before loading one."""
  for i, record in enumerate(records):
    for name in _ALL_INPUTS:
      if name not in record:
        continue
      value = record[name]
      label = where[i] if where else f"record {i + 1}"
      if name == "endings":
        if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
          raise UserError(f"{label}: endings={value!r} must be a non-empty list of strings")
      elif not isinstance(value, str):
        raise UserError(f"{label}: {name}={value!r} must be a string")


def predict(loaded, records: Iterable[Mapping], batch_size: int = 32,
            where: Sequence[str] | None = None) -> list[dict]:
  """records: dicts keyed by the kind's input names -> one output dict per record (entities cut
  to each record's `num_entities`); `where[i]` names record i in errors ("in.jsonl:7")."""
  if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
    raise UserError(f"batch_size={batch_size!r} must be an integer >= 1")
  kind = loaded.kind if isinstance(loaded.kind, str) else loaded.kind.numpy().decode()
  names = INPUTS[kind]
  optional = _optional_inputs(loaded, kind)
  records = list(records)
  for i, record in enumerate(records):
    missing = [n for n in names if n not in optional and n not in record]
    if missing:
      label = where[i] if where else f"record {i + 1}"
      needs = (" (fine-tuned on pairs: its serving_default takes text_b)"
               if "text_b" in missing and kind in OPTIONAL_KINDS else "")
      raise UserError(f"{label}: missing {missing}; a {kind} model{needs} takes {list(names)}")
  check_input_types(records, where)
  # A record without text_b is sent as "" beside records that have one: a model not fine-tuned on
  # pairs packs a text_b with no pieces as text_a alone, so its answer does not depend on its
  # neighbours; a pair-task model requires text_b (`_optional_inputs`).
  results = []
  for begin in range(0, len(records), batch_size):
    chunk = records[begin:begin + batch_size]
    used = [n for n in names if n not in optional or any(n in r for r in chunk)]
    args = [tf.constant([r.get(n, "") for r in chunk], tf.string) for n in used]
    outputs = {k: np.asarray(v) for k, v in loaded.serve(*args).items()}
    for i in range(len(chunk)):
      row = {k: _to_json(v[i]) for k, v in outputs.items()}
      if "num_entities" in row:
        n = row["num_entities"]
        row = {k: (v[:n] if k.startswith("entity_") else v) for k, v in row.items()}
      results.append(row)
  return results


def _optional_inputs(loaded, kind: str) -> set:
  """text_b of a BERT text(-pair) model not fine-tuned on pairs (whose serving_default takes
  text_b); GPT-1 exports need every input."""
  if kind not in OPTIONAL_KINDS:
    return set()
  if isinstance(getattr(loaded, "pair", None), bool):  # a LiteRT export (bert_keras.serving)
    return set() if loaded.pair else {"text_b"}
  default = loaded.signatures.get("serving_default")
  pair = default is not None and "text_b" in default.structured_input_signature[1]
  return set() if pair else {"text_b"}


def read_jsonl(path: str) -> list[tuple[int, dict]]:
  """(line number, object) per non-empty line; UserError naming the file and line for bad input."""
  if not tf.io.gfile.exists(path):
    raise UserError(f"{path}: no such JSON-lines input file")
  if tf.io.gfile.isdir(path):
    raise UserError(f"{path}: is a directory; expected a JSON-lines input file")
  with tf.io.gfile.GFile(path, "rb") as f:
    data = f.read()
  records = []
  for line_number, line in enumerate(data.split(b"\n"), 1):
    if not line.strip():
      continue
    records.append((line_number, parse_json(line, path, line=line_number, expected=dict)))
  return records
