"""lean_beam_import: a local run imports Beam without its unused connectors, and loses nothing else."""

import subprocess
import sys

from bert_keras.data.lean_beam_import import runs_locally

_CHECK = """
import sys
from bert_keras.data.lean_beam_import import import_beam
import_beam({argv!r})
import apache_beam as beam
skipped = [m for m in ("pymongo", "bson", "pyarrow", "apache_beam.io.gcp.bigquery") if m in sys.modules]
print("skipped" if not skipped else "loaded " + ",".join(skipped))
assert hasattr(beam, "Pipeline") and hasattr(beam.io, "ReadFromText") and hasattr(beam.io, "WriteToText")
from apache_beam.io import fileio
assert hasattr(fileio, "MatchFiles") and hasattr(fileio, "ReadMatches")
from apache_beam.io.filesystems import FileSystems
assert FileSystems.match(["/nonexistent-dir/*.txt"])[0].metadata_list == []
import pyarrow  # still importable afterwards: only refused while Beam loads
"""


def _run(argv):
  result = subprocess.run([sys.executable, "-c", _CHECK.format(argv=argv)], capture_output=True, text=True)
  assert result.returncode == 0, result.stderr[-3000:]
  assert "Could not find a compatible bson package" not in result.stderr
  return result.stdout.strip()


def test_runs_locally():
  assert runs_locally([]) and runs_locally(["--direct_num_workers=2"])
  assert runs_locally(["--runner=FnApiRunner"]) and runs_locally(["--runner", "DirectRunner"])
  assert not runs_locally(["--runner=DataflowRunner"]) and not runs_locally(["--runner", "FlinkRunner"])


def test_local_run_skips_connectors_remote_run_loads_them():
  assert _run([]) == "skipped"
  assert _run(["--runner=DataflowRunner"]).startswith("loaded ")
