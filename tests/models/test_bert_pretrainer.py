import h5py
import keras
import numpy as np
import pytest
import tensorflow as tf

from bert_keras.models.bert_encoder import BertEncoder
from bert_keras.models.bert_pretrainer import BertPretrainer
from bert_keras.training import losses
from tests.models import harness


def _loss(features, outputs, objective="mlm_nsp"):
  return losses.loss_from_sums(losses.pretraining_loss_sums(features, outputs, objective))


TINY = dict(vocab_size=60, hidden_size=32, num_layers=2, num_heads=4, intermediate_size=64)


def _batch(objective, batch=4, seq=12, predictions=3, seed=0):
  rng = np.random.default_rng(seed)
  inputs = harness.random_inputs(batch=batch, seq=seq, vocab_size=60, num_padding=2, seed=seed)
  features = {"input_ids": inputs["input_word_ids"], "input_mask": inputs["input_mask"],
              "masked_lm_ids": rng.integers(5, 60, (batch, predictions)).astype("int32"),
              "masked_lm_weights": np.array([[1, 1, 0]] * batch, "float32"),
              "next_sentence_labels": rng.integers(0, 2, (batch, 1)).astype("int32")}
  if objective != "ltr":
    inputs["masked_lm_positions"] = np.tile(np.arange(1, predictions + 1, dtype="int32"),
                                            (batch, 1))
  return inputs, features


@pytest.mark.parametrize("objective", ["mlm_nsp", "mlm", "ltr"])
def test_heads_shapes_and_save_load(objective, tmp_path):
  encoder = BertEncoder(**TINY, attention="causal" if objective == "ltr" else "bidirectional")
  model = BertPretrainer(encoder, objective)
  inputs, _ = _batch(objective)
  outputs = model(inputs)
  if objective == "ltr":
    assert tuple(outputs["mlm_logits"].shape) == (4, 12, 60)
  else:
    assert tuple(outputs["mlm_logits"].shape) == (4, 3, 60)
  assert ("nsp_logits" in outputs) == (objective == "mlm_nsp")
  harness.assert_save_load_round_trip(model, inputs, tmp_path, "mlm_logits")


def test_mlm_output_projection_is_tied_to_the_token_embedding():
  encoder = BertEncoder(**TINY)
  model = BertPretrainer(encoder)
  table_ids = {id(w) for w in model.weights if w.path.endswith("token_embedding/embeddings")}
  assert len(table_ids) == 1  # one table, used for input and output
  heads = sum(int(np.prod(w.shape)) for w in model.mlm_head.trainable_weights
              if "embeddings" not in w.path)
  assert model.count_params() == encoder.count_params() + heads + (32 * 2 + 2)


def test_loss_is_mean_masked_xent_plus_nsp_xent_and_ignores_padding_predictions():
  encoder = BertEncoder(**TINY)
  model = BertPretrainer(encoder)
  inputs, features = _batch("mlm_nsp")
  outputs = model(inputs)
  loss = float(_loss(features, outputs))
  mlm_logits = outputs["mlm_logits"].numpy()[:, :2]  # weight-0 third prediction excluded
  log_probs = mlm_logits - np.log(np.exp(mlm_logits).sum(-1, keepdims=True))
  labels = features["masked_lm_ids"][:, :2]
  mlm = -np.take_along_axis(log_probs, labels[..., None], -1).mean()
  nsp_logits = outputs["nsp_logits"].numpy()
  nsp_lp = nsp_logits - np.log(np.exp(nsp_logits).sum(-1, keepdims=True))
  nsp = -nsp_lp[np.arange(4), features["next_sentence_labels"][:, 0]].mean()
  np.testing.assert_allclose(loss, mlm + nsp, rtol=1e-5)


def test_ltr_objective_needs_a_causal_encoder():
  with pytest.raises(ValueError, match="causal"):
    BertPretrainer(BertEncoder(**TINY), "ltr")


@pytest.mark.parametrize("objective", ["mlm_nsp", "ltr"])
def test_one_training_step_reduces_the_loss(objective):
  keras.utils.set_random_seed(0)
  encoder = BertEncoder(**TINY, dropout_rate=0.0, attention_dropout_rate=0.0,
                        attention="causal" if objective == "ltr" else "bidirectional")
  model = BertPretrainer(encoder, objective)
  inputs, features = _batch(objective)
  optimizer = keras.optimizers.Adam(1e-2)
  before = float(_loss(features, model(inputs), objective))
  for _ in range(5):
    with tf.GradientTape() as tape:
      loss = _loss(features, model(inputs, training=True), objective)
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply(grads, model.trainable_variables)
  after = float(_loss(features, model(inputs), objective))
  assert after < before - 0.1


def test_the_saved_layout_nests_the_encoder(tmp_path):
  """Files keep `layers/bert_encoder/...` (the checkpoint loader recognises it)."""
  model = BertPretrainer(BertEncoder(**TINY))
  path = str(tmp_path / "pretrainer.weights.h5")
  model.save_weights(path)
  with h5py.File(path, "r") as f:
    names = []
    f.visit(names.append)
  assert any(name.startswith("layers/bert_encoder/") for name in names)
