"""Lines of the real embedded corpora (Wikipedia dump, Lee, Pang & Lee) for tokenizer agreement tests."""

from __future__ import annotations

import bz2

from bert_keras import resources


def lee_lines() -> list[bytes]:
  """Every line of the Lee background corpus, lee.cor and the polarity sentences (550 lines).

  Raw bytes: the files hold a few Latin-1 bytes ("\xa3" for a pound sign) that are not UTF-8, which
  the original tokenizer drops while decoding; both tokenizers under test get the same bytes.
  """
  lines = []
  for path in (resources.lee_background_path(), resources.lee_documents_path(),
               resources.polarity_path()):
    with open(path, "rb") as f:
      lines.extend(f.read().split(b"\n"))
  return lines


def wikipedia_lines(every: int = 1) -> list[str]:
  """The raw lines (wikitext inside XML) of the shortened Wikipedia dump, every `every`-th one."""
  with bz2.open(resources.wikipedia_dump_path(), "rt", encoding="utf-8") as f:
    return f.read().split("\n")[::every]
