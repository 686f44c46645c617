"""Exporter spec: a fine-tuned Model in, a SavedModel (and/or a LiteRT model) out."""

from __future__ import annotations

from bert_keras.orchestration.component_spec import ComponentSpec, InputSpec, Parameter
from bert_keras.orchestration.standard_artifacts import Model, SavedModel


class ExporterSpec(ComponentSpec):
  """Exports the model as a text-in SavedModel.

  The SavedModel takes raw strings (tokenizer and packer inside), so serving needs no Python;
  format=litert writes a LiteRT model.tflite instead, saved_model,litert both."""

  INPUTS = {"model": InputSpec(Model)}
  OUTPUTS = {"saved_model": SavedModel}
  PARAMETERS = {
      "format": Parameter(str, "saved_model", doc="A comma list: saved_model, litert "
                          "(model.tflite instead of the SavedModel) or saved_model,litert (both, "
                          "side by side; the pusher copies what is there)."),
      "quantize": Parameter(str, "none", doc="litert format: none or int8 (dynamic range)."),
  }
  EXECUTOR = "components.exporter.executor:ExporterExecutor"
