"""The compiled KFP spec run by kfp's own local runner (`kfp.local`, subprocesses, no Docker) on
tiny components: the blessing gates the pusher as under the local runner. The real pipeline on a
slice runs under kfp.local in test_pipeline_end_to_end.py, beside its local run."""

import os

import pytest

from bert_keras.orchestration.component import Component
from bert_keras.orchestration.standard_artifacts import PushedModel
from components.pusher.spec import PusherSpec
from components.cli import step_arguments
from bert_keras.orchestration.local_runner import LocalRunner
from bert_keras.orchestration.pipeline import Pipeline
from tests.pipeline import tiny_components
from tests.pipeline.kfp_local import kfp_local_run, task_dir as _task_dir  # noqa: F401 (a fixture)


def _tiny_cli(spec_class):
  if spec_class.__module__ == tiny_components.__name__:
    return ["-m", "tests.pipeline.tiny_cli", spec_class.__name__]
  return step_arguments(spec_class)


def _push_pipeline(root, serving, value):
  model = Component(tiny_components.SourceSpec, "model", parameters={"value": value})
  evaluator = Component(tiny_components.TinyEvaluatorSpec, "evaluator",
                        inputs={"model": model.outputs["number"]},
                        parameters={"thresholds": {"accuracy": {"lower_bound": 0.6}}})
  export = Component(tiny_components.TinyExportSpec, "export",
                     inputs={"number": model.outputs["number"]})
  pusher = Component(PusherSpec, "pusher", inputs={"saved_model": export.outputs["saved_model"],
                                                   "blessing": evaluator.outputs["blessing"]},
                     parameters={"serving_dir": str(serving)})
  return Pipeline("push", str(root), [model, evaluator, export, pusher])


@pytest.mark.parametrize("value, blessed", [(70, True), (50, False)])
def test_the_blessing_gates_the_pusher(tmp_path, kfp_local_run, value, blessed):
  run_dir = kfp_local_run(_push_pipeline(tmp_path / "unused", tmp_path / "serving", value),
                          cli=_tiny_cli)
  blessing = tiny_components.TinyEvaluatorSpec.OUTPUTS["blessing"].load(
      os.path.join(_task_dir(run_dir, "evaluator"), "blessing"))
  assert blessing.properties["blessed"] is blessed
  assert (_task_dir(run_dir, "pusher") is not None) is blessed  # skipped when not blessed
  if blessed:
    pushed = PushedModel.load(os.path.join(_task_dir(run_dir, "pusher"), "pushed_model"))
    assert pushed.properties["pushed"] is True
    assert (tmp_path / "serving" / "toy" / "1" / "saved_model.pb").read_text() == "model 70"
  else:
    assert not (tmp_path / "serving").exists()
  # The local runner on the same definition decides the same.
  record = LocalRunner(write_report=False, log_fn=lambda _: None).run(
      _push_pipeline(tmp_path / "local", tmp_path / "local_serving", value))
  assert record.component("pusher").properties["pushed_model/pushed"] is blessed
