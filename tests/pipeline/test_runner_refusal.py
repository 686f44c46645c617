"""The pipeline runner refuses runtime options some component cannot run with before the first
component runs: no component output, no run record, the component's own one-line error, exit 2.

A Dataflow runner without Beam's GCP extras used to be found only when the first Beam component
started, after the components before it had run and written their artifacts. Nothing here touches
the network: the runner check fails at an import.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from bert_keras import beam_runner
from bert_keras.errors import UserError
from bert_keras.beam_runner import local_beam_args
from bert_keras.orchestration.component import Component
from configs.demo import smoke_config
from pipeline.definitions import build_pipeline
from bert_keras.orchestration.local_runner import LocalRunner, PipelineRunError
from bert_keras.orchestration.pipeline import Pipeline
from tests.pipeline.tiny_components import BeamSpec, LocalOnlyBeamSpec, PlainSpec, SourceSpec
from tests.reliability import bad_inputs as B

_DATAFLOW = ["--runner=DataflowRunner", "--project=p", "--region=us-central1",
             "--temp_location=gs://b/tmp"]


def _without_gcp_extras(monkeypatch) -> str:
  """Makes the Dataflow client's import fail, as without Beam's GCP extras; returns the error a
  Beam component's executor gives for `_DATAFLOW` then."""
  monkeypatch.setitem(sys.modules, beam_runner.DATAFLOW_CLIENT_MODULE, None)
  with pytest.raises(UserError) as info:
    local_beam_args(_DATAFLOW)
  return str(info.value)


def _refused(runner, pipeline) -> str:
  """The runner's refusal of `pipeline`: a UserError that is not a failed run's PipelineRunError."""
  with pytest.raises(UserError) as info:
    runner.run(pipeline)
  assert not isinstance(info.value, PipelineRunError), info.value
  return str(info.value)


def _tiny(root, beam_spec=BeamSpec):
  """plain (no Beam) -> listed and ordered before the Beam component, so it would run first."""
  plain = Component(PlainSpec, "plain")
  beam = Component(beam_spec, "beam")
  return Pipeline("tiny", str(root), [plain, beam])


def test_dataflow_without_gcp_extras_is_refused_before_any_component_runs(tmp_path, monkeypatch):
  expected = _without_gcp_extras(monkeypatch)
  runner = LocalRunner(beam_pipeline_args=_DATAFLOW, write_report=False, log_fn=lambda _: None)
  assert _refused(runner, _tiny(tmp_path)) == expected
  assert os.listdir(tmp_path) == []  # no component output, no staging directory, no run record


def test_a_cached_pipeline_is_refused_too(tmp_path, monkeypatch):
  """The whole run is refused, not just what the cache does not hold."""
  LocalRunner(write_report=False, log_fn=lambda _: None).run(_tiny(tmp_path))
  before = sorted(os.listdir(tmp_path / "runs"))
  expected = _without_gcp_extras(monkeypatch)
  runner = LocalRunner(beam_pipeline_args=_DATAFLOW, write_report=False, log_fn=lambda _: None)
  assert _refused(runner, _tiny(tmp_path)) == expected
  assert sorted(os.listdir(tmp_path / "runs")) == before


def test_a_component_refusing_its_options_stops_the_run_before_its_upstream_runs(tmp_path):
  source = Component(SourceSpec, "source")
  local_only = Component(LocalOnlyBeamSpec, "local_only")
  runner = LocalRunner(beam_pipeline_args=["--runner=FlinkRunner"], write_report=False,
                       log_fn=lambda _: None)
  message = _refused(runner, Pipeline("p", str(tmp_path), [source, local_only]))
  assert message == "--runner=FlinkRunner: this component runs on the DirectRunner only"
  assert os.listdir(tmp_path) == []


def test_the_real_pipeline_is_refused_before_corpus_ingestion(tmp_path, monkeypatch):
  expected = _without_gcp_extras(monkeypatch)
  pipeline = build_pipeline(smoke_config(max_documents=2), str(tmp_path / "root"),
                            str(tmp_path / "serving"))
  runner = LocalRunner(beam_pipeline_args=_DATAFLOW, write_report=False, log_fn=lambda _: None)
  assert _refused(runner, pipeline) == expected
  assert os.listdir(tmp_path) == []


def _run_module(module, *args):
  env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="", PYTHONPATH=B.ROOT)
  return subprocess.run([sys.executable, *B.hide_gcp_extras(["-m", module, *args])], cwd=B.ROOT,
                        env=env, capture_output=True, text=True, timeout=300)


def test_demo_with_dataflow_without_its_extras_is_the_components_error_line(tmp_path):
  beam_args = f"--beam_pipeline_args={' '.join(_DATAFLOW)}"
  demo = _run_module("pipeline.demo", f"--output_dir={tmp_path / 'demo'}", beam_args)
  corpus = B.write(str(tmp_path / "corpus.txt"), "One sentence.\nAnother one.\n")
  component = _run_module("components.cli", "corpus_ingestion",
                          f'--param=bert_text_corpora=["{corpus}"]',
                          f"--output_artifact=corpus={tmp_path / 'corpus'}", beam_args)
  line = B.user_error_line(demo, "--runner=DataflowRunner", "Dataflow runner is not available")
  assert line == B.user_error_line(component)
  assert sorted(os.listdir(tmp_path)) == ["corpus.txt"]  # neither wrote anything
