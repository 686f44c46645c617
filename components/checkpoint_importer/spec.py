"""Checkpoint importer spec: a checkpoint directory in (a parameter), a Model out."""

from __future__ import annotations

from bert_keras.orchestration.component_spec import ComponentSpec, Parameter
from bert_keras.orchestration.standard_artifacts import Model


class CheckpointImporterSpec(ComponentSpec):
  """Imports a pretrained checkpoint as a Model.

  Hugging Face (config.json + model.safetensors) or Google (bert_config.json + TF1 checkpoint).
  """

  OUTPUTS = {"model": Model}
  PARAMETERS = {
      "checkpoint_dir": Parameter(str, is_path=True, doc="The checkpoint's directory."),
      "vocab_file": Parameter(str, "", is_path=True, doc="Defaults to vocab.txt beside the checkpoint."),
      "lower_case": Parameter(bool, True, doc="Whether the checkpoint's tokenizer lowercases."),
  }
  EXECUTOR = "components.checkpoint_importer.executor:CheckpointImporterExecutor"
