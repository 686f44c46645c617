"""Checkpoint conversion between Google, Hugging Face and our Keras formats (scripts/convert_checkpoint),
through a Keras model, so every conversion gets the same checks; pretraining heads are kept.
"""

from __future__ import annotations

import os
import shutil
import warnings

from absl import logging

from bert_keras.atomic_io import check_output_dir, write_file, write_json
from bert_keras.errors import UserError
from bert_keras.interop import google_checkpoint, loader
from bert_keras.interop.casing import casing_from_vocab, check_tokenizer_casing

SOURCES = ("google", "hf", "keras")
TARGETS = ("keras", "google")


def _objective(opened) -> str | None:
  """The pretraining objective whose heads the source holds, or None for an encoder only."""
  names = opened.weights.shapes
  if "cls/predictions/output_bias" not in names:
    return None
  if opened.info.config.attention == "causal":
    return "ltr"
  return "mlm_nsp" if "cls/seq_relationship/output_weights" in names else "mlm"


_KERAS_NAMES = ("encoder.keras", "pretrainer.keras")  # what _save_keras writes


def _save_keras(model, config, output_dir: str, name: str, vocab_path) -> str:
  os.makedirs(output_dir, exist_ok=True)
  path = os.path.join(output_dir, name)
  write_file(path, model.save, ".keras")
  # An earlier conversion into this directory may have left the other kind of model: the loader
  # prefers encoder.keras, so a stale one would shadow the pretrainer just written.
  for other in _KERAS_NAMES:
    if other != name and os.path.exists(os.path.join(output_dir, other)):
      os.remove(os.path.join(output_dir, other))
  write_json(os.path.join(output_dir, "model_config.json"), config.to_dict())
  if vocab_path:
    shutil.copyfile(vocab_path, os.path.join(output_dir, "vocab.txt"))
  return path


def convert_checkpoint(source_format: str, target_format: str, input_path: str, output_dir: str,
                       tokenizer_lower_case: bool | None = None,
                       vocab_file: str | None = None) -> dict:
  """Converts `input_path` into `output_dir` with `vocab_file` (default: the one beside it);
  returns the summary it also writes as convert_config.json."""
  if source_format not in SOURCES:
    raise UserError(f"--from={source_format!r}; expected one of {SOURCES}")
  if target_format not in TARGETS:
    raise UserError(f"--to={target_format!r}; expected one of {TARGETS}")
  check_output_dir(output_dir)
  detected, _ = loader.detect_format(input_path)
  family = "keras" if detected in ("keras", "keras_weights") else detected
  if family != source_format:
    raise UserError(f"{input_path}: looks like a {detected!r} checkpoint, not --from={source_format}")
  opened = loader.open_checkpoint(input_path)
  config = opened.info.config
  vocab_path = vocab_file or opened.info.vocab_path
  if vocab_file:
    if not os.path.isfile(vocab_file):
      raise UserError(f"{vocab_file}: no such vocabulary file")
    loader.check_vocab_size(vocab_file, config, opened.config_path)

  objective = _objective(opened)
  model, info = loader.build_encoder(opened, objective)

  checks = []
  with warnings.catch_warnings():  # logged once below with the other warnings
    warnings.simplefilter("ignore")
    if tokenizer_lower_case is not None:
      checks.append(check_tokenizer_casing(info.lower_case, tokenizer_lower_case, input_path))
    if vocab_file and info.lower_case is not None:
      checks.append(check_tokenizer_casing(info.lower_case, casing_from_vocab(vocab_file),
                                           input_path))
  info.warnings.extend(c for c in checks if c)

  if target_format == "google":
    outputs = [loader.save_google_checkpoint(model, output_dir, vocab_path)[0]]
    _, config_warnings = google_checkpoint.config_to_google(config)
    info.warnings.extend(config_warnings)
  else:
    name = "encoder.keras" if objective is None else "pretrainer.keras"
    outputs = [_save_keras(model, config, output_dir, name, vocab_path)]
  for message in info.warnings:
    logging.warning("%s", message)

  summary = {
      "from": source_format, "to": target_format, "input": os.path.abspath(input_path),
      "detected_format": info.format, "read": info.path, "outputs": outputs,
      "objective": objective, "vocab_file": vocab_path, "checkpoint_lower_case": info.lower_case,
      "tokenizer_lower_case": tokenizer_lower_case, "model_config": config.to_dict(),
      "num_loaded": len(info.loaded), "missing": info.missing, "unused": info.unused,
      "warnings": info.warnings,
  }
  write_json(os.path.join(output_dir, "convert_config.json"), summary)
  return summary
