"""Running a compiled KFP spec under kfp's own local runner (`kfp.local`, subprocesses, no Docker)
in a test: the `kfp_local_run` fixture and the reading of a run's task outputs."""

import glob
import os
import re

import pytest
from kfp import components, local
from kfp.local import config as kfp_local_config
from kfp.local.orchestrator import enhanced_dag_orchestrator

from bert_keras.orchestration.kfp_compiler import KfpOptions, compile_pipeline
from components.cli import step_arguments

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
    compile_pipeline(pipeline, KfpOptions(image="python:3.11", **{"cli": step_arguments, **options}), str(spec))
    components.load_component_from_file(str(spec))()
    (run_dir,) = glob.glob(str(tmp_path / "kfp" / "*"))
    return run_dir

  return run


def task_dir(run_dir, task):
  """The outputs of `task` (under its condition's directory when it runs inside one), or None."""
  found = [d for d in [os.path.join(run_dir, task)] + glob.glob(
      os.path.join(run_dir, "condition-*", task)) if os.path.isdir(d)]
  assert len(found) <= 1, found
  return found[0] if found else None
