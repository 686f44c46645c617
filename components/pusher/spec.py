"""Pusher spec: a SavedModel and its blessing in, a record of the push out."""

from __future__ import annotations

from bert_keras.orchestration.component_spec import ComponentSpec, InputSpec, Parameter
from bert_keras.orchestration.standard_artifacts import ModelBlessing, PushedModel, SavedModel


class PusherSpec(ComponentSpec):
  """Copies a blessed SavedModel to the next version under `serving_dir`.

  An unblessed model is not pushed: the output then records `pushed: false` and why.
  """

  INPUTS = {"saved_model": InputSpec(SavedModel), "blessing": InputSpec(ModelBlessing)}
  OUTPUTS = {"pushed_model": PushedModel}
  PARAMETERS = {
      "serving_dir": Parameter(str, doc="Versions go to <serving_dir>/<model_name>/<version>/."),
      "model_name": Parameter(str, "", doc="Defaults to the SavedModel's task name."),
  }
  EXECUTOR = "components.pusher.executor:PusherExecutor"
