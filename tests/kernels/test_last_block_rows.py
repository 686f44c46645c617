"""The CPU implementations of BertPretrainer, BertClassifier and BertMultipleChoice: their last
block computes only the rows the heads read (the row counts: bench/check_graphs.py), with the
reference model's logits, gradients and variables."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from bert_keras import kernels
from bert_keras.models.bert_encoder import BertEncoder
from bert_keras.models.bert_pretrainer import BertPretrainer
from bert_keras.models.heads.bert_classifier import BertClassifier
from bert_keras.models.heads.bert_multiple_choice import BertMultipleChoice
from bert_keras.training import losses
from tests.models.test_bert_pretrainer import TINY, _batch


def _loss(features, outputs, objective="mlm_nsp"):
  return losses.loss_from_sums(losses.pretraining_loss_sums(features, outputs, objective))


def _twins(objective="mlm_nsp"):
  """The reference pretrainer and its CPU implementation (the same variables)."""
  keras.utils.set_random_seed(3)
  encoder = BertEncoder(**TINY, dropout_rate=0.0, attention_dropout_rate=0.0)
  model = BertPretrainer(encoder, objective)
  return kernels.implementation_of(model, "cpu"), model


def _inputs_with_hard_positions():
  inputs, features = _batch("mlm_nsp", predictions=4, seed=4)
  # Repeats, [CLS] itself, padding (positions 10 and 11 are padded), positions out of order.
  inputs["masked_lm_positions"] = np.array(
      [[5, 5, 0, 11], [1, 9, 10, 2], [7, 3, 1, 4], [0, 0, 0, 0]], "int32")
  features["masked_lm_weights"] = np.array([[1, 1, 1, 0], [1, 1, 0, 1], [1, 1, 1, 1],
                                            [1, 0, 0, 0]], "float32")
  return inputs, features


@pytest.mark.parametrize("objective", ["mlm_nsp", "mlm", "ltr"])
def test_the_same_variables_in_the_same_order(objective):
  """Nothing copied: the Trainer trains and checkpoints the pretrainer's own variables (its
  optimizer slots follow the pretrainer's variable order)."""
  keras.utils.set_random_seed(3)
  encoder = BertEncoder(**TINY, attention="causal" if objective == "ltr" else "bidirectional")
  model = BertPretrainer(encoder, objective)
  view = kernels.implementation_of(model, "cpu")
  assert view is not model
  unused = {v.path for v in model.variables} - {v.path for v in view.variables}
  assert unused == ({v.path for v in encoder.pooler.variables} if objective == "mlm" else set())
  assert {id(v) for v in view.variables} <= {id(v) for v in model.variables}
  assert kernels.implementation_of(model, "reference") is model


@pytest.mark.parametrize("objective", ["mlm_nsp", "mlm"])
@pytest.mark.parametrize("training", [False, True])
def test_logits_and_gradients_equal_those_of_the_full_last_block(training, objective):
  model, full = _twins(objective)
  inputs, features = _inputs_with_hard_positions()
  for key in ("mlm_logits", "nsp_logits")[:2 if objective == "mlm_nsp" else 1]:
    np.testing.assert_allclose(model(inputs, training=training)[key].numpy(),
                               full(inputs, training=training)[key].numpy(), atol=1e-5)

  def grads(m):  # by the reference model's variables, as the Trainer takes them
    variables = full.trainable_variables
    with tf.GradientTape() as tape:
      loss = _loss(features, m(inputs, training=training), objective)
    return {v.path: g for v, g in zip(variables, tape.gradient(loss, variables))}

  fast, slow = grads(model), grads(full)
  assert fast.keys() == slow.keys()
  for path in fast:
    assert (fast[path] is None) == (slow[path] is None), path  # "mlm": the pooler has none
    if fast[path] is None:
      continue
    np.testing.assert_allclose(tf.convert_to_tensor(fast[path]).numpy(),
                               tf.convert_to_tensor(slow[path]).numpy(), atol=1e-5, err_msg=path)



def _head_twins(kind):
  """A classifier or multiple-choice head and its CPU implementation (the same variables)."""
  keras.utils.set_random_seed(5)
  encoder = BertEncoder(**TINY, dropout_rate=0.0, attention_dropout_rate=0.0)
  head = (BertClassifier(encoder, 3, dropout_rate=0.0) if kind == "classifier"
          else BertMultipleChoice(encoder, dropout_rate=0.0))
  return kernels.implementation_of(head, "cpu"), head


def _head_inputs(kind):
  """Rows of different lengths, padded to 12; multiple choice: 3 batches x 2 choices."""
  rng = np.random.default_rng(6)
  lengths = np.array([12, 7, 3, 9, 5, 2])
  mask = (np.arange(12)[None] < lengths[:, None]).astype("int32")
  inputs = {"input_word_ids": rng.integers(1, TINY["vocab_size"], (6, 12)).astype("int32") * mask,
            "input_mask": mask,
            "input_type_ids": (np.arange(12)[None] >= lengths[:, None] // 2).astype("int32") * mask}
  if kind == "choice":
    inputs = {name: x.reshape(3, 2, 12) for name, x in inputs.items()}
  return inputs


@pytest.mark.parametrize("kind", ["classifier", "choice"])
@pytest.mark.parametrize("training", [False, True])
def test_pooled_heads_logits_and_gradients_equal_those_of_the_full_last_block(kind, training):
  model, full = _head_twins(kind)
  inputs = _head_inputs(kind)
  labels = np.array([0, 2, 1, 1, 0, 2]) if kind == "classifier" else np.array([1, 0, 1])
  np.testing.assert_allclose(model(inputs, training=training)["logits"].numpy(),
                             full(inputs, training=training)["logits"].numpy(), atol=1e-5)
  assert {id(v) for v in model.variables} == {id(v) for v in full.variables}

  def grads(m):
    variables = full.trainable_variables
    with tf.GradientTape() as tape:
      loss = keras.losses.sparse_categorical_crossentropy(
          labels, m(inputs, training=training)["logits"], from_logits=True)
    return [tf.convert_to_tensor(g).numpy() for g in tape.gradient(loss, variables)]

  for variable, fast, slow in zip(full.trainable_variables, grads(model), grads(full)):
    np.testing.assert_allclose(fast, slow, atol=1e-5, err_msg=variable.path)
