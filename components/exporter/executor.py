"""Exporter executor: model.keras + task_info.json + vocab.txt -> a text-in SavedModel, a LiteRT
model (model.tflite) or both, in the artifact's saved_model/ directory."""

from __future__ import annotations

import os

from bert_keras.orchestration.base_executor import BaseExecutor
from bert_keras.json_io import read_json_file


def export_kind(task_info: dict) -> tuple[str, dict]:
  """(export kind, extra settings) of a sentence (pair) classification or regression task."""
  kind = "regression" if task_info.get("regression") else "classification"
  return kind, {"pair": task_info.get("num_segments", 1) == 2}


class ExporterExecutor(BaseExecutor):

  def run(self, inputs, outputs, parameters):
    # pylint: disable=import-outside-toplevel
    from bert_keras import keras_classes
    from bert_keras.configs.export import ExportConfig
    from bert_keras.errors import UserError
    from bert_keras.export.export_task_model import export_task_model
    from bert_keras.text.bert_tokenizer import BertTokenizer

    model, saved_model = inputs["model"], outputs["saved_model"]
    formats = parameters.get("format", "saved_model")
    # ExportConfig owns the format and quantize checks (the same as export_model.py's).
    ExportConfig(output_dir=saved_model.uri, finetuned_dir=model.uri, format=formats,
                 quantize=parameters.get("quantize", "none"))
    info_path = model.path("task_info.json")
    if not os.path.exists(info_path):
      raise UserError(f"{model.uri}: no task_info.json; is this a fine-tuned task model?")
    info = read_json_file(info_path, "task_info.json", expected=dict)
    kind, extra = export_kind(info)
    tokenizer = BertTokenizer(vocab_path=model.path("vocab.txt"),
                              lower_case=bool(info.get("lower_case", True)))
    task_model = keras_classes.load_model(model.path("model.keras"))
    # The export goes to a subdirectory: export_task_model renames its own temp dir into place.
    export_dir = saved_model.path("saved_model")
    if "saved_model" in formats:
      self.log(f"exporting {info['task']} as a text-in {kind} SavedModel")
      export_task_model(task_model, kind, tokenizer, export_dir, int(info["max_seq_length"]),
                        labels=info.get("label_names"), task=info["task"], extra=extra)
    if "litert" in formats:
      from bert_keras.export import litert_export
      self.log(f"exporting {info['task']} as a LiteRT {kind} model")
      litert_export.export_litert(
          task_model, kind, tokenizer, os.path.join(export_dir, litert_export.LITERT_FILE),
          int(info["max_seq_length"]), labels=info.get("label_names"), task=info["task"],
          extra=extra, quantize=parameters.get("quantize", "none"))
      saved_model.properties.update(litert_file=litert_export.LITERT_FILE)
    saved_model.properties.update(task=info["task"], kind=kind, pair=extra["pair"],
                                  labels=info.get("label_names"), saved_model_dir="saved_model",
                                  formats=formats.split(","))
