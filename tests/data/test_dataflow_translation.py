"""Every Beam pipeline of the library translates for Dataflow without a cluster: Beam's
DataflowRunner with `--dry_run` builds the job (options validated, DoFns pickled, the --setup_file
package built) and submits nothing. It runs in a process that can import the library's sources
alone, as a Dataflow worker holding the wheel (tests/data/dataflow_dry_run.py), and nothing in it
reaches the network: a connection or name lookup beyond 127.0.0.1 fails the run at once.

Needs Beam's GCP extras (requirements-gcp.txt): installed (the image), or in .venv/gcp-extras,
where `make test` installs them for this test's process alone.
"""

import json
import os
import shutil
import subprocess
import sys

import pytest

from bert_keras import beam_runner

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DRY_RUN = os.path.join(ROOT, "tests", "data", "dataflow_dry_run.py")
# What the wheel is built from (setup.py is Dataflow's --setup_file).
LIBRARY_SOURCES = ("setup.py", "pyproject.toml", "README.md", "bert_keras")
# Each pipeline's labelled steps (a step's own sub-steps are named "<step>/...").
STEPS = {
    "corpus_ingestion": {"ReadWikipedia0", "ReadBertText0", "ReadLines0", "Flatten", "KeepSlice",
                         "KeyByShard", "Write", "AllWritten", "RemoveRuns"},
    "vocabulary": {"ReadCorpus", "Learn", "Write"},
    "learn_vocab": {"ReadDocuments", "ReportProgress", "Learn", "Write"},
    "create_pretraining_data": {"ReadDocuments", "ReportProgress", "Tokenize", "CreateExamples",
                                "ReportInstances", "WriteShards"},
}

# Where `make test` installs Beam's GCP extras (the Makefile's GCP_EXTRAS).
GCP_EXTRAS = os.path.join(sys.prefix, "gcp-extras")

pytestmark = pytest.mark.skipif(
    beam_runner.dataflow_runner_missing() is not None and not os.path.isdir(GCP_EXTRAS),
    reason=f"needs Beam's GCP extras: make setup (installs requirements-gcp.txt into {GCP_EXTRAS})")


@pytest.fixture(scope="module")
def translated(tmp_path_factory):
  """The report of dataflow_dry_run.py, run on a copy of the library's sources alone."""
  tmp = tmp_path_factory.mktemp("dataflow")
  source = tmp / "library"
  source.mkdir()
  for name in LIBRARY_SOURCES:
    if os.path.isdir(os.path.join(ROOT, name)):
      shutil.copytree(os.path.join(ROOT, name), source / name,
                      ignore=shutil.ignore_patterns("__pycache__"))
    else:
      shutil.copy(os.path.join(ROOT, name), source / name)
  # The checkout's root (components/, pipeline/, configs/) is left off the path.
  path = [str(source), GCP_EXTRAS] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep)
                                      if p and os.path.realpath(p) != os.path.realpath(ROOT)]
  env = dict(os.environ, PYTHONPATH=os.pathsep.join(path), TF_CPP_MIN_LOG_LEVEL="3",
             CUDA_VISIBLE_DEVICES="")
  run = subprocess.run([sys.executable, "-P", DRY_RUN, str(tmp / "work"), str(source / "setup.py")],
                       cwd=tmp, env=env, capture_output=True, text=True, timeout=300)
  assert run.returncode == 0, run.stderr[-3000:]
  return json.loads(run.stdout.splitlines()[-1])


def test_the_translating_process_cannot_import_the_application(translated):
  assert translated["application"] == []


@pytest.mark.parametrize("pipeline", sorted(STEPS))
def test_the_pipeline_translates_for_dataflow_with_the_library_staged(pipeline, translated):
  job = translated[pipeline]
  assert STEPS[pipeline] <= set(job["steps"]), sorted(set(job["steps"]) - STEPS[pipeline])
  assert "workflow.tar.gz" in job["staged"], job["staged"]  # the package built from setup.py


@pytest.mark.parametrize("pipeline", sorted(STEPS))
def test_what_its_workers_unpickle_needs_only_the_library_beam_and_the_stdlib(pipeline, translated):
  modules = translated[pipeline]["modules"]
  tops = {module.split(".")[0] for module in modules}
  assert "bert_keras" in tops, modules  # the pipeline's own DoFns are among them
  assert tops <= {"bert_keras", "apache_beam"} | sys.stdlib_module_names, sorted(
      tops - {"bert_keras", "apache_beam"} - sys.stdlib_module_names)
