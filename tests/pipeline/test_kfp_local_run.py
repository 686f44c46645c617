"""The compiled KFP spec run by kfp's own local runner (`kfp.local`, subprocesses, no Docker),
beside the local runner on the same pipeline: the same blessed and pushed models."""

import dataclasses
import glob
import os
import re
import shutil

import pytest
from kfp import components, local
from kfp.local import config as kfp_local_config
from kfp.local.orchestrator import enhanced_dag_orchestrator

from bert_keras.components.base.component import Component
from bert_keras.components.base.standard_artifacts import PushedModel
from bert_keras.components.pusher.spec import PusherSpec
from bert_keras.configs.pipeline import smoke_config
from bert_keras.pipeline.definitions import build_pipeline
from bert_keras.pipeline.kfp_compiler import KfpOptions, compile_pipeline, component_cli
from bert_keras.pipeline.local_runner import LocalRunner
from bert_keras.pipeline.pipeline import Pipeline
from bert_keras.pipeline.query_served_models import find_models
from tests.pipeline import tiny_components

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_CONDITION = re.compile(
    r"inputs\.parameter_values\['pipelinechannel--(?P<ref>[\w-]+)'\] == (?P<value>true|false)")


def _evaluate_condition(condition, io_store):
  """kfp 2.16's local runner substitutes values into a condition's text and evaluates it as
  Python, which fails on the text kfp's compiler emits, so every condition reads False
  (kubeflow/pipelines pull request 13313). This reads the one form our compiler emits,
  `inputs.parameter_values['pipelinechannel--<task>-<output>'] == true`, from the task outputs
  kfp.local recorded; KFP and Vertex AI evaluate it on their side."""
  match = _CONDITION.fullmatch(condition.strip())
  assert match, f"a condition the compiler does not emit: {condition}"
  ref = match["ref"]
  for i in (i for i, ch in enumerate(ref) if ch == "-"):
    try:
      value = io_store.get_task_output(ref[:i], ref[i + 1:])
    except ValueError:
      continue
    return value is (match["value"] == "true")
  raise AssertionError(f"{ref}: no task output of that name")


@pytest.fixture
def kfp_local_run(tmp_path, monkeypatch):
  """Runs a Pipeline's compiled spec (read back from its YAML) under kfp.local; returns the
  directory of the run's task outputs."""
  monkeypatch.setenv("PYTHONPATH",
                     os.pathsep.join(filter(None, [ROOT, os.environ.get("PYTHONPATH")])))
  monkeypatch.setattr(enhanced_dag_orchestrator.ConditionEvaluator, "evaluate_condition",
                      staticmethod(_evaluate_condition))
  monkeypatch.setattr(kfp_local_config.LocalExecutionConfig, "instance", None)
  local.init(runner=local.SubprocessRunner(use_venv=False), pipeline_root=str(tmp_path / "kfp"),
             workspace_root=str(tmp_path / "workspace"))

  def run(pipeline, **options):
    spec = tmp_path / f"{pipeline.name}.yaml"
    compile_pipeline(pipeline, KfpOptions(image="python:3.11", **options), str(spec))
    components.load_component_from_file(str(spec))()
    (run_dir,) = glob.glob(str(tmp_path / "kfp" / "*"))
    return run_dir

  return run


def _task_dir(run_dir, task):
  """The outputs of `task` (under its condition's directory when it runs inside one), or None."""
  found = [d for d in [os.path.join(run_dir, task)] + glob.glob(
      os.path.join(run_dir, "condition-*", task)) if os.path.isdir(d)]
  assert len(found) <= 1, found
  return found[0] if found else None


def _tiny_cli(spec_class):
  if spec_class.__module__ == tiny_components.__name__:
    return ["-m", "tests.pipeline.tiny_cli", spec_class.__name__]
  return component_cli(spec_class)


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


_TIMINGS = re.compile(r"seconds|per_sec|elapsed")


@pytest.mark.slow
def test_real_pipeline_on_a_slice_matches_the_local_runner(tmp_path, kfp_local_run):
  config = smoke_config(max_documents=6)
  # kfp.local's SubprocessRunner replaces "python3" in every argument with its interpreter's path,
  # the JSON of a task's inputs included, which mangles the embedded dump's path under
  # lib/python3.11/ (not so on KFP or Vertex AI): the test reads a copy of the dump.
  dump = tmp_path / "data" / os.path.basename(config.corpus.wikipedia_dumps[0])
  dump.parent.mkdir()
  shutil.copyfile(config.corpus.wikipedia_dumps[0], dump)
  config = dataclasses.replace(
      config, corpus=dataclasses.replace(config.corpus, wikipedia_dumps=(str(dump),)),
      tasks=config.tasks[:1])  # polarity, fine-tuned from the pretrained encoder
  beam_args = ["--direct_running_mode=in_memory"]
  local_pipeline = build_pipeline(config, str(tmp_path / "local"), str(tmp_path / "local_serving"))
  record = LocalRunner(beam_pipeline_args=beam_args, write_report=False,
                       log_fn=lambda _: None).run(local_pipeline)
  run_dir = kfp_local_run(build_pipeline(config, str(tmp_path / "unused"),
                                         str(tmp_path / "kfp_serving")),
                          beam_pipeline_args=tuple(beam_args))

  for component in local_pipeline.components:
    for output, artifact_type in component.spec_class.OUTPUTS.items():
      kfp_artifact = artifact_type.load(os.path.join(
          _task_dir(run_dir, component.name.replace("_", "-")),
          f"{output}_out" if output in component.inputs else output))
      local_metrics = {k.split("/", 1)[1]: v
                       for k, v in record.component(component.name).metrics.items()
                       if k.startswith(f"{output}/") and not _TIMINGS.search(k)}
      kfp_metrics = {k: v for k, v in kfp_artifact.metrics.items() if not _TIMINGS.search(k)}
      assert kfp_metrics == pytest.approx(local_metrics, rel=1e-4, abs=1e-6), component.name
  evaluation = record.component("evaluator_polarity_pretrained")
  assert evaluation.properties["blessing/blessed"] is True
  assert "evaluation/accuracy" in evaluation.metrics
  local_models = find_models(str(tmp_path / "local_serving"))
  kfp_models = find_models(str(tmp_path / "kfp_serving"))
  assert [name for name, _ in kfp_models] == [name for name, _ in local_models] == [
      os.path.join("pretrained", "polarity")]
  for (_, local_dir), (_, kfp_dir) in zip(local_models, kfp_models):
    assert sorted(os.listdir(kfp_dir)) == sorted(os.listdir(local_dir))
