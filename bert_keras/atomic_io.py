"""Atomic file writes: the data goes to a temporary name in the target's directory, then one
rename puts it in place.

A reader, or a rerun after a crash, sees the previous file or the new one and never half of
one: within one directory a rename replaces the target atomically. A write that fails removes
its temporary file and leaves the previous file untouched.

`write_text` is for local paths; `gfile_write_text` for model_dir-style paths that may be remote
(gs://...), through tf.io.gfile; `beam_create` streams a file through Beam's FileSystems (local or
gs://, as Beam workers write). On object stores a rename is a copy, so there they only guarantee
that the target is never partly written by this process.
"""

from __future__ import annotations

import contextlib
import os
import uuid


def write_text(path, data: str | bytes) -> None:
  """Writes `data` (str: UTF-8 text; bytes: as is) to the local `path` atomically, with the mode a
  plain open() gives (0666 less the process umask)."""
  path = os.fspath(path)
  tmp = os.path.join(os.path.dirname(path) or ".", f".tmp_{uuid.uuid4().hex}")
  # O_EXCL: never an existing file or symlink; mode 0666 is reduced by the umask in the kernel,
  # so the umask is honoured without reading it (os.umask can only read it by changing it).
  fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o666)
  try:
    if isinstance(data, bytes):
      with os.fdopen(fd, "wb") as f:
        f.write(data)
    else:
      with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(data)
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


@contextlib.contextmanager
def beam_create(path: str):
  """Yields a binary file, from apache_beam's FileSystems.create, that becomes `path` (local or
  gs://...) when the block ends without error; on error its temporary file is deleted.

  The file is a sibling with a unique temporary name and stores the caller's bytes as they are
  (no compression, whatever `path` ends with). Beam creates missing parent directories. Locally
  the rename replaces `path` atomically; elsewhere an existing `path` is deleted first (a rename
  there is a copy).
  """
  # pylint: disable=g-import-not-at-top  (most users of this module never need Beam)
  from apache_beam.io.filesystem import CompressionTypes
  from apache_beam.io.filesystems import FileSystems

  tmp = f"{path}.tmp-{uuid.uuid4().hex[:12]}"
  try:
    with FileSystems.create(tmp, compression_type=CompressionTypes.UNCOMPRESSED) as f:
      yield f
    if "://" not in path:
      os.replace(tmp, path)
    else:
      if FileSystems.exists(path):
        FileSystems.delete([path])
      FileSystems.rename([tmp], [path])
  except BaseException:
    if FileSystems.exists(tmp):
      FileSystems.delete([tmp])
    raise


def _first_existing(path: str) -> str:
  """The absolute `path` if it exists, else its nearest existing ancestor."""
  path = os.path.abspath(path)
  while not os.path.exists(path) and os.path.dirname(path) != path:
    path = os.path.dirname(path)
  return path


def check_output_dir(path, flag: str = "output_dir") -> None:
  """UserError unless the local `path` is a directory or can be created as one: checked before any
  work, so a path that is a file fails at once instead of after a run. Remote paths (gs://...)
  are left to the writer."""
  from bert_keras.errors import UserError  # pylint: disable=g-import-not-at-top

  path = os.fspath(path)
  if "://" in path:
    return
  existing = _first_existing(path)
  if not os.path.isdir(existing):
    what = "is a file" if existing == os.path.abspath(path) else f"is under the file {existing}"
    raise UserError(f"--{flag}={path} {what}: expected a directory (existing or to be created)")


def check_output_file(path, flag: str = "output_file") -> None:
  """UserError unless the local `path` can be written as a file: not an existing directory, and
  its directory exists or can be created. Remote paths (gs://...) are left to the writer."""
  from bert_keras.errors import UserError  # pylint: disable=g-import-not-at-top

  path = os.fspath(path)
  if "://" in path:
    return
  if os.path.isdir(path):
    raise UserError(f"--{flag}={path} is a directory: expected a file path")
  existing = _first_existing(os.path.dirname(os.path.abspath(path)))
  if not os.path.isdir(existing):
    raise UserError(f"--{flag}={path} is under the file {existing}: expected a file path in a "
                    "directory (existing or to be created)")
