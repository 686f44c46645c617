"""Compiles a pipeline to a Kubeflow Pipelines v2 spec: each component one KFP task running the
component's CLI (`KfpOptions.cli`) on its artifact directories, its inputs, outputs and parameters
read from its spec (`step_signature`). How artifacts, caching, blessing and multi-worker map onto
KFP: docs/design.md, "Kubeflow Pipelines".
"""

import dataclasses
import importlib
import inspect
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
from typing import Callable, Mapping, Optional, Sequence

from kfp import dsl
from kfp.dsl import component_factory, python_component, structures

from bert_keras.atomic_io import write_file
from bert_keras.errors import UserError
from bert_keras.orchestration.component import Channel
from bert_keras.orchestration.component_launcher import strings_in
from bert_keras.orchestration.standard_artifacts import ModelBlessing
from bert_keras.orchestration.pipeline import Pipeline

# Set in the component image (Dockerfile): the local paths a compile bakes in are the image's.
IMAGE_ENV = "BERT_KERAS_IMAGE"
# Pipeline parameters (one value for every task that takes them) and the evaluator's output.
BEAM_ARGS, DISTRIBUTION, BLESSED = "beam_pipeline_args", "distribution_strategy", "blessed"
_PARAMETER_TYPES = (str, int, float, bool, list, dict)
# Our artifact types as KFP's system types (shown by the UIs); the rest are system.Artifact.
_KFP_TYPES = {"Corpus": dsl.Dataset, "Examples": dsl.Dataset, "Model": dsl.Model,
              "SavedModel": dsl.Model}
# kfp's own lightweight-component launch, without its pip install (the image holds kfp).
_LAUNCH = r"""program_path=$(mktemp -d)
printf "%s" "$0" > "$program_path/ephemeral_component.py"
_KFP_RUNTIME=true python3 -m kfp.dsl.executor_main \
    --component_module_path "$program_path/ephemeral_component.py" "$@"
"""


def kfp_artifact_class(artifact_type) -> type:
  return _KFP_TYPES.get(artifact_type.TYPE_NAME, dsl.Artifact)


def kfp_output_name(spec_class, name: str) -> str:
  """An output's KFP name: `<name>_out` when an input has its name (KFP has one namespace)."""
  return f"{name}_out" if name in spec_class.INPUTS else name


def _blessing_output(spec_class) -> Optional[str]:
  names = [n for n, t in spec_class.OUTPUTS.items() if t.TYPE_NAME == ModelBlessing.TYPE_NAME]
  if len(names) > 1:
    raise UserError(f"{spec_class.__name__}: several ModelBlessing outputs {names}; a KFP step "
                    f"returns one `{BLESSED}` parameter")
  return names[0] if names else None


def step_signature(spec_class) -> inspect.Signature:
  """The KFP interface of `spec_class` as a Python signature: Input/Output artifacts, typed
  parameters with the spec's defaults, the runtime options it takes and `blessed`."""
  keyword = inspect.Parameter.KEYWORD_ONLY
  params = []
  for name, spec in spec_class.INPUTS.items():
    annotation = dsl.Input[kfp_artifact_class(spec.type)]
    params.append(inspect.Parameter(name, keyword, annotation=Optional[annotation], default=None)
                  if spec.optional else inspect.Parameter(name, keyword, annotation=annotation))
  for name, artifact_type in spec_class.OUTPUTS.items():
    params.append(inspect.Parameter(kfp_output_name(spec_class, name), keyword,
                                    annotation=dsl.Output[kfp_artifact_class(artifact_type)]))
  for name, param in spec_class.PARAMETERS.items():
    if param.type not in _PARAMETER_TYPES:
      raise UserError(f"{spec_class.__name__}: parameter {name} of type {param.type.__name__}; "
                      f"KFP parameters are {[t.__name__ for t in _PARAMETER_TYPES]}")
    default = inspect.Parameter.empty if param.required else param.default
    params.append(inspect.Parameter(name, keyword, annotation=param.type, default=default))
  if spec_class.USES_BEAM:
    params.append(inspect.Parameter(BEAM_ARGS, keyword, annotation=list, default=[]))
  if spec_class.USES_DISTRIBUTION:
    params.append(inspect.Parameter(DISTRIBUTION, keyword, annotation=str, default="default"))
  if _blessing_output(spec_class):
    params.append(inspect.Parameter(BLESSED, keyword, annotation=dsl.OutputPath(bool)))
  names = [p.name for p in params]
  clashes = sorted({n for n in names if names.count(n) > 1})
  if clashes:
    raise UserError(f"{spec_class.__name__}: names {clashes} are used twice among its inputs, "
                    f"outputs, parameters and the KFP step's own ({BEAM_ARGS}, {DISTRIBUTION}, "
                    f"{BLESSED})")
  return inspect.Signature(params)


def is_chief(tf_config: str) -> bool:
  """Whether this process publishes outputs (as bert_keras/training/distribute.is_chief decides)."""
  if not tf_config:
    return True
  try:
    config = json.loads(tf_config)
    task = config.get("task") or {}
    task_type, index, cluster = task.get("type", ""), int(task.get("index", 0)), config["cluster"]
  except (ValueError, TypeError, KeyError, AttributeError):
    raise UserError(f"TF_CONFIG={tf_config!r}: expected JSON with 'cluster' and 'task' "
                    f"keys") from None
  if task_type in ("", "chief", "master"):
    return True
  return task_type == "worker" and index == 0 and not {"chief", "master"} & set(cluster)


def whole_numbers_as_ints(value):
  """`value` with every whole float inside lists and dicts an int again: KFP carries them as
  protobuf Structs, whose numbers are doubles, and the configs refuse 8.0 for an integer field."""
  if isinstance(value, float) and value.is_integer():
    return int(value)
  if isinstance(value, list):
    return [whole_numbers_as_ints(v) for v in value]
  if isinstance(value, dict):
    return {k: whole_numbers_as_ints(v) for k, v in value.items()}
  return value


def run_step(spec_class, cli: Sequence[str], values: dict) -> None:
  """The body of every task: the component's CLI on `values`, what kfp's executor passes
  (artifacts, whose `.path` is the artifact directory, parameters, runtime options, `blessed`)."""
  chief = is_chief(os.environ.get("TF_CONFIG", ""))
  with tempfile.TemporaryDirectory(prefix="kfp-step-") as scratch:
    kfp_outputs = {name: values[kfp_output_name(spec_class, name)] for name in spec_class.OUTPUTS}
    outputs = {name: kfp_outputs[name].path if chief else os.path.join(scratch, name)
               for name in spec_class.OUTPUTS}
    params_path = os.path.join(scratch, "parameters.json")
    with open(params_path, "w", encoding="utf-8") as f:
      json.dump({name: whole_numbers_as_ints(values[name]) if param.type in (list, dict)
                 else values[name]
                 for name, param in spec_class.PARAMETERS.items() if name in values}, f)
    argv = [sys.executable, *cli, f"--params_json={params_path}"]
    for name in spec_class.INPUTS:
      if values.get(name) is not None:
        argv += ["--input_artifact", f"{name}={values[name].path}"]
    for name, path in outputs.items():
      argv += ["--output_artifact", f"{name}={path}"]
    if spec_class.USES_BEAM:
      argv.append(f"--{BEAM_ARGS}={shlex.join(values.get(BEAM_ARGS) or [])}")
    if spec_class.USES_DISTRIBUTION:
      argv.append(f"--{DISTRIBUTION}={values.get(DISTRIBUTION) or 'default'}")
    print(f"$ {shlex.join(argv)}", flush=True)
    status = subprocess.run(argv, check=False).returncode
    if status:
      raise RuntimeError(f"{shlex.join(argv[1:3])} exited with status {status}")
    if not chief:
      return
    for name, artifact_type in spec_class.OUTPUTS.items():
      artifact = artifact_type.load(outputs[name])
      kfp_outputs[name].metadata.update(artifact_type=artifact.TYPE_NAME,
                                        metrics=artifact.metrics, properties=artifact.properties)
    blessing = _blessing_output(spec_class)
    if blessing:
      blessed = spec_class.OUTPUTS[blessing].load(outputs[blessing]).properties.get("blessed")
      with open(values[BLESSED], "w", encoding="utf-8") as f:
        f.write(json.dumps(blessed is True))


def step_function(spec_ref: str, cli: Sequence[str], version: str, name: str) -> Callable:
  """The function kfp's executor calls for one task, built from the spec in the image; an image
  whose spec VERSION is not `version`, the compiled one, is refused."""
  module, _, class_name = spec_ref.partition(":")
  spec_class = getattr(importlib.import_module(module), class_name)
  if spec_class.VERSION != version:
    raise UserError(f"{spec_ref}: the image has VERSION {spec_class.VERSION!r}, the pipeline was "
                    f"compiled against {version!r}; recompile it against this image")
  signature = step_signature(spec_class)

  def step(**values):
    run_step(spec_class, cli, values)

  step.__name__ = step.__qualname__ = name
  step.__doc__ = inspect.getdoc(spec_class)
  step.__signature__ = signature
  step.__annotations__ = {p.name: p.annotation for p in signature.parameters.values()}
  return step


def python_name(name: str) -> str:
  """'fine_tuner_glue.sst2-x' -> 'fine_tuner_glue_sst2_x'."""
  return re.sub(r"\W", "_", name)


def step_component(spec_class, name: str, image: str,
                   cli: Callable) -> python_component.PythonComponent:
  """The KFP component of one pipeline component: `spec_class`'s interface, run in `image`."""
  function_name = python_name(name)
  spec_ref = f"{spec_class.__module__}:{spec_class.__qualname__}"
  args = (spec_ref, list(cli(spec_class)), spec_class.VERSION, function_name)
  func = step_function(*args)
  source = (f"from {step_function.__module__} import step_function\n"
            f"{function_name} = step_function{args!r}\n")
  component_spec = component_factory.extract_component_interface(func)
  component_spec.implementation = structures.Implementation(
      container=structures.ContainerSpecImplementation(
          image=image, command=["sh", "-ec", _LAUNCH, source],
          args=["--executor_input", dsl.PIPELINE_TASK_EXECUTOR_INPUT_PLACEHOLDER,
                "--function_to_execute", function_name]))
  return python_component.PythonComponent(component_spec=component_spec, python_func=func)


@dataclasses.dataclass(frozen=True)
class KfpOptions:
  """How a pipeline is compiled for KFP: the image, the runtime options' defaults, caching, CLIs."""

  image: str
  # spec class -> the arguments after `python` that run that component's CLI in the image.
  cli: Callable
  pipeline_root: str = ""
  beam_pipeline_args: Sequence[str] = ()
  distribution_strategy: str = "default"
  enable_caching: bool = True
  no_cache: frozenset = frozenset()  # component names that always rerun
  # Component name -> a function making its KFP component a multi-worker job (on Vertex AI:
  # create_custom_training_job_from_component); only the chief publishes (`run_step`).
  multi_worker: Mapping[str, Callable] = dataclasses.field(default_factory=dict)


def _gate(component) -> Optional[Channel]:
  """The ModelBlessing channel this component consumes, if any (its task runs only if blessed)."""
  gates = [c for c in component.inputs.values()
           if isinstance(c, Channel) and c.type.TYPE_NAME == ModelBlessing.TYPE_NAME]
  if len(gates) > 1:
    raise UserError(f"{component.name}: consumes several blessings; a KFP task has one condition")
  return gates[0] if gates else None


def kfp_pipeline(pipeline: Pipeline, options: KfpOptions):
  """`pipeline` as a KFP pipeline (a dsl.pipeline graph component) ready for `compile_pipeline`."""
  for what, names in (("no_cache", options.no_cache), ("multi_worker", options.multi_worker)):
    unknown = sorted(set(names) - {c.name for c in pipeline.components})
    if unknown:
      raise UserError(f"{what} names unknown components {unknown}; pipeline has "
                      f"{[c.name for c in pipeline.components]}")
  for name in options.multi_worker:
    if not next(c for c in pipeline.components if c.name == name).spec_class.USES_DISTRIBUTION:
      raise UserError(f"multi_worker: {name} does not train (takes no distribution strategy)")
  functions = [python_name(c.name) for c in pipeline.components]
  clashes = sorted({n for n in functions if functions.count(n) > 1})
  if clashes:
    raise UserError(f"pipeline {pipeline.name!r}: component names map to the same KFP name "
                    f"{clashes}; rename them")
  order = pipeline.ordered()
  gated = {c.name for c in pipeline.components if _gate(c)}
  for c in order:
    consumed = sorted({u.name for u in c.upstream} & gated)
    if consumed:
      raise UserError(f"{c.name} consumes outputs of {consumed}, which run only when blessed; "
                      f"KFP cannot pass an output out of its condition")
  steps = {c.name: step_component(c.spec_class, c.name, options.image, options.cli)
           for c in order}
  for name, make_job in options.multi_worker.items():
    steps[name] = make_job(steps[name])

  def graph(beam_pipeline_args: list = list(options.beam_pipeline_args),
            distribution_strategy: str = options.distribution_strategy):
    tasks = {}
    for component in order:
      spec_class = component.spec_class
      floats = {n for n, p in spec_class.PARAMETERS.items() if p.type is float}
      kwargs = {name: float(value) if name in floats and value is not None else value
                for name, value in component.parameters.items()}
      if spec_class.USES_BEAM:
        kwargs[BEAM_ARGS] = beam_pipeline_args
      if spec_class.USES_DISTRIBUTION:
        kwargs[DISTRIBUTION] = ("multi_worker_mirrored" if component.name in options.multi_worker
                                else distribution_strategy)
      for name, value in component.inputs.items():
        if isinstance(value, Channel):
          kwargs[name] = tasks[value.producer.name].outputs[
              kfp_output_name(value.producer.spec_class, value.output_name)]
        else:  # an existing artifact from outside the pipeline
          kwargs[name] = dsl.importer(artifact_uri=value.uri,
                                      artifact_class=kfp_artifact_class(type(value))).output
      gate = _gate(component)
      if gate is None:
        task = steps[component.name](**kwargs)
      else:
        # kfp builds the condition from `==`; `is True` would not reach it.
        blessed = tasks[gate.producer.name].outputs[BLESSED] == True  # noqa: E712
        with dsl.If(blessed, name=f"{component.name}-if-blessed"):
          task = steps[component.name](**kwargs)
      task.set_display_name(component.name)
      task.set_caching_options(options.enable_caching and component.name not in options.no_cache)
      tasks[component.name] = task

  graph.__name__ = python_name(pipeline.name)
  return dsl.pipeline(name=re.sub(r"[^a-z0-9-]", "-", pipeline.name.lower()),
                      description=f"{pipeline.name}: {len(order)} components "
                                  f"(pipeline/definitions.py)",
                      pipeline_root=options.pipeline_root or None)(graph)


def host_paths(pipeline: Pipeline) -> list[str]:
  """The existing local paths compiling `pipeline` writes into the spec (parameter values, nested
  too, and imported artifacts): a step finds them only inside the image."""
  found = []
  for component in pipeline.components:
    imported = [value.uri for value in component.inputs.values() if not isinstance(value, Channel)]
    found += [p for p in strings_in([component.parameters, imported])
              if os.path.isabs(p) and os.path.exists(p)]
  return list(dict.fromkeys(found))


def compile_pipeline(pipeline: Pipeline, options: KfpOptions, output_path: str) -> None:
  """Writes the KFP v2 spec (YAML) of `pipeline` to `output_path`, atomically."""
  from kfp import compiler  # pylint: disable=import-outside-toplevel

  output_path = os.path.abspath(output_path)
  os.makedirs(os.path.dirname(output_path), exist_ok=True)
  compile_to = lambda tmp: compiler.Compiler().compile(kfp_pipeline(pipeline, options), package_path=tmp)
  write_file(output_path, compile_to, ".yaml")  # kfp picks the format from the extension
