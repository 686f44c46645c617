"""Python packing of token ids into BERT inputs: `[CLS] A [SEP] (B [SEP])`, padded to seq_length.

Mirrors bert_keras.text.BertPacker (the in-graph packer of the exports) so training features and
served inputs agree: the longer segment loses its last token first, as `_truncate_seq_pair`.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np


def pack(a: Sequence[int], b: Sequence[int] | None, seq_length: int, cls_id: int, sep_id: int,
         pad_id: int = 0) -> tuple[list[int], list[int], list[int]]:
  """One example -> (input_word_ids, input_mask, input_type_ids), each of length seq_length."""
  a = list(a)[:seq_length - 2] if b is None else list(a)
  if b is not None:
    b = list(b)
    while len(a) + len(b) > seq_length - 3:
      (a if len(a) > len(b) else b).pop()
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
