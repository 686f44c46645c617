import h5py
import keras
import numpy as np
import pytest
import tensorflow as tf

from bert_keras.models.bert_encoder import BertEncoder
from bert_keras.models.bert_pretrainer import BertPretrainer
from bert_keras.training import losses
from tests.models import harness

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
  loss = float(losses.pretraining_loss(features, outputs))
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
  before = float(losses.pretraining_loss(features, model(inputs), objective))
  for _ in range(5):
    with tf.GradientTape() as tape:
      loss = losses.pretraining_loss(features, model(inputs, training=True), objective)
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply(grads, model.trainable_variables)
  after = float(losses.pretraining_loss(features, model(inputs), objective))
  assert after < before - 0.1


def _twins(objective="mlm_nsp"):
  """The pretrainer and its twin whose last block computes every position, sharing all weights."""
  keras.utils.set_random_seed(3)
  encoder = BertEncoder(**TINY, dropout_rate=0.0, attention_dropout_rate=0.0)
  model = BertPretrainer(encoder, objective)
  full = BertPretrainer(encoder, objective, last_block_all_positions=True)
  full.mlm_head.set_weights(model.mlm_head.get_weights())
  if model.nsp_head is not None:
    full.nsp_head.set_weights(model.nsp_head.get_weights())
  return model, full


def _inputs_with_hard_positions():
  inputs, features = _batch("mlm_nsp", predictions=4, seed=4)
  # Repeats, [CLS] itself, padding (positions 10 and 11 are padded), positions out of order.
  inputs["masked_lm_positions"] = np.array(
      [[5, 5, 0, 11], [1, 9, 10, 2], [7, 3, 1, 4], [0, 0, 0, 0]], "int32")
  features["masked_lm_weights"] = np.array([[1, 1, 1, 0], [1, 1, 0, 1], [1, 1, 1, 1],
                                            [1, 0, 0, 0]], "float32")
  return inputs, features


def test_last_block_computes_only_the_rows_the_heads_read():
  model, full = _twins()
  inputs, _ = _inputs_with_hard_positions()

  def feed_forward_rows(m):
    """Row counts of the traced graph's feed-forward GEMMs (batch * rows, intermediate)."""
    specs = {k: tf.TensorSpec(v.shape, tf.int32) for k, v in inputs.items()}
    graph = tf.function(lambda x: m(x, training=False)).get_concrete_function(specs).graph
    return sorted(op.outputs[0].shape[0] for op in graph.get_operations()
                  if op.type == "MatMul" and "/intermediate" in op.name)

  # batch 4 x seq 12 = 48 rows in every block of the full model; the last block of the
  # pretrainer runs 4 x (1 + P) = 20 rows: [CLS] and the 4 masked positions.
  assert feed_forward_rows(full) == [48, 48]
  assert feed_forward_rows(model) == [20, 48]

@pytest.mark.parametrize("objective", ["mlm_nsp", "mlm"])
def test_variables_and_saved_layout_are_those_of_the_nested_encoder(objective, tmp_path):
  """The encoder stays one nested layer: the same variable order (optimizer slots in checkpoints
  follow it by index) and the same .weights.h5 layout as a graph that calls the encoder whole."""
  model, full = _twins(objective)
  assert [v.path for v in model.variables] == [v.path for v in full.variables]
  assert [v.path for v in model.trainable_variables] == [
      v.path for v in full.trainable_variables]
  assert [type(layer).__name__ for layer in model.layers if layer.weights] == [
      type(layer).__name__ for layer in full.layers if layer.weights]
  layouts = []
  for m in (model, full):
    path = str(tmp_path / f"{m.name}.weights.h5")
    m.save_weights(path)
    with h5py.File(path, "r") as f:  # every stored variable's path and shape
      names = []
      f.visititems(lambda name, obj: names.append((name, obj.shape))
                   if isinstance(obj, h5py.Dataset) else None)
    layouts.append(sorted(names))
  assert layouts[0] == layouts[1]
  assert any(name.startswith("layers/bert_encoder/") for name, _ in layouts[0])
  # A file of one loads into the other.
  inputs, _ = _inputs_with_hard_positions()
  keras.utils.set_random_seed(9)
  other = BertPretrainer(BertEncoder(**TINY, dropout_rate=0.0, attention_dropout_rate=0.0),
                         objective)
  other.load_weights(str(tmp_path / f"{full.name}.weights.h5"))
  np.testing.assert_allclose(other(inputs)["mlm_logits"].numpy(),
                             full(inputs)["mlm_logits"].numpy(), atol=1e-5)


@pytest.mark.parametrize("objective", ["mlm_nsp", "mlm"])
@pytest.mark.parametrize("training", [False, True])
def test_logits_and_gradients_equal_those_of_the_full_last_block(training, objective):
  model, full = _twins(objective)
  inputs, features = _inputs_with_hard_positions()
  for key in ("mlm_logits", "nsp_logits")[:2 if objective == "mlm_nsp" else 1]:
    np.testing.assert_allclose(model(inputs, training=training)[key].numpy(),
                               full(inputs, training=training)[key].numpy(), atol=1e-5)

  def grads(m):
    with tf.GradientTape() as tape:
      loss = losses.pretraining_loss(features, m(inputs, training=training), objective)
    return {v.path: g for v, g in zip(m.trainable_variables,
                                       tape.gradient(loss, m.trainable_variables))}

  fast, slow = grads(model), grads(full)
  assert fast.keys() == slow.keys()
  for path in fast:
    assert (fast[path] is None) == (slow[path] is None), path  # "mlm": the pooler has none
    if fast[path] is None:
      continue
    np.testing.assert_allclose(tf.convert_to_tensor(fast[path]).numpy(),
                               tf.convert_to_tensor(slow[path]).numpy(), atol=1e-5, err_msg=path)


def test_last_block_all_positions_round_trips_its_config(tmp_path):
  _, full = _twins()
  clone = harness.assert_config_round_trip(full)
  assert clone.last_block_all_positions
  assert "last_block_all_positions" not in BertPretrainer(BertEncoder(**TINY)).get_config()
  inputs, _ = _inputs_with_hard_positions()
  harness.assert_save_load_round_trip(full, inputs, tmp_path, "nsp_logits")
