"""Atomic file writes: the data goes to a temporary name in the target's directory, then one
rename puts it in place.

A reader, or a rerun after a crash, sees the previous file or the new one and never half of
one: within one directory a rename replaces the target atomically. A write that fails removes
its temporary file and leaves the previous file untouched.

`write_text` is for local paths; `gfile_write_text` for model_dir-style paths that may be remote
(gs://...), through tf.io.gfile (on object stores a rename is a copy, so there it only
guarantees that the target is never partly written by this process).
"""

from __future__ import annotations

import os
import tempfile
import uuid


def write_text(path, data: str | bytes) -> None:
  """Writes `data` (str: UTF-8 text; bytes: as is) to the local `path` atomically, mode 0644."""
  path = os.fspath(path)
  fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path) or ".", prefix=".tmp_")
  try:
    if isinstance(data, bytes):
      with os.fdopen(fd, "wb") as f:
        f.write(data)
    else:
      with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(data)
    os.chmod(tmp, 0o644)  # mkstemp creates 0600; a normal write would give 0644
    os.replace(tmp, path)
  except BaseException:
    if os.path.exists(tmp):
      os.remove(tmp)
    raise


def gfile_write_text(path: str, data: str | bytes) -> None:
  """Writes `data` to `path` (local or any tf.io.gfile file system) through a temporary sibling
  and `tf.io.gfile.rename(..., overwrite=True)`."""
  import tensorflow as tf  # pylint: disable=g-import-not-at-top  (local writers need no TF)

  tmp = f"{path}.tmp-{uuid.uuid4().hex[:12]}"
  try:
    with tf.io.gfile.GFile(tmp, "wb" if isinstance(data, bytes) else "w") as f:
      f.write(data)
    tf.io.gfile.rename(tmp, path, overwrite=True)
  except BaseException:
    if tf.io.gfile.exists(tmp):
      tf.io.gfile.remove(tmp)
    raise
