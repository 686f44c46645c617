"""Fine-tuner executor: `bert_keras.tasks.finetuning.run_finetuning` from the input encoder.

The output Model directory is run_finetuning's output: model.keras (the serving-ready task model),
task_info.json and vocab.txt (what the exporter needs), config.json, metrics.json, predictions.
"""

from __future__ import annotations

import json

from bert_keras.orchestration.base_executor import BaseExecutor
from bert_keras.json_io import read_json_file


class FineTunerExecutor(BaseExecutor):

  def run(self, inputs, outputs, parameters):
    # pylint: disable=import-outside-toplevel
    from bert_keras.tasks.finetuning import RunConfig, run_finetuning
    from bert_keras.configs.tasks import get_task_config

    base, model = inputs["model"], outputs["model"]
    task_config = get_task_config(parameters["task"], **parameters["task_config"])
    run = RunConfig(data_dir=parameters["data_dir"], output_dir=model.uri,
                    init_checkpoint=base.path(base.properties.get("encoder_dir", "")),
                    lower_case=base.properties.get("lower_case"),
                    distribution_strategy=self.context.distribution_strategy,
                    max_train_examples=parameters["max_train_examples"])
    self.log(f"fine-tuning {task_config.task} from {base.producer or base.uri} "
             f"({task_config.num_epochs:g} epochs, seq {task_config.max_seq_length}, "
             f"batch {task_config.train_batch_size}, lr {task_config.learning_rate:g})")
    results = run_finetuning(task_config, run)
    for split in ("dev",):
      if isinstance(results.get(split), dict):
        model.metrics.update({f"{split}_{k}": float(v) for k, v in results[split].items()
                              if isinstance(v, (int, float)) and not isinstance(v, bool)})
    for key in ("final_train_loss", "train_seconds", "train_steps", "train_examples"):
      if key in results:
        model.metrics[key] = float(results[key])
    task_info = read_json_file(model.path("task_info.json"), "task_info.json", expected=dict)
    model.properties.update(task=task_config.task, kind="task_model", base=base.producer,
                            task_info=task_info)
    self.log(f"{task_config.task}: " + json.dumps(results.get("dev", {}), default=str))
