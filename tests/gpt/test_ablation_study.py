"""The study's model builders: the ELMo-style LTR + RTL model checkpoints and restores."""

import keras
import numpy as np
import tensorflow as tf

from bert_keras.gpt.ablation_study import build_bert_task_model, build_elmo_encoders
from bert_keras.training.trainer import model_variables
from configs.ablations import get_ablation, get_study_config
from tests.models import harness

VOCAB = 60


def _elmo_span_model(seed):
  keras.utils.set_random_seed(seed)
  study = get_study_config("smoke")
  encoders = build_elmo_encoders(study, VOCAB, get_ablation("elmo_ltr_rtl"))
  return encoders, build_bert_task_model(encoders, "span", 2)


def _inputs():
  return harness.random_inputs(batch=3, seq=12, vocab_size=VOCAB, seed=4)


def test_elmo_directions_have_distinct_variable_paths():
  encoders, model = _elmo_span_model(0)
  paths = [v.path for v in model.variables]
  assert len(paths) == len(set(paths))
  assert any(p.startswith("ltr_encoder/token_embedding") for p in paths)
  assert any(p.startswith("rtl_encoder/token_embedding") for p in paths)
  assert [e.name for e in encoders] == ["ltr_encoder", "rtl_encoder"]
  # Keyed by path exactly as the Trainer checkpoints a model.
  assert len(model_variables(model)) == len(model.variables)


def test_elmo_model_checkpoint_round_trip(tmp_path):
  _, model = _elmo_span_model(0)
  inputs = _inputs()
  expected = np.asarray(model(inputs, training=False)["logits"])
  path = tf.train.Checkpoint(model=model_variables(model)).save(str(tmp_path / "ckpt"))

  _, fresh = _elmo_span_model(1)
  before = np.asarray(fresh(inputs, training=False)["logits"])
  assert np.abs(before - expected).max() > 1e-4  # a different initialisation
  tf.train.Checkpoint(model=model_variables(fresh)).restore(path).assert_existing_objects_matched()
  np.testing.assert_array_equal(np.asarray(fresh(inputs, training=False)["logits"]), expected)


def test_elmo_weights_still_move_by_order():
  """Pretraining hands the study's encoders their weights with get/set_weights: the name scope
  must not change the weight order or shapes of a plain BertEncoder of the same size."""
  encoders, _ = _elmo_span_model(0)
  ltr, rtl = encoders
  assert [w.shape for w in ltr.get_weights()] == [w.shape for w in rtl.get_weights()]
  rtl.set_weights(ltr.get_weights())
  inputs = _inputs()
  np.testing.assert_allclose(np.asarray(rtl(inputs, training=False)["sequence_output"]),
                             np.asarray(ltr(inputs, training=False)["sequence_output"]), atol=1e-6)
