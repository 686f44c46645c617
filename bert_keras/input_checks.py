"""Checks of a command's input paths that need no TensorFlow, run before importing it: a wrong
path fails in a second instead of after TensorFlow loads (5-27 s). For gs://, TensorFlow retries a
failed connection for minutes (104 s measured offline), so one connection is tried first.
"""

from __future__ import annotations

import glob
import os
import socket

from bert_keras.errors import UserError

# TensorFlow's GCS endpoint; a connection opens well under a second where there is a network.
GCS_ENDPOINT = ("storage.googleapis.com", 443)
GCS_CONNECT_TIMEOUT_S = 5.0


def is_remote(path: str) -> bool:
  return "://" in path


def check_reachable(path: str, flag: str) -> None:
  """For a gs:// path: UserError unless a connection to Cloud Storage opens in time."""
  if not path.startswith("gs://"):
    return
  host, port = GCS_ENDPOINT
  try:
    socket.create_connection((host, port), timeout=GCS_CONNECT_TIMEOUT_S).close()
  except OSError as e:
    raise UserError(f"--{flag}={path}: cannot reach Cloud Storage ({host}:{port}: "
                    f"{e.strerror or e}) within {GCS_CONNECT_TIMEOUT_S:g} s; check the network "
                    "or use a local path") from None


def split_patterns(value: str) -> list[str]:
  """`--input_files`: 'a.txt, data/*.gz' -> ['a.txt', 'data/*.gz'] (blanks dropped)."""
  return [pattern.strip() for pattern in (value or "").split(",") if pattern.strip()]


def local_input_files(value: str, flag: str = "input_files") -> list[str]:
  """The files of `value`: each local glob's matches sorted, other paths as given; UserError for a
  glob that matches nothing."""
  files = []
  for pattern in split_patterns(value):
    globbed = glob.has_magic(pattern) and not is_remote(pattern)
    matched = sorted(glob.glob(pattern)) if globbed else [pattern]
    if not matched:
      raise UserError(f"--{flag}={value}: {pattern!r} matches no file")
    files += matched
  return files


def check_readable_file(path: str, flag: str, what: str = "file") -> None:
  """UserError unless `path` is a file this process can read; `flag` "": found through a flag."""
  _check_readable(path, flag, what, directory=False)


def check_readable_dir(path: str, flag: str, what: str = "directory") -> None:
  """UserError unless `path` is a directory this process can list."""
  _check_readable(path, flag, what, directory=True)


def _check_readable(path: str, flag: str, what: str, directory: bool) -> None:
  if is_remote(path):
    check_reachable(path, flag)
    return
  where = f"--{flag}={path}" if flag else path
  if not os.path.exists(path):
    raise UserError(f"{where}: no such {what}")
  if os.path.isdir(path) != directory:
    raise UserError(f"{where}: is a {'file' if directory else 'directory'}; expected a {what}")
  try:
    if directory:
      os.listdir(path)
    else:
      open(path, "rb").close()  # pylint: disable=consider-using-with
  except OSError as e:
    raise UserError(f"{where}: cannot read the {what} ({e.strerror or e})") from None
