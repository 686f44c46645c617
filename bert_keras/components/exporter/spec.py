"""Exporter spec: a fine-tuned Model in, a SavedModel out."""

from __future__ import annotations

from bert_keras.components.base.component_spec import ComponentSpec, InputSpec
from bert_keras.components.base.standard_artifacts import Model, SavedModel


class ExporterSpec(ComponentSpec):
  """Exports the model as a text-in SavedModel.

  The SavedModel takes raw strings (tokenizer and packer inside), so serving needs no Python."""

  INPUTS = {"model": InputSpec(Model)}
  OUTPUTS = {"saved_model": SavedModel}
  EXECUTOR = "bert_keras.components.exporter.executor:ExporterExecutor"
