"""The KFP spec compiled from the pipeline definitions, read back with kfp's own loader."""

import json
import os
import subprocess
import sys

import pytest
from google.protobuf import json_format
from kfp import components, dsl

from bert_keras import resources
from bert_keras.errors import UserError
from configs.demo import demo_config
from pipeline.definitions import build_pipeline
from bert_keras.orchestration.pipeline import Pipeline
from bert_keras.orchestration.kfp_compiler import (BLESSED, IMAGE_ENV, KfpOptions, compile_pipeline, is_chief, run_step,
                                   step_function, step_signature, whole_numbers_as_ints)
from bert_keras.orchestration.component import Component
from components.cli import step_arguments
from components.fine_tuner.spec import FineTunerSpec
from components.vocabulary.spec import VocabularySpec
from tests.pipeline import tiny_components

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _tasks(pipeline_spec):
  """{task name: (task spec, the DAG's parent condition task or None)} over every DAG."""
  found = {}

  def walk(dag, parent):
    for name, task in dag.tasks.items():
      component = pipeline_spec.components[task.component_ref.name]
      if component.WhichOneof("implementation") == "dag":
        walk(component.dag, task)
      else:
        found[name] = (task, parent)

  walk(pipeline_spec.root.dag, None)
  return found


def _artifact_source(task, parent):
  """{input name: (producer task, output key)}, following a condition's pipelinechannel inputs."""
  sources = {}
  for name, spec in task.inputs.artifacts.items():
    if spec.HasField("task_output_artifact"):
      source = spec.task_output_artifact
    else:
      source = parent.inputs.artifacts[spec.component_input_artifact].task_output_artifact
    sources[name] = (source.producer_task, source.output_artifact_key)
  return sources


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
  root = tmp_path_factory.mktemp("kfp")
  pipeline = build_pipeline(demo_config(), "gs://bucket/root", "/gcs/bucket/serving")
  options = KfpOptions(image="registry.example/bert@sha256:abc", cli=step_arguments, pipeline_root="gs://bucket/root",
                       beam_pipeline_args=("--runner=DataflowRunner", "--project=p"),
                       no_cache=frozenset({"corpus_ingestion"}))
  compile_pipeline(pipeline, options, str(root / "pipeline.yaml"))
  return pipeline, components.load_component_from_file(str(root / "pipeline.yaml")).pipeline_spec


def test_every_component_is_a_task_with_its_inputs_parameters_and_dependencies(demo):
  pipeline, spec = demo
  tasks = _tasks(spec)
  kfp_name = {c.name: c.name.replace("_", "-") for c in pipeline.components}
  assert set(tasks) == set(kfp_name.values())
  for component in pipeline.components:
    task, parent = tasks[kfp_name[component.name]]
    assert task.task_info.name == component.name
    expected = {name: (kfp_name[ch.producer.name],
                       ch.output_name + ("_out" if ch.output_name in ch.producer.spec_class.INPUTS
                                         else ""))
                for name, ch in component.inputs.items()}
    assert _artifact_source(task, parent) == expected, component.name
    upstream = {kfp_name[u.name] for u in component.upstream}
    assert set(task.dependent_tasks) | set(parent.dependent_tasks if parent else ()) >= upstream
    constants = {name: json_format.MessageToDict(p.runtime_value.constant)
                 for name, p in task.inputs.parameters.items() if p.HasField("runtime_value")}
    assert constants == json.loads(json.dumps(component.parameters)), component.name
    runtime = {name: p.component_input_parameter for name, p in task.inputs.parameters.items()
               if p.component_input_parameter}
    if component.spec_class.USES_BEAM:
      assert runtime.pop("beam_pipeline_args") == "beam_pipeline_args"
    if component.spec_class.USES_DISTRIBUTION:
      assert runtime.pop("distribution_strategy") == "distribution_strategy"
    assert not {k: v for k, v in runtime.items() if not v.startswith("pipelinechannel--")}
    assert task.caching_options.enable_cache == (component.name != "corpus_ingestion")


def test_pushers_run_only_when_their_evaluator_blessed(demo):
  pipeline, spec = demo
  tasks = _tasks(spec)
  pushers = [c for c in pipeline.components if c.name.startswith("pusher_")]
  assert len(pushers) == 4
  for pusher in pushers:
    task, parent = tasks[pusher.name.replace("_", "-")]
    evaluator = pusher.inputs["blessing"].producer.name.replace("_", "-")
    channel = f"pipelinechannel--{evaluator}-{BLESSED}"
    assert parent.trigger_policy.condition == f"inputs.parameter_values['{channel}'] == true"
    source = parent.inputs.parameters[channel].task_output_parameter
    assert (source.producer_task, source.output_parameter_key) == (evaluator, BLESSED)
  ungated = [name for name, (_, parent) in tasks.items() if parent is not None]
  assert sorted(ungated) == sorted(p.name.replace("_", "-") for p in pushers)


def test_runtime_options_and_image_come_from_one_place(demo):
  pipeline, spec = demo
  inputs = json_format.MessageToDict(spec.root.input_definitions)["parameters"]
  assert inputs["beam_pipeline_args"]["defaultValue"] == ["--runner=DataflowRunner", "--project=p"]
  assert inputs["distribution_strategy"]["defaultValue"] == "default"
  executors = json_format.MessageToDict(spec.deployment_spec)["executors"]
  assert len(executors) == len(pipeline.components)
  for component in pipeline.components:
    container = executors[f"exec-{component.name.replace('_', '-')}"]["container"]
    assert container["image"] == "registry.example/bert@sha256:abc"
    source = container["command"][-1]
    # The CLI it runs and the spec VERSION (part of KFP's cache key).
    cli = step_arguments(component.spec_class)
    assert cli[:2] == ["-m", "components.cli"]
    assert f"{cli!r}, '{component.spec_class.VERSION}'" in source
  assert spec.pipeline_info.name == "bert-demo"
  assert spec.default_pipeline_root == "gs://bucket/root"


def test_signature_follows_the_spec():
  params = step_signature(FineTunerSpec).parameters
  assert list(params) == ["model", "model_out", "task", "task_config", "data_dir",
                          "max_train_examples", "distribution_strategy"]
  assert params["task"].default is params["task"].empty  # required in the spec
  assert params["max_train_examples"].default == 0
  assert "beam_pipeline_args" in step_signature(VocabularySpec).parameters
  assert BLESSED in step_signature(tiny_components.TinyEvaluatorSpec).parameters


def test_dict_parameters_get_their_integers_back():
  # KFP hands list and dict parameters over as protobuf Structs: every number a double.
  assert whole_numbers_as_ints({"train_batch_size": 8.0, "learning_rate": 5e-4,
                                "thresholds": [{"lower_bound": 1.0}], "task": "polarity"}) == {
      "train_batch_size": 8, "learning_rate": 5e-4, "thresholds": [{"lower_bound": 1}],
      "task": "polarity"}
  assert isinstance(whole_numbers_as_ints({"n": 8.0})["n"], int)


def test_an_image_with_another_spec_version_is_refused():
  ref = "components.vocabulary.spec:VocabularySpec"
  assert step_function(ref, ["-m", "components.cli", "vocabulary"], VocabularySpec.VERSION, "v")
  with pytest.raises(UserError, match="recompile"):
    step_function(ref, ["-m", "components.cli", "vocabulary"], "0", "v")


@pytest.mark.parametrize("cluster, task_type, index, chief", [
    ({"chief": ["a:1"], "worker": ["b:1"]}, "chief", 0, True),
    ({"chief": ["a:1"], "worker": ["b:1"]}, "worker", 0, False),
    ({"worker": ["a:1", "b:1"]}, "worker", 0, True),
    ({"worker": ["a:1", "b:1"]}, "worker", 1, False),
])
def test_only_the_chief_publishes(cluster, task_type, index, chief):
  assert is_chief("") is True
  tf_config = {"cluster": cluster, "task": {"type": task_type, "index": index}}
  assert is_chief(json.dumps(tf_config)) is chief
  with pytest.raises(UserError, match="TF_CONFIG"):
    is_chief('{"task": {}}')


def _with_root_on_path(monkeypatch):
  path = os.pathsep.join(filter(None, [ROOT, os.environ.get("PYTHONPATH")]))
  monkeypatch.setenv("PYTHONPATH", path)


def _cli(spec_class):
  return ["-m", "tests.pipeline.tiny_cli", spec_class.__name__]


def test_a_worker_that_is_not_the_chief_leaves_the_outputs_alone(tmp_path, monkeypatch):
  _with_root_on_path(monkeypatch)
  out = dsl.Artifact(uri=str(tmp_path / "chief" / "number"))
  monkeypatch.setenv("TF_CONFIG", json.dumps({"cluster": {"worker": ["a:1", "b:1"]},
                                              "task": {"type": "worker", "index": 1}}))
  run_step(tiny_components.SourceSpec, _cli(tiny_components.SourceSpec),
           {"number": out, "value": 3, "source_file": ""})
  assert not os.path.exists(out.path) and out.metadata == {}
  monkeypatch.delenv("TF_CONFIG")
  run_step(tiny_components.SourceSpec, _cli(tiny_components.SourceSpec),
           {"number": out, "value": 3, "source_file": ""})
  assert open(os.path.join(out.path, "value.txt"), encoding="utf-8").read() == "3"
  assert out.metadata["metrics"] == {"value": 3}


def test_a_failing_cli_fails_the_step(tmp_path, monkeypatch):
  _with_root_on_path(monkeypatch)
  number = dsl.Artifact(uri=str(tmp_path / "n"))
  run_step(tiny_components.SourceSpec, _cli(tiny_components.SourceSpec),
           {"number": number, "value": 1, "source_file": ""})
  with pytest.raises(RuntimeError, match="exited with status 2"):
    run_step(tiny_components.AddSpec, _cli(tiny_components.AddSpec),
             {"a": number, "sum": dsl.Artifact(uri=str(tmp_path / "s")), "offset": 0,
              "fail": "user"})


def _compile(*flags, in_image=False):
  env = {k: v for k, v in os.environ.items() if k != IMAGE_ENV}
  env.update(PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="2", **({IMAGE_ENV: "1"} if in_image else {}))
  return subprocess.run([sys.executable, "-m", "pipeline.compile", *flags], capture_output=True,
                        text=True, check=False, cwd=ROOT, env=env)


def test_compile_command(tmp_path):
  out = tmp_path / "p.yaml"
  done = _compile("--pipeline=smoke", "--image=img:1", "--serving_dir=/gcs/b/serving",
                  f"--output_file={out}", "--dataflow_project=p", "--dataflow_region=r",
                  "--dataflow_temp_location=gs://b/tmp")
  assert done.returncode == 0, done.stderr[-2000:]
  spec = components.load_component_from_file(str(out)).pipeline_spec
  args = json_format.MessageToDict(spec.root.input_definitions)["parameters"]
  assert args["beam_pipeline_args"]["defaultValue"] == [
      "--runner=DataflowRunner", "--project=p", "--region=r", "--temp_location=gs://b/tmp",
      "--setup_file=/app/setup.py"]
  assert len(_tasks(spec)) == 12
  (tmp_path / "bad.yaml").write_text("name: p\nnope: 1\n")
  for flags, message in [(("--serving_dir=gs://b/s",), "a path the steps mount"),
                         (("--serving_dir=/s", f"--config_file={tmp_path / 'bad.yaml'}"),
                          "bad.yaml: nope: unknown key in PipelineConfig"),
                         (("--serving_dir=/s", "--dataflow_project=p"), "--dataflow_region"),
                         (("--serving_dir=/s", "--pipeline=nope"), "package.module:function"),
                         (("--serving_dir=/s", "--distribution_strategy=multi_worker_mirrored"),
                          "distribution_strategy"),
                         (("--serving_dir=/s", "--pretrainer_replicas=2"),
                          "google-cloud-pipeline-components")]:
    done = _compile("--image=i", f"--output_file={tmp_path / 'x.yaml'}", *flags)
    assert done.returncode == 2 and message in done.stderr, (flags, done.stderr[-500:])
    assert len(done.stderr.strip().splitlines()) == 1
  assert not os.path.exists(tmp_path / "x.yaml")


def test_compiling_outside_the_image_warns_that_this_hosts_paths_are_baked_in(tmp_path):
  flags = ("--pipeline=smoke", "--image=img:1", "--serving_dir=/gcs/b/serving")
  outside = _compile(*flags, f"--output_file={tmp_path / 'host.yaml'}")
  assert outside.returncode == 0, outside.stderr[-2000:]
  warnings = [line for line in outside.stderr.splitlines() if line.startswith("warning:")]
  assert len(warnings) == 1 and "outside the component image" in warnings[0]
  assert resources.wikipedia_dump_path() in warnings[0]
  with open(tmp_path / "host.yaml", encoding="utf-8") as f:
    assert resources.wikipedia_dump_path() in f.read()  # written all the same
  inside = _compile(*flags, f"--output_file={tmp_path / 'image.yaml'}", in_image=True)
  assert inside.returncode == 0 and "warning:" not in inside.stderr, inside.stderr[-2000:]


def test_the_pretrainer_as_a_multi_worker_job(tmp_path):
  pipeline = build_pipeline(demo_config(), "gs://bucket/root", "/gcs/bucket/serving")
  wrapped = []

  def make_job(op):  # what GCPC's create_custom_training_job_from_component is given and returns
    wrapped.append(op.name)
    return op

  compile_pipeline(pipeline, KfpOptions(image="i", cli=step_arguments, multi_worker={"pretrainer": make_job}),
                   str(tmp_path / "p.yaml"))
  assert wrapped == ["pretrainer"]
  tasks = _tasks(components.load_component_from_file(str(tmp_path / "p.yaml")).pipeline_spec)
  strategy = tasks["pretrainer"][0].inputs.parameters["distribution_strategy"]
  assert strategy.runtime_value.constant.string_value == "multi_worker_mirrored"
  fine_tuner = tasks["fine-tuner-polarity-pretrained"][0].inputs.parameters["distribution_strategy"]
  assert fine_tuner.component_input_parameter == "distribution_strategy"
  for names, message in [({"nope": make_job}, "unknown components"),
                         ({"vocabulary": make_job}, "does not train")]:
    with pytest.raises(UserError, match=message):
      compile_pipeline(pipeline, KfpOptions(image="i", cli=step_arguments, multi_worker=names), str(tmp_path / "q.yaml"))


def test_an_artifact_from_outside_the_pipeline_is_imported(tmp_path):
  number = tiny_components.Number(str(tmp_path / "number"))
  add = Component(tiny_components.AddSpec, "add", inputs={"a": number})
  compile_pipeline(Pipeline("imports", str(tmp_path), [add]), KfpOptions(image="i", cli=_cli),
                   str(tmp_path / "p.yaml"))
  spec = components.load_component_from_file(str(tmp_path / "p.yaml")).pipeline_spec
  (importer,) = [name for name in spec.root.dag.tasks if name.startswith("importer")]
  source = spec.root.dag.tasks["add"].inputs.artifacts["a"].task_output_artifact
  assert source.producer_task == importer
  importer_spec = json_format.MessageToDict(spec.deployment_spec)["executors"]
  assert any(e.get("importer", {}).get("artifactUri", {}).get("constant") == number.uri
             for e in importer_spec.values())
