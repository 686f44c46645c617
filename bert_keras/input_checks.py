"""Checks of a command's input paths that need no TensorFlow, run by scripts before importing it:
a wrong path fails in about a second with one line, instead of after TensorFlow has loaded (5-8 s
on 2 cores, up to 27 s measured for a fine-tuning command).

A file that exists but cannot be read (no read permission; a directory where a file is expected)
is named here; the same case met later, in a reader, is answered by `errors.run_main`.

gs:// paths: TensorFlow's GCS file system retries a failed connection for minutes (104 s measured
without network) before it fails, printing nothing; `check_reachable` tries one connection, with
a short timeout, before TensorFlow is asked.
"""

from __future__ import annotations

import glob
import os
import socket

from bert_keras.errors import UserError

# Where TensorFlow's GCS file system connects (its default endpoint).
GCS_ENDPOINT = ("storage.googleapis.com", 443)
# A connection to Cloud Storage takes well under a second where there is a network.
GCS_CONNECT_TIMEOUT_S = 5.0


def is_remote(path: str) -> bool:
  return "://" in path


def check_reachable(path: str, flag: str) -> None:
  """For a gs:// path: UserError unless one TCP connection to Cloud Storage opens within
  GCS_CONNECT_TIMEOUT_S. Other schemes are left to their readers."""
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
  """`--input_files` in every script: comma-separated paths or glob patterns -> the patterns in
  their order, blanks dropped ('a.txt, data/*.gz' -> ['a.txt', 'data/*.gz'])."""
  return [pattern.strip() for pattern in (value or "").split(",") if pattern.strip()]


def local_input_files(value: str, flag: str = "input_files") -> list[str]:
  """The files of `value` (split_patterns): each glob's matches sorted, in the patterns' order;
  a plain or remote path as given (check_readable_file names its problem). UserError for a glob
  that matches nothing."""
  files = []
  for pattern in split_patterns(value):
    globbed = glob.has_magic(pattern) and not is_remote(pattern)
    matched = sorted(glob.glob(pattern)) if globbed else [pattern]
    if not matched:
      raise UserError(f"--{flag}={value}: {pattern!r} matches no file")
    files += matched
  return files


def check_readable_file(path: str, flag: str, what: str = "file") -> None:
  """UserError unless the local `path` is a file this process can open for reading. `flag` names
  the flag whose value `path` is; "" for a file found through one (a data file in --data_dir)."""
  if is_remote(path):
    check_reachable(path, flag)
    return
  where = f"--{flag}={path}" if flag else path
  if not os.path.exists(path):
    raise UserError(f"{where}: no such {what}")
  if os.path.isdir(path):
    raise UserError(f"{where}: is a directory; expected a {what}")
  try:
    with open(path, "rb"):
      pass
  except OSError as e:
    raise UserError(f"{where}: cannot read the {what} ({e.strerror or e})") from None


def check_readable_dir(path: str, flag: str, what: str = "directory") -> None:
  """UserError unless the local `path` is a directory this process can list and enter."""
  if is_remote(path):
    check_reachable(path, flag)
    return
  if not os.path.exists(path):
    raise UserError(f"--{flag}={path}: no such {what}")
  if not os.path.isdir(path):
    raise UserError(f"--{flag}={path}: is a file; expected a {what}")
  try:
    os.listdir(path)
  except OSError as e:
    raise UserError(f"--{flag}={path}: cannot read the {what} ({e.strerror or e})") from None
