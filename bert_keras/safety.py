"""Paths named by configs, parameters or data files stay inside the directory chosen for them:
whoever wrote the file cannot make us write or read elsewhere ("../../etc", "/etc").
"""

from __future__ import annotations

import os

from bert_keras.errors import UserError


def safe_join(base_dir: str, relative_path: str, what: str = "path") -> str:
  """`base_dir/relative_path` (not resolved, as the user wrote it); UserError for an empty value,
  an absolute path, a NUL, or anything resolving (symlinks followed) outside `base_dir`."""
  if not isinstance(relative_path, str):
    raise UserError(f"{what}={relative_path!r} must be a string (a path relative to {base_dir})")
  if not relative_path or not relative_path.strip():
    raise UserError(f"{what}={relative_path!r} is empty; expected a path relative to {base_dir}")
  if "\x00" in relative_path:
    raise UserError(f"{what}={relative_path!r} contains a NUL character")
  if os.path.isabs(relative_path) or relative_path.startswith("~"):
    raise UserError(f"{what}={relative_path!r} is absolute; expected a path inside {base_dir}")
  joined = os.path.join(base_dir, relative_path)
  base = os.path.realpath(base_dir)
  resolved = os.path.realpath(joined)
  if resolved != base and not resolved.startswith(base.rstrip(os.sep) + os.sep):
    raise UserError(f"{what}={relative_path!r} escapes {base_dir} (resolves to {resolved}); "
                    "expected a path inside it")
  return joined


def safe_name(name: str, what: str = "name") -> str:
  """A single path component (a model, task or shard name): no separators, not '.' or '..'."""
  if not isinstance(name, str) or not name or name in (".", "..") or "\x00" in name:
    raise UserError(f"{what}={name!r} is not a usable file name")
  if "/" in name or (os.altsep and os.altsep in name) or os.sep in name:
    raise UserError(f"{what}={name!r} contains a path separator; expected a single name")
  return name
