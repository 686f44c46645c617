"""Exporter spec: a fine-tuned Model in, a SavedModel out."""

from __future__ import annotations

from bert_keras.orchestration.component_spec import ComponentSpec, InputSpec, Parameter
from bert_keras.orchestration.standard_artifacts import Model, SavedModel


class ExporterSpec(ComponentSpec):
  """Exports the model as a text-in SavedModel.

  The SavedModel takes raw strings (tokenizer and packer inside), so serving needs no Python."""

  INPUTS = {"model": InputSpec(Model)}
  OUTPUTS = {"saved_model": SavedModel}
  PARAMETERS = {
      "format": Parameter(str, "saved_model", doc="saved_model, or litert: model.tflite beside "
                          "saved_model.pb as well (the pusher copies both)."),
      "quantize": Parameter(str, "none", doc="format=litert: none or int8 (dynamic range)."),
  }
  EXECUTOR = "components.exporter.executor:ExporterExecutor"
