"""Per-code-point tables that let `BertTokenizer` run the original BERT normalisation in-graph.

From this Python's `unicodedata` (the reference tokenizer's tables), baked into the graph:
`expansions` (code point -> its normalised sequence, empty when dropped), `char_class` (WORD, ISOLATE:
punctuation and CJK, SPACE) and, uncased, `sigma_context` (Cased / Case_Ignorable, for the final
sigma). Shipped precomputed in `unicode_tables.npz` for the same `unidata_version` (walking 1.1M code
points takes seconds); regenerate with `python -m bert_keras.text.unicode_tables`. NFD's canonical
reordering is not reproduced: after Mn marks are dropped it only affects a few rare mark pairs.
"""

from __future__ import annotations

import functools
import os
import unicodedata

import numpy as np

from bert_keras.atomic_io import write_file
from bert_keras.text import reference_tokenizer as ref

WORD, ISOLATE, SPACE = 0, 1, 2
OTHER, CASED, CASE_IGNORABLE = 0, 1, 2
CAPITAL_SIGMA, SMALL_FINAL_SIGMA = 0x3A3, 0x3C2
_NUM_CODE_POINTS = 0x110000
DATA_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "unicode_tables.npz")


def _is_dropped(char: str) -> bool:
  return char in ("\0", "\ufffd") or ref.is_control(char)


def _class_of(char: str) -> int:
  if ref.is_whitespace(char) or char.isspace():
    return SPACE
  if ref.is_punctuation(char) or ref.is_cjk(ord(char)):
    return ISOLATE
  return WORD


def _run_length(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
  """Compresses a per-code-point array to (range starts, range values) for `searchsorted` lookups."""
  starts = np.concatenate([[0], np.nonzero(np.diff(values))[0] + 1]).astype(np.int32)
  return starts, values[starts].astype(np.int32)


def _prefix(lower_case: bool) -> str:
  return "uncased/" if lower_case else "cased/"


def load_data_file(lower_case: bool, path: str = DATA_FILE):
  """The precomputed tables from `path`, or None when missing or made from another Unicode version."""
  if not os.path.exists(path):
    return None
  with np.load(path) as data:
    if str(data["unidata_version"]) != unicodedata.unidata_version:
      return None
    prefix = _prefix(lower_case)
    return {name[len(prefix):]: data[name] for name in data.files if name.startswith(prefix)}


def write_data_file(path: str = DATA_FILE) -> None:
  """Computes the tables of both casings and writes them to `path` (atomically)."""
  arrays = {"unidata_version": np.asarray(unicodedata.unidata_version)}
  for lower_case in (True, False):
    arrays.update({_prefix(lower_case) + k: v for k, v in compute_tables(lower_case).items()})
  write_file(path, lambda tmp: np.savez_compressed(tmp, **arrays), ".npz")


@functools.lru_cache(maxsize=None)
def unicode_tables(lower_case: bool) -> dict[str, np.ndarray]:
  """Returns int32 numpy arrays: class_starts/class_values, expansion keys/splits/values/classes and,
  when `lower_case`, sigma_starts/sigma_values (from the shipped data file when it fits this Python)."""
  tables = load_data_file(lower_case)
  return tables if tables is not None else compute_tables(lower_case)


def compute_tables(lower_case: bool) -> dict[str, np.ndarray]:
  """The tables of `unicode_tables`, computed from this Python's `unicodedata` (seconds)."""
  category = unicodedata.category
  char_class = np.zeros(_NUM_CODE_POINTS, np.int8)
  sigma = np.zeros(_NUM_CODE_POINTS, np.int8)
  keys, splits, values, classes = [], [0], [], []
  for cp in range(_NUM_CODE_POINTS):
    char = chr(cp)
    cat = category(char)
    if cat in ("Cn", "Co", "Cs"):
      # Unassigned, private use or surrogates: WORD, except the original's CJK ranges, isolated by
      # code point even where this Python's Unicode does not know the ideograph yet.
      if ref.is_cjk(cp):
        char_class[cp] = ISOLATE
      continue
    if cat == "Lo" and ref.is_cjk(cp) and not unicodedata.decomposition(char):
      char_class[cp] = ISOLATE  # the bulk of the loop: ideographs have no case and no decomposition
      continue
    char_class[cp] = _class_of(char)
    if _is_dropped(char):
      keys.append(cp)
      splits.append(len(values))
      sigma[cp] = CASE_IGNORABLE  # skipping a character is the same as it never having been there
      continue
    if not lower_case or ref.is_whitespace(char):
      continue
    normalised = ref.ReferenceTokenizer._strip_accents(char.lower())
    if normalised != char:
      keys.append(cp)
      values.extend(ord(c) for c in normalised)
      out_classes = [ISOLATE if ref.is_cjk(cp) else _class_of(c) for c in normalised]
      if ref.is_cjk(cp) and len(normalised) > 1:
        raise AssertionError(f"U+{cp:04X} is a CJK ideograph that expands to {normalised!r}")
      classes.extend(out_classes)
      splits.append(len(values))
    # Final sigma context, probed on str.lower itself so it follows this Python's rules exactly:
    # "AΣx" keeps σ iff x is cased and not case-ignorable; "AΣxA" keeps σ iff x is either.
    keeps_sigma = ("A\u03a3" + char).lower()[1] == "\u03c3"
    keeps_sigma_before_cased = ("A\u03a3" + char + "A").lower()[1] == "\u03c3"
    if keeps_sigma:
      sigma[cp] = CASED
    elif keeps_sigma_before_cased:
      sigma[cp] = CASE_IGNORABLE
  tables = {}
  tables["class_starts"], tables["class_values"] = _run_length(char_class)
  tables["expansion_keys"] = np.asarray(keys, np.int32)
  tables["expansion_splits"] = np.asarray(splits, np.int32)
  tables["expansion_values"] = np.asarray(values, np.int32)
  tables["expansion_classes"] = np.asarray(classes, np.int32)
  if lower_case:
    tables["sigma_starts"], tables["sigma_values"] = _run_length(sigma)
  return tables


if __name__ == "__main__":
  write_data_file()
  print(f"wrote {DATA_FILE} (Unicode {unicodedata.unidata_version})")
