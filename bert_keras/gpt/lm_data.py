"""GPT-1 pretraining data: contiguous spans of text (section 4.1), from the embedded real corpora.

GPT-1 trained on BooksCorpus because it has "long stretches of contiguous text"; here documents are
tokenized, concatenated in order and cut into non-overlapping windows of `seq_length` tokens.
Plain functions (no Beam) so tests and the ablation study call them directly.
"""

from __future__ import annotations

import bz2
from typing import Callable, List, Sequence

import numpy as np
import tensorflow as tf

from bert_keras import resources
from bert_keras.data.corpus_text import split_sentences
from bert_keras.data.wikipedia_reader import iter_wiki_pages, wikitext_to_paragraphs
from bert_keras.errors import UserError

CORPORA = ("wikipedia", "lee_background")


def read_corpus(name: str) -> List[List[str]]:
  """The documents of an embedded corpus, each a list of sentences (real text, no download).

  "wikipedia": the shortened English dump (106 articles; lists, tables, headings dropped);
  "lee_background": 300 news documents, one per line.
  """
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


def contiguous_windows(documents: Sequence[Sequence[int]], seq_length: int) -> dict:
  """Token-id documents -> {"input_ids", "input_mask"} int32 (num_windows, seq_length).

  Documents are concatenated in order (as one stream of books) and cut without overlap; the last
  partial window is dropped, so every window is full and every position has a next token.
  """
  stream = np.fromiter((t for doc in documents for t in doc), dtype=np.int32)
  n = len(stream) // seq_length
  if n == 0:
    raise UserError(f"the corpus has {len(stream)} tokens, fewer than one window of "
                    f"seq_length={seq_length}")
  ids = stream[:n * seq_length].reshape(n, seq_length)
  return {"input_ids": ids, "input_mask": np.ones_like(ids)}


def in_memory_dataset_fn(features: dict, batch_size: int, gradient_accumulation_steps: int = 1,
                         seed: int = 0, training: bool = True) -> Callable:
  """A `Trainer` dataset_fn over in-memory arrays: dicts shaped (accum, micro, ...), repeated.

  Training shuffles with `seed` each epoch; `skip_batches` global batches are skipped on resume.
  """
  if batch_size % gradient_accumulation_steps:
    raise UserError(f"batch_size={batch_size} is not divisible by "
                    f"gradient_accumulation_steps={gradient_accumulation_steps}")
  micro = batch_size // gradient_accumulation_steps

  def fn(input_context=None, skip_batches=0):
    ds = tf.data.Dataset.from_tensor_slices(features)
    if training:
      ds = ds.shuffle(len(next(iter(features.values()))), seed=seed, reshuffle_each_iteration=True)
    ds = ds.repeat().batch(micro, drop_remainder=True).batch(gradient_accumulation_steps)
    if skip_batches:
      ds = ds.skip(skip_batches)
    return ds.prefetch(2)

  return fn
