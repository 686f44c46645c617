"""Task heads: build on a tiny encoder, call, one fit step, get_config and .keras round trip."""

import os

import keras
import numpy as np
import pytest

from bert_keras.models.bert_encoder import BertEncoder
from bert_keras.models.heads.bert_classifier import BertClassifier
from bert_keras.models.heads.bert_feature_classifier import BertFeatureClassifier
from bert_keras.models.heads.bert_feature_tagger import BertFeatureTagger
from bert_keras.models.heads.bert_multiple_choice import BertMultipleChoice
from bert_keras.models.heads.bert_span_labeler import BertSpanLabeler
from bert_keras.models.heads.bert_token_classifier import BertTokenClassifier
from bert_keras.configs.model import get_model_config

SEQ = 16


def _encoder():
  return BertEncoder.from_model_config(get_model_config("bert_tiny", vocab_size=64))


def _inputs(choices=None):
  rng = np.random.default_rng(0)
  shape = (2, SEQ) if choices is None else (2, choices, SEQ)
  mask = np.ones(shape, np.int32)
  mask[..., -3:] = 0
  return {"input_word_ids": rng.integers(1, 64, shape).astype(np.int32), "input_mask": mask,
          "input_type_ids": np.zeros(shape, np.int32)}


CASES = {
    "classifier": (lambda: BertClassifier(_encoder(), 3), None,
                   {"logits": np.array([0, 2])}, {"logits": (2, 3)}),
    "regression": (lambda: BertClassifier(_encoder(), 1), None,
                   {"logits": np.array([[0.5], [1.0]], np.float32)}, {"logits": (2, 1)}),
    "span": (lambda: BertSpanLabeler(_encoder()), None,
             {"start_logits": np.array([1, 2]), "end_logits": np.array([3, 2])},
             {"start_logits": (2, SEQ), "end_logits": (2, SEQ)}),
    "choice": (lambda: BertMultipleChoice(_encoder()), 4, {"logits": np.array([1, 3])},
               {"logits": (2, 4)}),
    "tagger": (lambda: BertTokenClassifier(_encoder(), 5), None,
               {"logits": np.full((2, SEQ), 1)}, {"logits": (2, SEQ, 5)}),
    "feature_tagger": (lambda: BertFeatureTagger(_encoder(), 5, feature_layers=(-2, -1),
                                                 lstm_units=8), None,
                       {"logits": np.full((2, SEQ), 1)}, {"logits": (2, SEQ, 5)}),
    "feature_classifier": (lambda: BertFeatureClassifier(_encoder(), 2, feature_layers=(-1,),
                                                         lstm_units=8), None,
                           {"logits": np.array([0, 1])}, {"logits": (2, 2)}),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_head_build_fit_save_load(tmp_path, case):
  make, choices, labels, shapes = CASES[case]
  model = make()
  x = _inputs(choices)
  out = model(x)
  assert {k: tuple(v.shape) for k, v in out.items()} == shapes
  assert all(keras.backend.standardize_dtype(v.dtype) == "float32" for v in out.values())
  losses = {k: (keras.losses.MeanSquaredError() if case == "regression" else
                keras.losses.SparseCategoricalCrossentropy(from_logits=True)) for k in labels}
  model.compile(optimizer="adam", loss=losses)
  encoder_before = [w.numpy().copy() for w in model.encoder.weights]
  model.fit(x, labels, epochs=1, verbose=0)
  changed = any(not np.allclose(a, b.numpy()) for a, b in zip(encoder_before, model.encoder.weights))
  # Fine-tuning updates the encoder; the feature-based tagger keeps it frozen (section 5.3).
  assert changed == (not case.startswith("feature_"))
  path = os.path.join(str(tmp_path), "model.keras")
  model.save(path)
  loaded = keras.models.load_model(path)
  assert type(loaded) is type(model)
  again = loaded(x)
  for k in out:
    np.testing.assert_allclose(np.asarray(again[k]), np.asarray(model(x)[k]), atol=1e-5)
  config = model.get_config()
  assert type(model).from_config(config).count_params() == model.count_params()


def test_span_labeler_ignores_padding():
  model = BertSpanLabeler(_encoder())
  out = model(_inputs())
  assert np.all(np.asarray(out["start_logits"])[:, -3:] < -1000)


def test_feature_tagger_checks_layers():
  with pytest.raises(ValueError, match="feature_layers has -4; the encoder has 2 layers"):
    BertFeatureTagger(_encoder(), 3)
