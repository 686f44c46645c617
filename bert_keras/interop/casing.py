"""Does the tokenizer lower-case the way the checkpoint was trained? An uncased checkpoint fed a cased
tokenizer silently sees rare pieces or [UNK]. The original checks the release directory name; we also
read Hugging Face's `do_lower_case` and, last, the vocabulary itself.
"""

from __future__ import annotations

import warnings
from typing import Optional


def casing_from_vocab(vocab_path: str) -> Optional[bool]:
  """True (uncased) when no ordinary token has an upper-case letter, False when many do."""
  try:
    with open(vocab_path, encoding="utf-8") as f:
      tokens = [line.rstrip("\n") for line in f]
  except (OSError, UnicodeDecodeError):
    return None
  ordinary = [t for t in tokens if t and not (t.startswith("[") and t.endswith("]"))]
  if not ordinary:
    return None
  upper = sum(t != t.lower() for t in ordinary)
  if upper == 0:
    return True
  return False if upper > 0.005 * len(ordinary) else None


def check_tokenizer_casing(checkpoint_lower_case: Optional[bool], tokenizer_lower_case,
                           checkpoint_path: str = "the checkpoint") -> Optional[str]:
  """Warns (and returns the message) when the casings disagree; `tokenizer_lower_case` is a bool
  or has a `lower_case` attribute (BertTokenizer)."""
  lower = getattr(tokenizer_lower_case, "lower_case", tokenizer_lower_case)
  if checkpoint_lower_case is None or lower is None or bool(lower) == checkpoint_lower_case:
    return None
  if checkpoint_lower_case:
    message = (f"{checkpoint_path} is an uncased checkpoint but the tokenizer is cased "
               "(lower_case=False): capitalised words will become rare pieces or [UNK]; "
               "use lower_case=True")
  else:
    message = (f"{checkpoint_path} is a cased checkpoint but the tokenizer lower-cases "
               "(lower_case=True): the model's capitalised vocabulary will go unused; "
               "use lower_case=False")
  warnings.warn(message, UserWarning, stacklevel=2)
  return message
