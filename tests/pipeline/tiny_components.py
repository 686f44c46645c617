"""Tiny components for testing the framework: numbers in files, added, optionally failing."""

from __future__ import annotations

from bert_keras.errors import UserError
from bert_keras.orchestration.artifact import Artifact
from bert_keras.orchestration.base_executor import BaseExecutor
from bert_keras.orchestration.component_spec import ComponentSpec, InputSpec, Parameter
from bert_keras.orchestration.standard_artifacts import SavedModel
from components.evaluator.executor import EvaluatorExecutor
from components.evaluator.spec import EvaluatorSpec


class Number(Artifact):
  TYPE_NAME = "Number"


def read_number(artifact: Artifact) -> int:
  with open(artifact.path("value.txt"), encoding="utf-8") as f:
    return int(f.read())


def write_number(artifact: Artifact, value: int) -> None:
  with open(artifact.path("value.txt"), "w", encoding="utf-8") as f:
    f.write(str(value))


class SourceExecutor(BaseExecutor):
  def run(self, inputs, outputs, parameters):
    value = parameters["value"]
    if parameters["source_file"]:
      with open(parameters["source_file"], encoding="utf-8") as f:
        value += int(f.read())
    write_number(outputs["number"], value)
    outputs["number"].metrics["value"] = value


class SourceSpec(ComponentSpec):
  OUTPUTS = {"number": Number}
  PARAMETERS = {"value": Parameter(int, 0),
                "source_file": Parameter(str, "", is_path=True)}
  EXECUTOR = "tests.pipeline.tiny_components:SourceExecutor"


class AddExecutor(BaseExecutor):
  def run(self, inputs, outputs, parameters):
    if parameters["fail"] == "user":
      raise UserError("add: refusing to add (fail='user')")
    if parameters["fail"] == "bug":
      raise ZeroDivisionError("division by zero")
    total = sum(read_number(a) for a in inputs.values()) + parameters["offset"]
    write_number(outputs["sum"], total)
    outputs["sum"].metrics["sum"] = total
    outputs["sum"].curves["loss"] = [[step, 1.0 / (step + 1)] for step in range(5)]


class AddSpec(ComponentSpec):
  INPUTS = {"a": InputSpec(Number), "b": InputSpec(Number, optional=True)}
  OUTPUTS = {"sum": Number}
  PARAMETERS = {"offset": Parameter(int, 0), "fail": Parameter(str, "")}
  EXECUTOR = "tests.pipeline.tiny_components:AddExecutor"


class RecordBeamExecutor(BaseExecutor):
  """Writes the runtime options it received, to test what the runner forwards to whom."""

  def run(self, inputs, outputs, parameters):
    with open(outputs["number"].path("value.txt"), "w", encoding="utf-8") as f:
      f.write("0")
    outputs["number"].properties["beam_pipeline_args"] = list(self.context.beam_pipeline_args)
    outputs["number"].properties["distribution_strategy"] = self.context.distribution_strategy


class BeamSpec(ComponentSpec):
  OUTPUTS = {"number": Number}
  EXECUTOR = "tests.pipeline.tiny_components:RecordBeamExecutor"
  USES_BEAM = True


class LocalOnlyBeamSpec(BeamSpec):
  """A Beam component that refuses every non-local runner, to test that the pipeline runner asks
  each component's own check before anything runs."""

  @classmethod
  def check_runtime_options(cls, beam_pipeline_args):
    for arg in beam_pipeline_args:
      if arg.startswith("--runner=") and arg != "--runner=DirectRunner":
        raise UserError(f"{arg}: this component runs on the DirectRunner only")


class PlainSpec(ComponentSpec):
  OUTPUTS = {"number": Number}
  EXECUTOR = "tests.pipeline.tiny_components:RecordBeamExecutor"


class NumberEvaluatorExecutor(EvaluatorExecutor):
  """The real evaluator's blessing logic, with the number as the model's 'accuracy'."""

  def compute_metrics(self, model, parameters, evaluation_dir):
    return {"accuracy": read_number(model) / 100.0}


class TinyEvaluatorSpec(EvaluatorSpec):
  INPUTS = {"model": InputSpec(Number)}
  EXECUTOR = "tests.pipeline.tiny_components:NumberEvaluatorExecutor"


class TinyExportExecutor(BaseExecutor):
  def run(self, inputs, outputs, parameters):
    with open(outputs["saved_model"].path("saved_model.pb"), "w", encoding="utf-8") as f:
      f.write(f"model {read_number(inputs['number'])}")
    outputs["saved_model"].properties["task"] = "toy"


class TinyExportSpec(ComponentSpec):
  INPUTS = {"number": InputSpec(Number)}
  OUTPUTS = {"saved_model": SavedModel}
  EXECUTOR = "tests.pipeline.tiny_components:TinyExportExecutor"
