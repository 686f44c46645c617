"""Checkpoint importer executor: converts a released checkpoint into our Keras encoder format.

The Model artifact layout shared by the importer and the pretrainer: `encoder/` holds
`encoder.keras`, `model_config.json` and `vocab.txt`, which `bert_keras.interop.load_encoder` reads.
"""

from __future__ import annotations

import json

from bert_keras.orchestration.base_executor import BaseExecutor

ENCODER_DIR = "encoder"


def record_encoder(model, config: dict, source: str) -> None:
  """Properties and metrics every encoder Model artifact carries."""
  model.properties.update(encoder_dir=ENCODER_DIR, source=source, model_config=config)
  model.metrics.update(num_layers=config["num_layers"], hidden_size=config["hidden_size"],
                       vocab_size=config["vocab_size"])


class CheckpointImporterExecutor(BaseExecutor):

  def run(self, inputs, outputs, parameters):
    from bert_keras.interop import detect_format  # pylint: disable=import-outside-toplevel
    from bert_keras.interop.convert import convert_checkpoint

    model = outputs["model"]
    fmt, _ = detect_format(parameters["checkpoint_dir"])
    source = {"keras_weights": "keras"}.get(fmt, fmt)
    self.log(f"importing the {fmt} checkpoint {parameters['checkpoint_dir']}")
    summary = convert_checkpoint(source, "keras", parameters["checkpoint_dir"],
                                 model.path(ENCODER_DIR),
                                 tokenizer_lower_case=parameters["lower_case"],
                                 vocab_file=parameters["vocab_file"] or None)
    if not summary.get("vocab_file"):
      from bert_keras.errors import UserError  # pylint: disable=import-outside-toplevel
      raise UserError(f"{parameters['checkpoint_dir']}: no vocab.txt beside the checkpoint; set "
                      "the importer's vocab_file")
    record_encoder(model, summary["model_config"], f"{fmt}:{summary['input']}")
    model.properties.update(lower_case=parameters["lower_case"], warnings=summary["warnings"])
    model.metrics["loaded_variables"] = summary["num_loaded"]
    self.log(f"loaded {summary['num_loaded']} variables: "
             f"{json.dumps({k: summary['model_config'][k] for k in ('num_layers', 'hidden_size')})}")
