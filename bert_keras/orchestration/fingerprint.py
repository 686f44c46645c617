"""Cache keys: sha256 of the spec and its VERSION, the resolved parameters, the input artifacts'
metadata and the files `is_path` parameters name. A re-produced input has a new creation time, so
everything downstream of a changed component reruns, and nothing else."""

from __future__ import annotations

import hashlib
import json
import os
from typing import Any, Mapping

from bert_keras.orchestration.artifact import Artifact


def path_signature(path: str) -> list:
  """[relative path, size, mtime_ns] of a file or of every file under a directory."""
  if os.path.isfile(path):
    st = os.stat(path)
    return [[os.path.basename(path), st.st_size, st.st_mtime_ns]]
  if os.path.isdir(path):
    out = []
    for root, dirs, files in os.walk(path):
      dirs.sort()
      for name in sorted(files):
        full = os.path.join(root, name)
        st = os.stat(full)
        out.append([os.path.relpath(full, path), st.st_size, st.st_mtime_ns])
    return out
  return [[path, "missing"]]


def _paths_of(value: Any) -> list[str]:
  if isinstance(value, str):
    return [value] if value else []
  if isinstance(value, (list, tuple)):
    return [p for v in value for p in _paths_of(v)]
  if isinstance(value, dict):
    return [p for v in value.values() for p in _paths_of(v)]
  return []


def execution_fingerprint(spec_class, parameters: Mapping[str, Any],
                          inputs: Mapping[str, Artifact]) -> str:
  files = {}
  for name, param in spec_class.PARAMETERS.items():
    if param.is_path:
      files[name] = [path_signature(p) for p in _paths_of(parameters.get(name))]
  key = {
      "spec": spec_class.type_name(),
      "version": spec_class.VERSION,
      "parameters": parameters,
      "inputs": {name: a.content_fingerprint() for name, a in sorted(inputs.items())
                 if a is not None},
      "files": files,
  }
  blob = json.dumps(key, sort_keys=True, default=str).encode("utf-8")
  return hashlib.sha256(blob).hexdigest()
