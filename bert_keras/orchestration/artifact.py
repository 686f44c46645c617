"""An artifact: a directory of files plus `artifact.json` saying how it was made (type, producer,
parameters, fingerprints, creation time, metrics, curves, properties)."""

from __future__ import annotations

import hashlib
import json
import os
import time
from typing import Optional

from bert_keras.atomic_io import write_text
from bert_keras.errors import UserError
from bert_keras.json_io import read_json_file

METADATA_FILE = "artifact.json"
# The metadata an artifact carries besides its type, each with the constructor of its empty value.
_FIELDS = {"producer": str, "parameters": dict, "input_fingerprints": dict, "fingerprint": str,
           "created": float, "metrics": dict, "curves": dict, "properties": dict}


class Artifact:
  """A typed output of one execution; subclasses set `TYPE_NAME`, checked when loaded as input."""

  TYPE_NAME = "Artifact"

  def __init__(self, uri: str, metadata: Optional[dict] = None):
    self.uri = uri
    metadata = metadata or {}
    # curves: name -> [[step, value], ...], plotted by the run report; properties: facts a
    # consumer needs ({"blessed": true}, {"task": "polarity"}).
    for name, empty in _FIELDS.items():
      setattr(self, name, metadata.get(name, empty()))

  def path(self, *parts: str) -> str:
    return os.path.join(self.uri, *parts)

  def to_metadata(self) -> dict:
    return {"type": self.TYPE_NAME, **{name: getattr(self, name) for name in _FIELDS}}

  def content_fingerprint(self) -> str:
    """sha256 of the metadata, new whenever the artifact is re-produced (creation time)."""
    blob = json.dumps(self.to_metadata(), sort_keys=True, default=str).encode("utf-8")
    return hashlib.sha256(blob).hexdigest()

  def write_metadata(self) -> None:
    if not self.created:
      self.created = time.time()
    write_text(self.path(METADATA_FILE),
               json.dumps(self.to_metadata(), indent=2, sort_keys=True, default=str))

  @classmethod
  def load(cls, uri: str) -> "Artifact":
    path = os.path.join(uri, METADATA_FILE)
    if not os.path.isfile(path):
      raise UserError(f"{path}: no artifact metadata (is {uri!r} an artifact directory?)")
    metadata = read_json_file(path, "artifact metadata file", expected=dict)
    found = metadata.get("type")
    if cls is not Artifact and found != cls.TYPE_NAME:
      raise UserError(f"{path}: artifact type is {found!r}, expected {cls.TYPE_NAME!r}")
    return cls(uri, metadata)

  @staticmethod
  def exists(uri: str) -> bool:
    return os.path.isfile(os.path.join(uri, METADATA_FILE))

  def __repr__(self) -> str:
    return f"{type(self).__name__}(uri={self.uri!r})"
