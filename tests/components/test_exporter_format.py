"""The exporter component's `format` parameter (a SavedModel, model.tflite instead of it, or both)
and what the pusher then copies; an unknown value is one clear error before anything is written."""

import json
import os
import shutil

import pytest

from bert_keras import resources
from bert_keras.errors import UserError
from bert_keras.orchestration.base_executor import ExecutionContext
from bert_keras.orchestration.standard_artifacts import (Model, ModelBlessing, PushedModel,
                                                         SavedModel)
from bert_keras.serving import litert
from components.exporter.executor import ExporterExecutor
from components.exporter.spec import ExporterSpec
from components.pusher.executor import PusherExecutor
from tests.export import tiny_exports


def test_format_defaults_to_the_saved_model_alone():
  assert ExporterSpec.PARAMETERS["format"].default == "saved_model"
  assert ExporterSpec.PARAMETERS["quantize"].default == "none"


@pytest.mark.parametrize("format_, message", [
    ("onnx", r"format='onnx'; expected one of \('saved_model', 'litert', 'saved_model,litert'\)"),
    ("litert,saved_model", "format='litert,saved_model'; expected one of"),
    ("saved_model", "quantize=int8: applies to format=litert only")])
def test_a_bad_format_is_refused_before_anything_is_written(tmp_path, format_, message):
  out = tmp_path / "out"
  with pytest.raises(UserError, match=message):
    ExporterExecutor().run({"model": Model(str(tmp_path / "model"))},
                           {"saved_model": SavedModel(str(out))},
                           {"format": format_, "quantize": "int8"})
  assert not os.path.exists(out)


def test_a_litert_only_export_is_pushed_and_serves(tmp_path):
  # A fine-tuned classifier as run_finetuning leaves it, exported as model.tflite alone.
  _, model, options = tiny_exports.build("classification")
  model_dir = tmp_path / "model"
  model_dir.mkdir()
  model.save(str(model_dir / "model.keras"))
  shutil.copyfile(resources.uncased_vocab_path(), model_dir / "vocab.txt")
  (model_dir / "task_info.json").write_text(json.dumps({
      "task": "polarity", "label_names": options["labels"], "max_seq_length": tiny_exports.SEQ,
      "num_segments": 1, "lower_case": True}))
  export = SavedModel(str(tmp_path / "export"))
  ExporterExecutor().run({"model": Model(str(model_dir))}, {"saved_model": export},
                         {"format": "litert", "quantize": "none"})
  assert sorted(os.listdir(export.path("saved_model"))) == ["model.tflite"]
  assert export.properties["formats"] == ["litert"]

  blessing = ModelBlessing(str(tmp_path / "blessing"))
  blessing.properties.update(blessed=True)
  logs = []
  pushed = PushedModel(str(tmp_path / "pushed"))
  PusherExecutor(ExecutionContext(log_fn=logs.append)).run(
      {"saved_model": export, "blessing": blessing}, {"pushed_model": pushed},
      {"serving_dir": str(tmp_path / "serving"), "model_name": ""})
  version = tmp_path / "serving" / "polarity" / "1"
  assert os.listdir(version) == ["model.tflite"] and pushed.properties["pushed"] is True
  assert "(model.tflite only: no SavedModel for TF Serving)" in logs[-1]
  served = litert.load(str(version / "model.tflite")).serve(["a gripping film", ""])
  assert served["label"].tolist() == [options["labels"][i].encode() for i in served["label_id"]]
