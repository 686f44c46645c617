"""GPT-1 section 5, "Zero-shot behaviors" (Figure 2 right): task skill of the LM alone, no training.

Sentiment: "we append the token `very` to each example and restrict the language model's output
distribution to only the words `positive` and `negative` and guess the token it assigns the higher
probability to as the prediction." With a BPE vocabulary a word may be several pieces, so each
candidate is scored by the sum of its pieces' log-probabilities after `<start> text very`.
"""

from __future__ import annotations

from typing import Sequence

import keras
import numpy as np

from bert_keras.gpt.gpt_tokenizer import GPTTokenizer


def continuation_log_probs(model: keras.Model, tokenizer: GPTTokenizer, texts: Sequence[str],
                           continuation: str, seq_length: int, batch_size: int = 64) -> np.ndarray:
  """log P(continuation | <start> text) under a GPTLanguageModel, for each text: (len(texts),).

  The text is cut from the left when too long, so the continuation always fits.
  """
  cont = tokenizer.encode([continuation])[0]
  if not cont or len(cont) + 2 > seq_length:
    raise ValueError(f"continuation {continuation!r} is {len(cont)} pieces; seq_length={seq_length}")
  rows, starts = [], []
  for ids in tokenizer.encode(list(texts)):
    ids = ids[-(seq_length - 1 - len(cont)):] if len(ids) > seq_length - 1 - len(cont) else ids
    row = [tokenizer.start_id] + ids + cont
    starts.append(1 + len(ids))
    rows.append(row + [tokenizer.pad_id] * (seq_length - len(row)))
  ids = np.array(rows, np.int32)
  mask = (np.arange(seq_length)[None] < np.array([s + len(cont) for s in starts])[:, None])
  out = []
  for b in range(0, len(ids), batch_size):
    logits = keras.ops.convert_to_numpy(model({"input_word_ids": ids[b:b + batch_size],
                                               "input_mask": mask[b:b + batch_size].astype(np.int32)},
                                              training=False)["lm_logits"])
    logits = logits - logits.max(-1, keepdims=True)
    log_probs = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    for i, row_lp in enumerate(log_probs):
      start = starts[b + i]
      # Position p scores token p+1: the piece at start+j is scored at start+j-1.
      out.append(sum(row_lp[start + j - 1, cont[j]] for j in range(len(cont))))
  return np.array(out)


def zero_shot_sentiment(model: keras.Model, tokenizer: GPTTokenizer, texts: Sequence[str],
                        seq_length: int, positive: str = "very positive",
                        negative: str = "very negative") -> np.ndarray:
  """1 where log P("very positive" | text) > log P("very negative" | text), else 0."""
  pos = continuation_log_probs(model, tokenizer, texts, positive, seq_length)
  neg = continuation_log_probs(model, tokenizer, texts, negative, seq_length)
  return (pos > neg).astype(np.int32)
