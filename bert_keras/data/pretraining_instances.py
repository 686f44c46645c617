"""The paper's pretraining instances from one tokenized document (section 3.1, A.1-A.2), no Beam,
no TensorFlow: google-research/bert's create_pretraining_data.py step by step, random draws in
the same order, so the same documents and `random.Random` give the same instances (ids, not
token strings).
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import random
import struct
from typing import Callable, List, Optional, Sequence

from bert_keras.data import pretraining_records as records

@dataclasses.dataclass(frozen=True)
class SpecialIds:
  """Ids the masking procedure needs: [CLS], [SEP], [MASK] and the vocabulary size."""
  cls_id: int
  sep_id: int
  mask_id: int
  vocab_size: int


@dataclasses.dataclass
class TrainingInstance:
  """One example before padding. Lengths: len(input_ids) == len(segment_ids) <= max_seq_length."""
  input_ids: List[int]            # [CLS] A [SEP] B [SEP], after masking
  segment_ids: List[int]          # 0 for [CLS] A [SEP], 1 for B [SEP]
  masked_lm_positions: List[int]  # ascending positions in input_ids
  masked_lm_ids: List[int]        # the original ids at those positions (the labels)
  is_random_next: bool            # B comes from another document (NSP label 1)
  num_replaced_by_mask: int = 0   # statistics of the 80/10/10 rule (appendix A.1)
  num_replaced_by_random: int = 0
  num_kept: int = 0


def stable_hash(*parts) -> int:
  """A 64-bit hash of `parts`, the same in every process (Python's `hash()` is salted per process)."""
  digest = hashlib.blake2b("\x1f".join(str(p) for p in parts).encode("utf-8"), digest_size=8).digest()
  return int.from_bytes(digest, "big")


def _shuffle(items: list, rng: random.Random) -> None:
  """`rng.shuffle(items)`, same draws and result, with _randbelow_with_getrandbits inlined: the
  shuffle was most of the CPU time of making instances. Other generators use rng.shuffle."""
  if type(rng) is not random.Random or random.Random._randbelow is not _RANDBELOW_WITH_GETRANDBITS:
    rng.shuffle(items)
    return
  getrandbits = rng.getrandbits
  n = len(items)
  while n > 1:  # positions n-1 .. 1 draw j in [0, n) with k = n.bit_length() bits, as _randbelow
    k = n.bit_length()
    low = max(2, 1 << (k - 1))  # every n in [low, n] has the same bit length k
    for m in range(n, low - 1, -1):
      j = getrandbits(k)
      while j >= m:
        j = getrandbits(k)
      items[m - 1], items[j] = items[j], items[m - 1]
    n = low - 1


_RANDBELOW_WITH_GETRANDBITS = getattr(random.Random, "_randbelow_with_getrandbits", None)


def truncate_seq_pair(tokens_a: List[int], tokens_b: List[int], max_num_tokens: int,
                      rng: random.Random) -> None:
  """Truncates the longer segment in place, one token at a time from a random end (no bias
  towards sentence beginnings)."""
  while len(tokens_a) + len(tokens_b) > max_num_tokens:
    trunc_tokens = tokens_a if len(tokens_a) > len(tokens_b) else tokens_b
    if rng.random() < 0.5:
      del trunc_tokens[0]
    else:
      trunc_tokens.pop()


def _mask_single_positions(tokens: List[int], num_to_predict: int, special: SpecialIds,
                           rng: random.Random):
  """create_masked_lm_predictions without whole-word masking, same draws: every candidate is one
  position, so the first `num_to_predict` shuffled ones (55 vs 90 us a 128-token instance)."""
  cls_id, sep_id = special.cls_id, special.sep_id
  candidates = [i for i, token in enumerate(tokens) if token != cls_id and token != sep_id]
  _shuffle(candidates, rng)
  chosen = sorted(candidates[:num_to_predict])
  output_tokens = list(tokens)
  draw = rng.random
  n_mask = n_random = n_kept = 0
  mask_id, top = special.mask_id, special.vocab_size - 1
  for index in candidates[:num_to_predict]:
    if draw() < 0.8:
      output_tokens[index] = mask_id
      n_mask += 1
    elif draw() < 0.5:
      n_kept += 1
    else:
      output_tokens[index] = rng.randint(0, top)
      n_random += 1
  return output_tokens, chosen, [tokens[p] for p in chosen], (n_mask, n_random, n_kept)


def create_masked_lm_predictions(tokens: List[int], masked_lm_prob: float, max_predictions_per_seq: int,
                                 special: SpecialIds, rng: random.Random,
                                 is_continuation: Optional[Sequence[bool]] = None):
  """Chooses ~15% of the positions and applies the 80/10/10 rule (appendix A.1: [MASK] never
  appears at fine-tuning time). `is_continuation[id]` ("##" pieces) masks whole words.
  Returns (output_tokens, positions, labels, (n_mask, n_random, n_kept))."""
  cls_id, sep_id = special.cls_id, special.sep_id
  num_to_predict = min(max_predictions_per_seq, max(1, int(round(len(tokens) * masked_lm_prob))))
  if is_continuation is None:
    return _mask_single_positions(tokens, num_to_predict, special, rng)
  cand_indexes: List[List[int]] = []
  for i, token in enumerate(tokens):
    if token == cls_id or token == sep_id:
      continue
    if cand_indexes and is_continuation[token]:
      cand_indexes[-1].append(i)
    else:
      cand_indexes.append([i])
  _shuffle(cand_indexes, rng)

  output_tokens = list(tokens)
  masked = []  # (position, original id)
  covered = set()
  n_mask = n_random = n_kept = 0
  for index_set in cand_indexes:
    if len(masked) >= num_to_predict:
      break
    # A whole word that would exceed the budget is skipped, as in the original.
    if len(masked) + len(index_set) > num_to_predict:
      continue
    if not covered.isdisjoint(index_set):
      continue
    for index in index_set:
      covered.add(index)
      if rng.random() < 0.8:
        masked_token = special.mask_id
        n_mask += 1
      elif rng.random() < 0.5:
        masked_token = tokens[index]
        n_kept += 1
      else:
        masked_token = rng.randint(0, special.vocab_size - 1)
        n_random += 1
      output_tokens[index] = masked_token
      masked.append((index, tokens[index]))
  masked.sort()
  return (output_tokens, [p for p, _ in masked], [t for _, t in masked], (n_mask, n_random, n_kept))


def create_instances_from_document(document: Sequence[Sequence[int]],
                                   random_document: Callable[[random.Random], Sequence[Sequence[int]]],
                                   max_seq_length: int, short_seq_prob: float, masked_lm_prob: float,
                                   max_predictions_per_seq: int, special: SpecialIds, rng: random.Random,
                                   is_continuation: Optional[Sequence[bool]] = None
                                   ) -> List[TrainingInstance]:
  """The instances of one pass over one document (section 3.1, A.2): sentences fill a chunk up to
  the target length (shorter with probability `short_seq_prob`, drawn once per pass as the
  original); A is a random prefix; B is, with probability 0.5 or for a one-sentence chunk,
  sentences of `random_document(rng)` (the chunk's unused sentences put back), else the rest."""
  max_num_tokens = max_seq_length - 3  # [CLS], [SEP], [SEP]
  target_seq_length = max_num_tokens
  if rng.random() < short_seq_prob:
    target_seq_length = rng.randint(2, max_num_tokens)

  instances = []
  current_chunk: List[Sequence[int]] = []
  current_length = 0
  i = 0
  while i < len(document):
    segment = document[i]
    current_chunk.append(segment)
    current_length += len(segment)
    if i == len(document) - 1 or current_length >= target_seq_length:
      if current_chunk:
        a_end = 1
        if len(current_chunk) >= 2:
          a_end = rng.randint(1, len(current_chunk) - 1)
        tokens_a: List[int] = []
        for j in range(a_end):
          tokens_a.extend(current_chunk[j])

        tokens_b: List[int] = []
        if len(current_chunk) == 1 or rng.random() < 0.5:
          is_random_next = True
          target_b_length = target_seq_length - len(tokens_a)
          other = random_document(rng)
          random_start = rng.randint(0, len(other) - 1)
          for j in range(random_start, len(other)):
            tokens_b.extend(other[j])
            if len(tokens_b) >= target_b_length:
              break
          # The sentences of the chunk not used for A are read again in the next chunk.
          i -= len(current_chunk) - a_end
        else:
          is_random_next = False
          for j in range(a_end, len(current_chunk)):
            tokens_b.extend(current_chunk[j])
        truncate_seq_pair(tokens_a, tokens_b, max_num_tokens, rng)
        if tokens_a and tokens_b:  # The original asserts this; empty sentences are dropped before.
          tokens = [special.cls_id] + tokens_a + [special.sep_id] + tokens_b + [special.sep_id]
          segment_ids = [0] * (len(tokens_a) + 2) + [1] * (len(tokens_b) + 1)
          tokens, positions, labels, (n_mask, n_random, n_kept) = create_masked_lm_predictions(
              tokens, masked_lm_prob, max_predictions_per_seq, special, rng, is_continuation)
          instances.append(TrainingInstance(tokens, segment_ids, positions, labels, is_random_next,
                                            n_mask, n_random, n_kept))
      current_chunk = []
      current_length = 0
    i += 1
  return instances


def pick_random_document(candidates: Sequence, own_id: str, rng: random.Random):
  """The sentences of a random other (doc_id, sentences) of `candidates`: up to 10 draws, as the
  original."""
  index = 0
  for _ in range(10):
    index = rng.randint(0, len(candidates) - 1)
    if candidates[index][0] != own_id:
      break
  return candidates[index][1]


def pad_instance(instance: TrainingInstance, max_seq_length: int, max_predictions_per_seq: int) -> dict:
  """The original's padded feature lists (pretraining_records.FEATURES)."""
  n = len(instance.input_ids)
  if n > max_seq_length:
    raise ValueError(f"instance has {n} tokens > max_seq_length={max_seq_length}")
  pad = max_seq_length - n
  m = len(instance.masked_lm_positions)
  mpad = max_predictions_per_seq - m
  return {  # the order of records.FEATURES
      "input_ids": instance.input_ids + [0] * pad,
      "input_mask": [1] * n + [0] * pad,
      "segment_ids": instance.segment_ids + [0] * pad,
      "masked_lm_positions": instance.masked_lm_positions + [0] * mpad,
      "masked_lm_ids": instance.masked_lm_ids + [0] * mpad,
      "masked_lm_weights": [1.0] * m + [0.0] * mpad,
      "next_sentence_labels": [1 if instance.is_random_next else 0],
  }


def serialize_instance(instance: TrainingInstance, max_seq_length: int, max_predictions_per_seq: int) -> bytes:
  """pad_instance's values as a serialized tf.train.Example, deterministic bytes written without
  TensorFlow (example_encoding.py); padding appended in wire format (a zero is one byte 0x00)."""
  from bert_keras.data import example_encoding as ee  # pylint: disable=g-import-not-at-top

  n = len(instance.input_ids)
  if n > max_seq_length:
    raise ValueError(f"instance has {n} tokens > max_seq_length={max_seq_length}")
  m = len(instance.masked_lm_positions)
  if m > max_predictions_per_seq:
    raise ValueError(f"instance has {m} predictions > max_predictions_per_seq={max_predictions_per_seq}")
  pad, mpad = b"\x00" * (max_seq_length - n), b"\x00" * (max_predictions_per_seq - m)
  packed = {
      "input_ids": ee.pack_varints(instance.input_ids) + pad,
      "input_mask": b"\x01" * n + pad,
      "segment_ids": ee.pack_varints(instance.segment_ids) + pad,
      "masked_lm_positions": ee.pack_varints(instance.masked_lm_positions) + mpad,
      "masked_lm_ids": ee.pack_varints(instance.masked_lm_ids) + mpad,
      "masked_lm_weights": _weights(m, max_predictions_per_seq),
      "next_sentence_labels": b"\x01" if instance.is_random_next else b"\x00",
  }
  return ee.encode_packed_example({name: (tag, packed[name], length) for name, tag, length
                                   in _layout(max_seq_length, max_predictions_per_seq)})


@functools.lru_cache(maxsize=64)
def _layout(max_seq_length: int, max_predictions_per_seq: int) -> tuple:
  from bert_keras.data import example_encoding as ee  # pylint: disable=g-import-not-at-top

  lengths = records.feature_lengths(max_seq_length, max_predictions_per_seq)
  return tuple((name, ee.FLOAT_LIST if dtype == "float32" else ee.INT64_LIST, lengths[name])
               for name, (dtype, _) in records.FEATURES.items())


@functools.lru_cache(maxsize=1024)
def _weights(m: int, max_predictions_per_seq: int) -> bytes:
  return struct.pack(f"<{max_predictions_per_seq}f", *([1.0] * m + [0.0] * (max_predictions_per_seq - m)))
