"""GPT-1 pretraining data: contiguous spans of text (section 4.1), from the embedded real corpora.

GPT-1 trained on BooksCorpus because it has "long stretches of contiguous text"; here documents are
tokenized, concatenated in order and cut into non-overlapping windows of `seq_length` tokens.
Plain functions (no Beam) so tests and the ablation study call them directly.
"""

from __future__ import annotations

import bz2
import os
from typing import Callable, List, Sequence

import numpy as np
import tensorflow as tf

from bert_keras import resources
from bert_keras.atomic_io import check_output_file, write_json
from bert_keras.data.corpus_text import split_sentences
from bert_keras.data.wikipedia_reader import iter_wiki_pages, wikitext_to_paragraphs
from bert_keras.errors import UserError
from bert_keras.gpt.bpe_training import train_bpe_model
from bert_keras.gpt.gpt_tokenizer import GPTTokenizer
from bert_keras.tasks.readers import read_lines

CORPORA = ("wikipedia", "lee_background")


def read_corpus(name: str) -> List[List[str]]:
  """The documents of an embedded corpus, each a list of sentences: "wikipedia" (the shortened
  English dump, 106 articles) or "lee_background" (300 news documents, one per line)."""
  if name == "wikipedia":
    documents = []
    with bz2.open(resources.wikipedia_dump_path(), "rb") as f:
      for _, _, wikitext in iter_wiki_pages(f, drop=lambda reason: None):
        sentences = [s for p in wikitext_to_paragraphs(wikitext) for s in split_sentences(p)]
        if sentences:
          documents.append(sentences)
    return documents
  if name == "lee_background":
    with open(resources.lee_background_path(), encoding="utf-8") as f:
      return [split_sentences(line) for line in f if line.strip()]
  raise UserError(f"unknown corpus {name!r}; expected one of {CORPORA}")


def read_texts(corpora: Sequence[str], input_files: Sequence[str]) -> List[List[str]]:
  """The documents of the embedded `corpora`, then of each plain-text file (one per line)."""
  documents = [doc for name in corpora for doc in read_corpus(name)]
  for path in input_files:
    if not os.path.exists(path):
      raise UserError(f"{path}: no such input file")
    # read_lines: a line that is not UTF-8 is one UserError naming file:line, not a traceback.
    documents += [[line.strip()] for _, line in read_lines(path, "UTF-8") if line.strip()]
  if not documents:
    raise UserError("no corpus given: name --corpora and/or --input_files")
  return documents


def run_train_bpe(corpora: Sequence[str], input_files: Sequence[str], vocab_size: int,
                  output_path: str, lower_case: bool = True) -> GPTTokenizer:
  """Trains the BPE model on real corpora and writes it (+ `<output>.json` with the settings)."""
  check_output_file(output_path)
  documents = read_texts(corpora, input_files)
  proto = train_bpe_model([" ".join(d) for d in documents], vocab_size, lower_case=lower_case)
  tokenizer = GPTTokenizer(model_proto=proto)
  os.makedirs(os.path.dirname(os.path.abspath(output_path)), exist_ok=True)
  tokenizer.save_model(output_path)
  write_json(output_path + ".json", {"corpora": list(corpora), "input_files": list(input_files),
                                     "vocab_size": vocab_size, "lower_case": lower_case,
                                     "num_documents": len(documents)})
  return tokenizer


def contiguous_windows(documents: Sequence[Sequence[int]], seq_length: int) -> dict:
  """Token-id documents, concatenated in order (one stream of books) and cut without overlap ->
  {"input_ids", "input_mask"} int32 (num_windows, seq_length); the last partial window dropped."""
  stream = np.fromiter((t for doc in documents for t in doc), dtype=np.int32)
  n = len(stream) // seq_length
  if n == 0:
    raise UserError(f"the corpus has {len(stream)} tokens, fewer than one window of "
                    f"seq_length={seq_length}")
  ids = stream[:n * seq_length].reshape(n, seq_length)
  return {"input_ids": ids, "input_mask": np.ones_like(ids)}


def in_memory_dataset_fn(features: dict, batch_size: int, gradient_accumulation_steps: int = 1,
                         seed: int = 0, training: bool = True) -> Callable:
  """A `Trainer` dataset_fn over in-memory arrays: dicts (accum, micro, ...), repeated, shuffled
  with `seed` each epoch (training); a resume skips `skip_batches` global batches."""
  if batch_size % gradient_accumulation_steps:
    raise UserError(f"batch_size={batch_size} is not divisible by "
                    f"gradient_accumulation_steps={gradient_accumulation_steps}")

  def fn(input_context=None, skip_batches=0):
    micro = batch_size // gradient_accumulation_steps
    if input_context is not None:
      micro = input_context.get_per_replica_batch_size(micro)
    ds = tf.data.Dataset.from_tensor_slices(features)
    if training:
      ds = ds.shuffle(len(next(iter(features.values()))), seed=seed, reshuffle_each_iteration=True)
    ds = ds.repeat().batch(micro, drop_remainder=True).batch(gradient_accumulation_steps)
    if skip_batches:
      ds = ds.skip(skip_batches)
    return ds.prefetch(2)

  return fn
