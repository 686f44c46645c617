"""The exporter component's `format` parameter (model.tflite beside the SavedModel, which the pusher
copies with it): an unknown value is one clear error before anything is read or written."""

import os

import pytest

from bert_keras.orchestration.standard_artifacts import Model, SavedModel
from components.exporter.executor import ExporterExecutor
from components.exporter.spec import ExporterSpec
from bert_keras.errors import UserError


def test_format_defaults_to_the_saved_model_alone():
  assert ExporterSpec.PARAMETERS["format"].default == "saved_model"
  assert ExporterSpec.PARAMETERS["quantize"].default == "none"


def test_an_unknown_format_is_refused_before_anything_is_written(tmp_path):
  out = tmp_path / "out"
  with pytest.raises(UserError, match="format='onnx'; expected saved_model or litert"):
    ExporterExecutor().run({"model": Model(str(tmp_path / "model"))},
                           {"saved_model": SavedModel(str(out))},
                           {"format": "onnx", "quantize": "none"})
  assert not os.path.exists(out)
