"""Imports Apache Beam without the I/O connectors a local pipeline of ours never uses.

Why: `import apache_beam` imports every connector `apache_beam.io` re-exports, among them MongoDB
(pymongo, bson), BigQuery / Pub/Sub (requests, regex, google-cloud clients) and the Arrow type
bridge (pyarrow): ~0.35 CPU-seconds of the ~1.3 s the import takes, paid by every run of
scripts/create_pretraining_data.py (about 4% of a whole run on the embedded Wikipedia dump).
Beam itself guards each of these imports with `except ImportError` (the connector is then simply
not registered), so they are refused while `apache_beam` loads and importable again afterwards:
a later `import pymongo` or `from apache_beam.io.gcp import bigquery` works as usual.

Only for local runs (the FnApiRunner / DirectRunner): a remote runner's submission may need the
cloud connectors in `apache_beam.io`'s namespace, so `import_beam(argv)` imports Beam whole there.
"""

from __future__ import annotations

import importlib
import importlib.abc
import logging
import sys
from typing import Sequence

from bert_keras.beam_runner import LOCAL_RUNNERS, option_value

# Top-level packages, and Beam modules, that `import apache_beam` loads only for its connectors.
_SKIPPED_PACKAGES = ("pymongo", "bson", "pyarrow")
_SKIPPED_MODULES = ("apache_beam.io.gcp.bigquery",)


class _RefuseConnectors(importlib.abc.MetaPathFinder):
  """A finder that makes the skipped modules raise ImportError (Beam then skips the connector)."""

  def find_spec(self, fullname, path=None, target=None):
    if fullname in _SKIPPED_MODULES or fullname.split(".", 1)[0] in _SKIPPED_PACKAGES:
      raise ImportError(f"{fullname} is not loaded for a local Beam run", name=fullname)
    return None


def runs_locally(argv: Sequence[str]) -> bool:
  """True unless `argv` names a runner other than Beam's local ones (--runner=X or --runner X)."""
  return option_value(list(argv), "runner") in LOCAL_RUNNERS


def import_beam(argv: Sequence[str] = ()) -> None:
  """Imports `apache_beam`, without its unused connectors when `argv` runs locally.

  A no-op when Beam is already imported (its connectors are then whatever that import loaded).
  """
  if "apache_beam" in sys.modules or not runs_locally(argv):
    importlib.import_module("apache_beam")
    return
  finder = _RefuseConnectors()
  # mongodbio logs a warning when pymongo is missing; it is expected here.
  mongo_logger = logging.getLogger("apache_beam.io.mongodbio")
  level = mongo_logger.level
  mongo_logger.setLevel(logging.ERROR)
  sys.meta_path.insert(0, finder)
  try:
    importlib.import_module("apache_beam")
  finally:
    sys.meta_path.remove(finder)
    mongo_logger.setLevel(level)
