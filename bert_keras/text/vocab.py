"""Reading a WordPiece `vocab.txt` (the line number is the id). A duplicate, an empty line or an empty
file, which the original accepts silently and which shifts every later id, is a UserError naming the line.
"""

from __future__ import annotations

import os

from bert_keras.errors import UserError
from bert_keras.json_io import decode_utf8


def check_vocabulary(tokens, source: str = "vocabulary") -> list[str]:
  """Validates a token list (non-empty, no empty or duplicate token); returns it as a `list[str]`."""
  tokens = [t.decode("utf-8") if isinstance(t, bytes) else str(t) for t in tokens]
  if not tokens:
    raise UserError(f"{source}: the vocabulary is empty, expected one WordPiece token per line")
  first_line = {}
  for line_no, token in enumerate(tokens, start=1):
    if not token:
      raise UserError(f"{source}:{line_no}: empty token, expected one WordPiece token per line")
    if token in first_line:
      raise UserError(f"{source}:{line_no}: duplicate token {token!r} (first on line "
                      f"{first_line[token]}); every token must appear once, its line is its id")
    first_line[token] = line_no
  return tokens


def load_vocab(path: str) -> list[str]:
  """The tokens of a `vocab.txt` in id order, lines stripped as the original's. A local file is read
  without TensorFlow (data workers never import it); gs://... through `tf.io.gfile`."""
  if "://" in path:
    import tensorflow as tf  # pylint: disable=g-import-not-at-top
    exists, is_dir, open_file = tf.io.gfile.exists, tf.io.gfile.isdir, tf.io.gfile.GFile
    errors = (OSError, tf.errors.OpError)
  else:
    exists, is_dir, open_file = os.path.exists, os.path.isdir, open
    errors = (OSError,)
  try:
    if not exists(path):
      raise UserError(f"{path}: vocabulary file not found")
    if is_dir(path):
      raise UserError(f"{path}: is a directory; expected a vocabulary file (one WordPiece token per "
                      "line)")
    with open_file(path, "rb") as f:
      raw = f.read()
  except errors as e:
    reason = "; ".join(line.strip() for line in str(e).splitlines() if line.strip())
    raise UserError(f"{path}: cannot read the vocabulary file ({type(e).__name__}: "
                    f"{reason or type(e).__name__})") from None
  lines = decode_utf8(raw, path).split("\n")
  if lines and lines[-1] == "":
    lines.pop()  # the newline that ends the last line
  return check_vocabulary([line.strip() for line in lines], source=path)
