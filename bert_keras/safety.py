"""Paths that come from configs, parameters or data files stay inside the directory chosen for them.

A config, a pipeline parameter or a checkpoint index may name files ("serving_dir", "model_name", a
shard file of model.safetensors.index.json). Whoever wrote that file must not be able to make us
write (or read) outside the output (or checkpoint) directory the user picked, e.g. with "../../etc"
or an absolute path. `safe_join` is the one check every such join goes through:

  destination = safe_join(output_dir, parameters["model_name"])   # UserError on "../x", "/etc"
"""

from __future__ import annotations

import os

from bert_keras.errors import UserError


def safe_join(base_dir: str, relative_path: str, what: str = "path") -> str:
  """`base_dir/relative_path`, refusing anything that would resolve outside `base_dir`.

  Refused (UserError naming `what`, the value and the directory): an empty value, absolute paths,
  NUL characters, and any path whose resolved location (symlinks followed) is not `base_dir` or
  below it. The returned path is the plain join (not resolved), so logs show what the user wrote.
  """
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
