"""Atomic writes: the data goes to a temporary sibling, then one rename puts it in place, so a
reader or a rerun sees the old file or the new one, never half of one. Directories too:
`staged_dir` yields `<target>.staging-<host>-<pid>-<hex>`, whose name lets the next writer remove
the stages of killed processes. On object stores (gs://) a rename is a copy.
"""

from __future__ import annotations

import contextlib
import glob
import json
import os
import shutil
import socket
import uuid
from typing import Any, Callable


def write_file(path, write: Callable[[str], Any], suffix: str = "") -> None:
  """`write(tmp)` writes a temporary file ending in `suffix`, which then replaces the local `path`."""
  path = os.fspath(path)
  tmp = os.path.join(os.path.dirname(path) or ".", f".tmp_{uuid.uuid4().hex}{suffix}")
  try:
    write(tmp)
    os.replace(tmp, path)
  finally:
    if os.path.exists(tmp):
      os.remove(tmp)


def write_text(path, data: str | bytes) -> None:
  """Writes `data` (str as UTF-8) to the local `path` atomically, with open()'s mode (umask)."""
  def write(tmp):
    # "x" (O_EXCL): never an existing file or symlink; the kernel applies the umask to 0666.
    with open(tmp, "xb") if isinstance(data, bytes) else open(tmp, "x", encoding="utf-8") as f:
      f.write(data)
  write_file(path, write)


def write_json(path, values: Any, default=None) -> None:
  """Writes `values` as indented, key-sorted UTF-8 JSON to the local `path` atomically."""
  write_text(path, json.dumps(values, indent=2, sort_keys=True, ensure_ascii=False,
                              default=default) + "\n")


def _pid_alive(pid: int) -> bool:
  try:
    os.kill(pid, 0)
  except ProcessLookupError:
    return False
  except PermissionError:  # another user's process
    pass
  return True


def remove_dead_stages(target: str) -> list[str]:
  """Removes the stages of the local `target` whose writer, a process of this host, is gone."""
  removed, host = [], socket.gethostname()
  for path in sorted(glob.glob(f"{glob.escape(target)}.staging-*")):
    owner = path.rsplit(".staging-", 1)[1].rsplit("-", 2)
    if (len(owner) == 3 and owner[0] == host and owner[1].isdigit()
        and int(owner[1]) != os.getpid() and not _pid_alive(int(owner[1]))):
      shutil.rmtree(path, ignore_errors=True)
      removed.append(path)
  return removed


class FileOps:
  """`os` for local paths, tf.io.gfile for the others (gs://...)."""

  def __init__(self, path: str):
    self.local = "://" not in path
    if not self.local:
      import tensorflow as tf  # pylint: disable=g-import-not-at-top  (local writers need no TF)
      self._gfile = tf.io.gfile

  def exists(self, path):
    return os.path.exists(path) if self.local else self._gfile.exists(path)

  def makedirs(self, path):
    os.makedirs(path, exist_ok=True) if self.local else self._gfile.makedirs(path)

  def remove(self, path):
    os.remove(path) if self.local else self._gfile.remove(path)

  def rmtree(self, path):
    shutil.rmtree(path, ignore_errors=True) if self.local else self._gfile.rmtree(path)

  def glob(self, pattern):
    return sorted(glob.glob(pattern)) if self.local else self._gfile.glob(pattern)

  def rename(self, src, dst):
    os.replace(src, dst) if self.local else self._gfile.rename(src, dst, overwrite=True)

  def size(self, path):
    return os.path.getsize(path) if self.local else self._gfile.stat(path).length


def new_stage(target: str) -> str:
  """A new empty staging directory for `target` (local or gs://...); locally, dead writers' stages
  are removed first."""
  stage = f"{target}.staging-{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:8]}"
  files = FileOps(target)
  if files.local:
    remove_dead_stages(target)
  files.makedirs(stage)
  return stage


def replace_dir(stage: str, target: str) -> None:
  """Puts the directory `stage` at `target`; an existing `target` is moved aside, then removed."""
  files, old = FileOps(target), f"{target}.old-{uuid.uuid4().hex[:8]}"
  if files.exists(target):
    files.rename(target, old)
  files.rename(stage, target)
  if files.exists(old):
    files.rmtree(old)


@contextlib.contextmanager
def staged_dir(target: str):
  """Yields a new stage that replaces the directory `target` when the block succeeds; on error it
  is removed and `target` is untouched."""
  target = target.rstrip("/")
  stage, files = new_stage(target), FileOps(target)
  try:
    yield stage
    replace_dir(stage, target)
  finally:
    if files.exists(stage):
      files.rmtree(stage)


def gfile_write_text(path: str, data: str | bytes) -> None:
  """write_text for any tf.io.gfile file system (gs://...)."""
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
  """Yields a binary file (Beam's FileSystems, uncompressed whatever the name) that becomes `path`,
  local or gs://..., when the block succeeds; on error its temporary file is deleted."""
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


def missing_dirs(path) -> list[str]:
  """`path` and those of its ancestors that do not exist yet, deepest first (what makedirs adds)."""
  missing, path = [], os.path.abspath(path)
  while not os.path.exists(path) and os.path.dirname(path) != path:
    missing.append(path)
    path = os.path.dirname(path)
  return missing


def _first_existing(path) -> str:
  missing = missing_dirs(path)
  return os.path.dirname(missing[-1]) if missing else os.path.abspath(path)


def check_output_dir(path, flag: str = "output_dir") -> None:
  """UserError unless the local `path` is, or can be created as, a directory; before any work."""
  from bert_keras.errors import UserError  # pylint: disable=g-import-not-at-top

  path = os.fspath(path)
  if "://" in path:
    return
  existing = _first_existing(path)
  if not os.path.isdir(existing):
    what = "is a file" if existing == os.path.abspath(path) else f"is under the file {existing}"
    raise UserError(f"--{flag}={path} {what}: expected a directory (existing or to be created)")


def check_output_file(path, flag: str = "output_file") -> None:
  """UserError unless the local `path` can be written as a file."""
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
