"""Launcher, spec validation, wiring errors, fingerprints and the error text of a failed execution,
on the tiny test components."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys

import pytest

from bert_keras.errors import UserError
from bert_keras.orchestration.artifact import Artifact
from bert_keras.orchestration.component import Component
from bert_keras.orchestration.component_launcher import ComponentLauncher, error_text, execution_fingerprint
from bert_keras.configs.model import ConfigError
from bert_keras.orchestration.pipeline import Pipeline
from tests.pipeline.tiny_components import AddSpec, Number, SourceSpec, read_number
from tests.reliability import bad_inputs as B


def _source(tmp_path, value=3, force=False):
  launcher = ComponentLauncher(SourceSpec, "src", {}, {"number": str(tmp_path / "n")},
                               {"value": value})
  return launcher.launch(force=force)


def test_launch_writes_artifact_with_metadata(tmp_path):
  result = _source(tmp_path)
  assert result.status == "succeeded"
  artifact = Number.load(str(tmp_path / "n"))
  assert read_number(artifact) == 3
  meta = json.loads((tmp_path / "n" / "artifact.json").read_text())
  assert meta["type"] == "Number" and meta["producer"] == "src"
  assert meta["parameters"] == {"value": 3, "source_file": ""}
  assert meta["metrics"] == {"value": 3} and meta["created"] > 0
  assert meta["fingerprint"] == result.fingerprint


def test_cache_hit_force_and_parameter_change(tmp_path):
  first = _source(tmp_path)
  assert _source(tmp_path).status == "cached"
  forced = _source(tmp_path, force=True)
  assert forced.status == "succeeded"
  assert forced.outputs["number"].created > first.outputs["number"].created
  changed = _source(tmp_path, value=4)
  assert changed.status == "succeeded" and changed.fingerprint != first.fingerprint
  assert os.listdir(tmp_path) == ["n"]  # no staging or old directories left behind


def test_input_fingerprint_follows_upstream_reproduction(tmp_path):
  a = _source(tmp_path).outputs["number"]
  fp1 = execution_fingerprint(AddSpec, AddSpec.resolve_parameters({}), {"a": a})
  assert fp1 == execution_fingerprint(AddSpec, AddSpec.resolve_parameters({}), {"a": a})
  a2 = _source(tmp_path, force=True).outputs["number"]
  assert execution_fingerprint(AddSpec, AddSpec.resolve_parameters({}), {"a": a2}) != fp1


def test_parameter_and_input_validation(tmp_path):
  with pytest.raises(UserError, match="unknown parameters \\['vaule'\\]"):
    ComponentLauncher(SourceSpec, "src", {}, {"number": str(tmp_path)}, {"vaule": 1})
  with pytest.raises(UserError, match="value='1' must be of type int"):
    ComponentLauncher(SourceSpec, "src", {}, {"number": str(tmp_path)}, {"value": "1"})
  with pytest.raises(UserError, match="input 'a' \\(Number\\) is required"):
    ComponentLauncher(AddSpec, "add", {}, {"sum": str(tmp_path)}, {})
  plain = Artifact(str(tmp_path))
  with pytest.raises(UserError, match="input 'a' must be a Number, got Artifact"):
    ComponentLauncher(AddSpec, "add", {"a": plain}, {"sum": str(tmp_path)}, {})


def test_load_checks_type_and_metadata(tmp_path):
  _source(tmp_path)
  with pytest.raises(UserError, match="artifact type is 'Number', expected 'Vocabulary'"):
    from bert_keras.orchestration.standard_artifacts import Vocabulary
    Vocabulary.load(str(tmp_path / "n"))
  with pytest.raises(UserError, match="no artifact metadata"):
    Number.load(str(tmp_path))


def test_component_wiring_errors():
  one = Component(SourceSpec, "one")
  with pytest.raises(UserError, match="input 'a' \\(Number\\) is required"):
    Component(AddSpec, "add")
  with pytest.raises(UserError, match="unknown inputs \\['c'\\]"):
    Component(AddSpec, "add", inputs={"a": one.outputs["number"], "c": one.outputs["number"]})
  with pytest.raises(UserError, match="component name"):
    Component(SourceSpec, "bad name")
  add = Component(AddSpec, "add", inputs={"a": one.outputs["number"]})
  with pytest.raises(UserError, match="not in the pipeline"):
    Pipeline("p", "/tmp/x", [add])
  with pytest.raises(UserError, match="duplicate component names \\['one'\\]"):
    Pipeline("p", "/tmp/x", [one, Component(SourceSpec, "one")])


def test_staging_left_by_a_killed_process_is_removed(tmp_path):
  # pid above any pid_max: no such process
  stale = tmp_path / f"n.staging-{socket.gethostname()}-999999999-deadbeef"
  stale.mkdir()
  (stale / "half_written").write_text("x")
  assert _source(tmp_path).status == "succeeded"
  assert sorted(os.listdir(tmp_path)) == ["n"]


def _failing_add(tmp_path, fail):
  src = _source(tmp_path)
  launcher = ComponentLauncher(AddSpec, "add", {"a": src.outputs["number"]},
                               {"sum": str(tmp_path / "sum")}, {"fail": fail})
  return launcher.launch()


def test_failed_execution_error_is_a_user_errors_message_or_a_bugs_class_and_message(tmp_path):
  """A UserError is reported by its message (CLI line `error: <message>`, run record); a bug keeps
  its class name, so the record still says what it was."""
  user = _failing_add(tmp_path, "user")
  assert user.status == "failed" and isinstance(user.exception, UserError)
  assert user.error == "add: refusing to add (fail='user')"
  bug = _failing_add(tmp_path, "bug")
  assert bug.error == "ZeroDivisionError: division by zero" and "Traceback" in bug.traceback


def test_error_text_of_user_error_subclasses_and_of_bare_exceptions():
  assert error_text(ConfigError("config.json: unknown key 'hiden_size'")) == (
      "config.json: unknown key 'hiden_size'")
  assert error_text(KeyError("x")) == "KeyError: 'x'"
  assert error_text(RuntimeError()) == "RuntimeError" and error_text(UserError()) == "UserError"


def test_component_cli_prints_a_user_errors_message_alone(tmp_path):
  """`error: <message>`, exit 2, no `UserError:` before the message."""
  out = tmp_path / "corpus"
  env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="", PYTHONPATH=B.ROOT)
  result = subprocess.run([sys.executable, "-m", "components.cli", "corpus_ingestion",
                           f"--output_artifact=corpus={out}"], cwd=B.ROOT, env=env, capture_output=True,
                          text=True, timeout=300)
  line = B.user_error_line(result)
  assert line == ("error: corpus ingestion: no source given (wikipedia_dumps, bert_text_corpora, "
                  "line_corpora are all empty)")
  assert os.listdir(tmp_path) == []  # no staging or temporary directory left
