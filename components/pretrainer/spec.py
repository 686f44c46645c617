"""Pretrainer spec: Examples + Vocabulary in, a Model (encoder weights + config + vocab) out."""

from __future__ import annotations

from components.base.component_spec import ComponentSpec, InputSpec, Parameter
from components.base.standard_artifacts import Examples, Model, Vocabulary


class PretrainerSpec(ComponentSpec):
  """`training` holds TrainingConfig fields (configs/training.py: model_preset, num_train_steps,
  train_batch_size, learning_rate, ...). Input files, sequence length, vocabulary size and special
  token ids come from the input artifacts; the distribution strategy from the runner."""

  INPUTS = {"examples": InputSpec(Examples), "vocabulary": InputSpec(Vocabulary)}
  OUTPUTS = {"model": Model}
  PARAMETERS = {"training": Parameter(dict, {})}
  EXECUTOR = "components.pretrainer.executor:PretrainerExecutor"
  USES_DISTRIBUTION = True
