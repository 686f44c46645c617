"""Python packing of token ids into BERT inputs: `[CLS] A [SEP] (B [SEP])`, padded to seq_length.

Mirrors bert_keras.text.BertPacker (the in-graph packer the exported models use) so training features
and served inputs agree: the longer segment is truncated first, one token at a time, as in the
original `_truncate_seq_pair`.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np


def truncate_pair(a: list[int], b: list[int] | None, max_tokens: int) -> tuple[list, list | None]:
  """Returns copies of a and b whose total length is <= max_tokens, trimming the longer one's end."""
  a = list(a)
  b = None if b is None else list(b)
  if b is None:
    return a[:max_tokens], None
  while len(a) + len(b) > max_tokens:
    if len(a) > len(b):
      a.pop()
    else:
      b.pop()
  return a, b


def pack(a: Sequence[int], b: Sequence[int] | None, seq_length: int, cls_id: int, sep_id: int,
         pad_id: int = 0) -> tuple[list[int], list[int], list[int]]:
  """One example -> (input_word_ids, input_mask, input_type_ids), each of length seq_length."""
  reserved = 2 if b is None else 3
  a, b = truncate_pair(a, b, seq_length - reserved)
  ids = [cls_id] + a + [sep_id]
  types = [0] * len(ids)
  if b is not None:
    ids += b + [sep_id]
    types += [1] * (len(b) + 1)
  mask = [1] * len(ids)
  padding = seq_length - len(ids)
  return ids + [pad_id] * padding, mask + [0] * padding, types + [0] * padding


def pack_batch(segments_a: Sequence[Sequence[int]], segments_b: Sequence[Sequence[int]] | None,
               seq_length: int, cls_id: int, sep_id: int, pad_id: int = 0) -> dict:
  """Packs many examples -> dict of int32 arrays (n, seq_length) keyed like the encoder inputs."""
  rows = [pack(a, None if segments_b is None else segments_b[i], seq_length, cls_id, sep_id,
               pad_id) for i, a in enumerate(segments_a)]
  ids, mask, types = (np.array([r[k] for r in rows], dtype=np.int32).reshape(-1, seq_length)
                      for k in range(3))
  return {"input_word_ids": ids, "input_mask": mask, "input_type_ids": types}
