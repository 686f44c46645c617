"""The vocab.txt that pretraining records were made with, found through their summary.json.

create_pretraining_data writes summary.json beside the shards it publishes, with its config (and so
`vocab_file`, resolved to the default vocabulary when none was given). run_pretraining copies that
file into model_dir/export/ so that the exported encoder is a complete checkpoint: fine-tuning and
conversion read vocab.txt beside it, as they do for a Google or Hugging Face release.
"""

from __future__ import annotations

import json

import tensorflow as tf

from bert_keras.training.vocab_fit import SUMMARY_NAME  # (not tfrecord_shards: that imports Beam)
from bert_keras.training.pretraining_input import list_files


def _directory(path: str) -> str:
  return path.rstrip("/").rpartition("/")[0] or "."


def records_vocab(input_files: str, vocab_size: int) -> tuple[str | None, str]:
  """(vocab path, "") when every directory of `input_files` has a summary.json naming one and the
  same readable vocabulary of `vocab_size` lines; else (None, why not)."""
  vocabs = set()
  for directory in sorted({_directory(f) for f in list_files(input_files)}):
    summary = f"{directory.rstrip('/')}/{SUMMARY_NAME}"
    if not tf.io.gfile.exists(summary):
      return None, f"no {summary} (the records were not made by create_pretraining_data)"
    try:
      with tf.io.gfile.GFile(summary) as f:
        values = json.load(f)
      vocab = values["config"]["vocab_file"]
    except (ValueError, KeyError, TypeError) as e:
      return None, f"{summary} names no vocab_file ({type(e).__name__}: {e})"
    if not isinstance(vocab, str) or not vocab:
      return None, f"{summary} names no vocab_file"
    vocabs.add(vocab)
  if len(vocabs) != 1:
    return None, f"the inputs' {SUMMARY_NAME} files name several vocabularies {sorted(vocabs)}"
  vocab = vocabs.pop()
  if not tf.io.gfile.exists(vocab):
    return None, f"{vocab} (named by the records' {SUMMARY_NAME}) does not exist here"
  with tf.io.gfile.GFile(vocab, "rb") as f:
    lines = sum(1 for _ in f)
  if lines != vocab_size:
    return None, f"{vocab} has {lines} entries but the model has vocab_size={vocab_size}"
  return vocab, ""
