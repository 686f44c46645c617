"""Evaluator blessing -> Pusher, on tiny components; the pusher's CLI run alone."""

from __future__ import annotations

import os
import subprocess
import sys

from bert_keras.orchestration.component import Component
from bert_keras.orchestration.standard_artifacts import PushedModel
from components.pusher.executor import next_version
from components.pusher.spec import PusherSpec
from bert_keras.orchestration.local_runner import LocalRunner
from bert_keras.orchestration.pipeline import Pipeline
from tests.pipeline.tiny_components import SourceSpec, TinyEvaluatorSpec, TinyExportSpec


def _pipeline(root, serving, value, lower_bound=0.6):
  model = Component(SourceSpec, "model", parameters={"value": value})
  evaluator = Component(TinyEvaluatorSpec, "evaluator", inputs={"model": model.outputs["number"]},
                        parameters={"thresholds": {"accuracy": {"lower_bound": lower_bound}}})
  export = Component(TinyExportSpec, "export", inputs={"number": model.outputs["number"]})
  pusher = Component(PusherSpec, "pusher",
                     inputs={"saved_model": export.outputs["saved_model"],
                             "blessing": evaluator.outputs["blessing"]},
                     parameters={"serving_dir": str(serving)})
  return Pipeline("push", str(root), [model, evaluator, export, pusher])


def _run(pipeline):
  return LocalRunner(write_report=False, log_fn=lambda _: None).run(pipeline)


def test_blessed_model_is_pushed_under_increasing_versions(tmp_path):
  serving = tmp_path / "serving"
  record = _run(_pipeline(tmp_path / "root", serving, value=70))
  assert record.component("evaluator").metrics["evaluation/accuracy"] == 0.7
  assert record.component("evaluator").properties["blessing/blessed"] is True
  assert (tmp_path / "root" / "evaluator" / "blessing" / "BLESSED").exists()
  assert record.component("pusher").properties["pushed_model/pushed"] is True
  assert (serving / "toy" / "1" / "saved_model.pb").read_text() == "model 70"
  assert not (serving / "toy" / "1" / "artifact.json").exists()
  # Unchanged: cached, nothing pushed again. A new model: version 2, version 1 untouched.
  assert _run(_pipeline(tmp_path / "root", serving, value=70)).component("pusher").status == "cached"
  assert sorted(os.listdir(serving / "toy")) == ["1"]
  _run(_pipeline(tmp_path / "root", serving, value=80))
  assert sorted(os.listdir(serving / "toy")) == ["1", "2"]
  assert (serving / "toy" / "2" / "saved_model.pb").read_text() == "model 80"
  assert next_version(str(serving / "toy")) == 3


def test_unblessed_model_is_not_pushed(tmp_path):
  serving = tmp_path / "serving"
  record = _run(_pipeline(tmp_path / "root", serving, value=50))
  assert record.status == "succeeded"
  assert record.component("evaluator").properties["blessing/blessed"] is False
  assert record.component("evaluator").properties["blessing/failed_checks"] == [
      "accuracy=0.5 >= 0.6"]
  assert (tmp_path / "root" / "evaluator" / "blessing" / "NOT_BLESSED").exists()
  pushed = PushedModel.load(str(tmp_path / "root" / "pusher" / "pushed_model"))
  assert pushed.properties["pushed"] is False
  assert not serving.exists()
  # Lowering the threshold re-blesses (evaluator and pusher rerun, the model is cached).
  record = _run(_pipeline(tmp_path / "root", serving, value=50, lower_bound=0.5))
  assert record.component("model").status == "cached"
  assert record.component("pusher").properties["pushed_model/pushed"] is True
  assert (serving / "toy" / "1" / "saved_model.pb").exists()


def test_pusher_cli_runs_alone(tmp_path):
  root, serving = tmp_path / "root", tmp_path / "serving"
  _run(_pipeline(root, serving, value=90))
  cmd = [sys.executable, "-m", "components.cli", "pusher",
         f"--input_artifact=saved_model={root / 'export' / 'saved_model'}",
         f"--input_artifact=blessing={root / 'evaluator' / 'blessing'}",
         f"--output_artifact=pushed_model={tmp_path / 'cli_push'}", f"--param=serving_dir={serving}",
         "--param=model_name=cli_model"]
  env = dict(os.environ, PYTHONPATH=os.getcwd())
  out = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
  assert out.returncode == 0, out.stderr
  assert "succeeded: pushed_model" in out.stdout
  assert (serving / "cli_model" / "1" / "saved_model.pb").read_text() == "model 90"
  again = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
  assert "cached: pushed_model" in again.stdout
  bad = subprocess.run(cmd[:5] + [f"--output_artifact=pushed_model={tmp_path / 'x'}",
                                  f"--param=serving_dir={serving}"],
                       capture_output=True, text=True, env=env, check=False)
  assert bad.returncode == 2 and "error: " in bad.stderr and "blessing" in bad.stderr
  assert "Traceback" not in bad.stderr
