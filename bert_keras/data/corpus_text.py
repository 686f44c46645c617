"""Plain-text helpers of the corpus readers. Documents flow as `(doc_id, sentences)`: an id unique
and stable across runs (it seeds the random numbers), non-empty sentence strings."""

from __future__ import annotations

import re
from typing import BinaryIO, Callable, Iterator, List, Optional, Tuple

from bert_keras.configs.pretraining_data import DEFAULT_MAX_LINE_BYTES
_CHUNK = 1 << 16


def iter_bounded_lines(f: BinaryIO, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES
                       ) -> Iterator[Tuple[int, Optional[bytes]]]:
  """Yields (1-based line number, bytes without the newline), or (n, None) for a line over
  `max_line_bytes`, skipped in chunks, never held whole."""
  line_number = 0
  while True:
    line = f.readline(max_line_bytes + 1)
    if not line:
      return
    line_number += 1
    if len(line) > max_line_bytes and not line.endswith(b"\n"):
      # Skip the rest of this line without keeping it.
      while True:
        rest = f.readline(_CHUNK)
        if not rest or rest.endswith(b"\n"):
          break
      yield line_number, None
      continue
    yield line_number, line.rstrip(b"\r\n")


def iter_text_lines(f: BinaryIO, drop: Callable[[str], None],
                    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
                    on_undecodable: Optional[Callable[[int], None]] = None
                    ) -> Iterator[Tuple[int, str]]:
  """Yields (1-based line number, text); over-long and non-UTF-8 lines are `drop`ped, the latter
  also told to `on_undecodable(line_number)`."""
  for line_number, data in iter_bounded_lines(f, max_line_bytes):
    if data is None:
      drop("line_too_long")
      continue
    try:
      text = data.decode("utf-8")
    except UnicodeDecodeError:
      drop("undecodable_line")
      if on_undecodable is not None:
        on_undecodable(line_number)
      continue
    yield line_number, text


# Abbreviations after which a period does not end a sentence (lowercased, without the period).
_ABBREVIATIONS = frozenset("""
mr mrs ms dr prof sr jr st mt ft vs etc e.g i.e cf al fig figs no nos vol vols ed eds pp p
jan feb mar apr jun jul aug sep sept oct nov dec inc ltd co corp dept univ gen col lt sgt capt
rev hon gov sen rep ca approx est u.s u.k u.n a.d b.c
""".split())
# End punctuation, optional closing quotes/brackets, whitespace, then something that starts a sentence.
_BOUNDARY = re.compile(r"""([.!?]+['"’”)\]]*)\s+(?=['"“‘(\[]?[A-Z0-9])""")
_WORD_BEFORE = re.compile(r"(\S+)$")


def split_sentences(text: str) -> List[str]:
  """Rule-based sentences of a paragraph: a boundary is [.!?] (and closing quotes), whitespace, then
  an upper-case letter or digit, unless after an abbreviation or an initial ("J. R. R. Tolkien")."""
  text = " ".join(text.split())
  if not text:
    return []
  sentences = []
  start = 0
  for match in _BOUNDARY.finditer(text):
    end = match.end(1)
    before = _WORD_BEFORE.search(text[start:match.start(1)])
    word = before.group(1).lower().lstrip("(\"'") if before else ""
    if match.group(1).startswith(".") and (word in _ABBREVIATIONS or (len(word) == 1 and word.isalpha())):
      continue
    sentence = text[start:end].strip()
    if sentence:
      sentences.append(sentence)
    start = match.end()
  tail = text[start:].strip()
  if tail:
    sentences.append(tail)
  return sentences
