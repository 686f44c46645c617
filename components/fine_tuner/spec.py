"""Fine-tuner spec: a pretrained Model in, a fine-tuned task Model out."""

from __future__ import annotations

from bert_keras.orchestration.component_spec import ComponentSpec, InputSpec, Parameter
from bert_keras.orchestration.standard_artifacts import Model


class FineTunerSpec(ComponentSpec):
  """Fine-tunes the model on one registered task.

  `task_config` holds TaskConfig fields (bert_keras/configs/tasks.py) over the preset named by `task`.
  """

  INPUTS = {"model": InputSpec(Model)}
  OUTPUTS = {"model": Model}
  PARAMETERS = {
      "task": Parameter(str, doc="A registered task, e.g. glue/sst2 (bert_keras/tasks/)."),
      "task_config": Parameter(dict, {}, doc="TaskConfig fields over the task's preset."),
      "data_dir": Parameter(str, "", is_path=True, doc="Empty: the task's embedded data."),
      "max_train_examples": Parameter(int, 0, doc="Train on at most this many examples; 0 = all."),
  }
  EXECUTOR = "components.fine_tuner.executor:FineTunerExecutor"
  USES_DISTRIBUTION = True
