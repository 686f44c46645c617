"""Reading a WordPiece `vocab.txt` (one token a line, the line number is the id), as the original BERT.

The original `load_vocab` strips each line and silently lets a duplicate overwrite the earlier id; here a
duplicate, an empty line or an empty file is a user error naming the file and the 1-based line, since
any of them shifts every later id and silently breaks a pretrained checkpoint.
"""

from __future__ import annotations

import tensorflow as tf

from bert_keras.errors import UserError


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
  """Returns the tokens of a `vocab.txt` in id order (token i is on line i + 1).

  Lines are stripped of surrounding whitespace like the original `tokenization.load_vocab`. A final
  newline is allowed; any other empty line, a duplicate token, a missing or empty file is a `UserError`.
  """
  if not tf.io.gfile.exists(path):
    raise UserError(f"{path}: vocabulary file not found")
  with tf.io.gfile.GFile(path, "rb") as f:
    raw = f.read()
  try:
    text = raw.decode("utf-8")
  except UnicodeDecodeError as e:
    line_no = raw[:e.start].count(b"\n") + 1
    raise UserError(f"{path}:{line_no}: not valid UTF-8 ({e.reason})") from None
  lines = text.split("\n")
  if lines and lines[-1] == "":
    lines.pop()  # the newline that ends the last line
  return check_vocabulary([line.strip() for line in lines], source=path)
