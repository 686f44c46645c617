"""The local runner on tiny components: ordering, caching, forced reruns, failures, run records."""

from __future__ import annotations

import json
import os

import pytest

from bert_keras.orchestration.component import Component
from bert_keras.orchestration.local_runner import LocalRunner, PipelineRunError
from bert_keras.orchestration.pipeline import Pipeline
from tests.pipeline.tiny_components import AddSpec, BeamSpec, PlainSpec, SourceSpec


def _diamond(root, offset=0, fail="", source_file=""):
  """one, two -> add (one + two + offset) -> total (add + 100); listed out of order on purpose."""
  one = Component(SourceSpec, "one", parameters={"value": 1, "source_file": source_file})
  two = Component(SourceSpec, "two", parameters={"value": 2})
  add = Component(AddSpec, "add", inputs={"a": one.outputs["number"], "b": two.outputs["number"]},
                  parameters={"offset": offset, "fail": fail})
  total = Component(AddSpec, "total", inputs={"a": add.outputs["sum"]}, parameters={"offset": 100})
  return Pipeline("diamond", str(root), [total, add, two, one])


def _statuses(record):
  return {c.name: c.status for c in record.components}


def _runner(**kw):
  logs = []
  return LocalRunner(write_report=False, log_fn=logs.append, **kw), logs


def test_runs_in_dependency_order_and_computes(tmp_path):
  runner, logs = _runner()
  record = runner.run(_diamond(tmp_path))
  assert [c.name for c in record.components] == ["two", "one", "add", "total"]
  assert set(_statuses(record).values()) == {"succeeded"}
  assert record.component("total").metrics == {"sum/sum": 103}
  assert read_number_at(tmp_path / "total" / "sum") == 103
  assert any("[3/4] add: running" in line for line in logs)


def read_number_at(path):
  with open(os.path.join(path, "value.txt"), encoding="utf-8") as f:
    return int(f.read())


def test_second_run_is_served_from_cache(tmp_path):
  runner, _ = _runner()
  runner.run(_diamond(tmp_path))
  created = os.stat(tmp_path / "add" / "sum" / "value.txt").st_mtime_ns
  record = runner.run(_diamond(tmp_path))
  assert set(_statuses(record).values()) == {"cached"}
  assert os.stat(tmp_path / "add" / "sum" / "value.txt").st_mtime_ns == created
  assert record.component("total").metrics == {"sum/sum": 103}  # metrics come from the cache too


def test_changed_parameter_reruns_that_component_and_downstream_only(tmp_path):
  runner, _ = _runner()
  runner.run(_diamond(tmp_path))
  record = runner.run(_diamond(tmp_path, offset=10))
  assert _statuses(record) == {"two": "cached", "one": "cached", "add": "succeeded",
                               "total": "succeeded"}
  assert read_number_at(tmp_path / "total" / "sum") == 113


def test_changed_input_file_invalidates_cache(tmp_path):
  source = tmp_path / "source.txt"
  source.write_text("5")
  runner, _ = _runner()
  runner.run(_diamond(tmp_path / "root", source_file=str(source)))
  assert _statuses(runner.run(_diamond(tmp_path / "root", source_file=str(source)))) == {
      "two": "cached", "one": "cached", "add": "cached", "total": "cached"}
  source.write_text("50")
  os.utime(source, ns=(1, 1))  # a different mtime even on coarse-grained file systems
  record = runner.run(_diamond(tmp_path / "root", source_file=str(source)))
  assert _statuses(record)["one"] == "succeeded" and _statuses(record)["two"] == "cached"
  assert read_number_at(tmp_path / "root" / "total" / "sum") == 1 + 50 + 2 + 100


def test_force_all_and_force_one(tmp_path):
  runner, _ = _runner()
  runner.run(_diamond(tmp_path))
  record = _runner(force=True)[0].run(_diamond(tmp_path))
  assert set(_statuses(record).values()) == {"succeeded"}
  record = _runner(force=["one"])[0].run(_diamond(tmp_path))
  assert _statuses(record) == {"two": "cached", "one": "succeeded", "add": "succeeded",
                               "total": "succeeded"}
  with pytest.raises(Exception, match="unknown components"):
    _runner(force=["nope"])[0].run(_diamond(tmp_path))


def test_failure_stops_run_keeps_earlier_artifacts_and_rerun_continues(tmp_path):
  runner, _ = _runner()
  runner.run(_diamond(tmp_path))
  before = (tmp_path / "add" / "sum" / "artifact.json").read_text()
  with pytest.raises(PipelineRunError, match="component add failed: ZeroDivisionError") as info:
    runner.run(_diamond(tmp_path, offset=7, fail="bug"))
  record = info.value.record
  assert _statuses(record) == {"two": "cached", "one": "cached", "add": "failed",
                               "total": "not_run"}
  assert "division by zero" in record.component("add").error
  # The old artifact of the failed component is intact and no staging directory is left.
  assert (tmp_path / "add" / "sum" / "artifact.json").read_text() == before
  assert sorted(os.listdir(tmp_path / "add")) == ["sum"]
  assert read_number_at(tmp_path / "total" / "sum") == 103
  # The record of the failed run is on disk.
  with open(os.path.join(record.report_dir, "run_record.json"), encoding="utf-8") as f:
    saved = json.load(f)
  assert saved["status"] == "failed"
  assert [c["status"] for c in saved["components"] if c["name"] == "add"] == ["failed"]
  # Fixing the cause and rerunning continues from the cache.
  record = runner.run(_diamond(tmp_path, offset=7))
  assert _statuses(record) == {"two": "cached", "one": "cached", "add": "succeeded",
                               "total": "succeeded"}
  assert read_number_at(tmp_path / "total" / "sum") == 110


def test_user_error_fails_with_its_message(tmp_path):
  runner, logs = _runner()
  with pytest.raises(PipelineRunError, match="component add failed: add: refusing to add") as info:
    runner.run(_diamond(tmp_path, fail="user"))
  assert not any("Traceback" in line for line in logs)  # user errors print one line
  # The record keeps the message alone (a bug's error keeps its class name, test above).
  assert info.value.record.component("add").error == "add: refusing to add (fail='user')"
  assert "[3/4] add: FAILED: add: refusing to add (fail='user')" in logs
  assert not (tmp_path / "add" / "sum").exists()


def test_beam_args_only_reach_beam_components(tmp_path):
  beam = Component(BeamSpec, "beam")
  plain = Component(PlainSpec, "plain")
  runner, _ = _runner(beam_pipeline_args=["--direct_num_workers=2"],
                      distribution_strategy="mirrored")
  record = runner.run(Pipeline("opts", str(tmp_path), [beam, plain]))
  assert record.component("beam").properties["number/beam_pipeline_args"] == ["--direct_num_workers=2"]
  assert record.component("plain").properties["number/beam_pipeline_args"] == []
  # Runtime options are not part of the cache key.
  record = _runner(beam_pipeline_args=["--direct_num_workers=1"])[0].run(
      Pipeline("opts", str(tmp_path), [beam, plain]))
  assert set(_statuses(record).values()) == {"cached"}


def test_run_record_json_table_and_html_report(tmp_path, capsys):
  record = LocalRunner(log_fn=lambda _: None).run(_diamond(tmp_path))
  table = capsys.readouterr().out
  assert "total" in table and "sum=103" in table and "succeeded" in table
  with open(os.path.join(record.report_dir, "run_record.json"), encoding="utf-8") as f:
    saved = json.load(f)
  assert [c["name"] for c in saved["components"]] == ["two", "one", "add", "total"]
  assert saved["components"][2]["artifacts"]["sum"]["type"] == "Number"
  html = open(os.path.join(record.report_dir, "report.html"), encoding="utf-8").read()
  assert "curves_add.png" in html and "metric_sum.png" in html
  with open(os.path.join(record.report_dir, "curves_add.png"), "rb") as f:
    assert f.read(8) == b"\x89PNG\r\n\x1a\n"
