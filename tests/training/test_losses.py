"""The pretraining metrics' arg-max shortcut agrees with tf.argmax, ties included."""

import numpy as np
import pytest
import tensorflow as tf

from bert_keras.training import losses


@pytest.mark.parametrize("jit", [False, True])
def test_argmax_equals_matches_tf_argmax_with_ties(jit):
  rng = np.random.default_rng(0)
  logits = rng.integers(-3, 4, (4, 6, 9)).astype("float32")  # small integers: many ties
  labels = rng.integers(0, 9, (4, 6)).astype("int32")
  labels[0, :] = np.argmax(logits[0], -1)  # some certainly right
  fn = tf.function(losses._argmax_equals, jit_compile=True) if jit else losses._argmax_equals
  got = fn(tf.constant(logits), tf.constant(labels)).numpy()
  expected = (np.argmax(logits, -1) == labels).astype("float32")  # first maximal index wins
  assert (logits.max(-1, keepdims=True) == logits).sum(-1).max() > 1  # ties present
  assert 0 < expected.sum() < expected.size
  np.testing.assert_array_equal(got, expected)
  # Rank-1 labels (one row per prediction) too.
  flat = losses._argmax_equals(tf.constant(logits.reshape(-1, 9)), tf.constant(labels.reshape(-1)))
  np.testing.assert_array_equal(flat.numpy(), expected.reshape(-1))


def test_mlm_correct_counts_weighted_argmax_hits():
  logits = np.zeros((1, 3, 5), "float32")
  logits[0, 0, 2] = 1.0  # predicts 2
  logits[0, 1, [1, 3]] = 1.0  # tie 1/3: argmax 1
  logits[0, 2, 4] = 1.0  # predicts 4, but weight 0
  features = {"masked_lm_ids": tf.constant([[2, 3, 4]]),
              "masked_lm_weights": tf.constant([[1.0, 1.0, 0.0]])}
  sums = losses.pretraining_loss_sums(features, {"mlm_logits": tf.constant(logits)}, "mlm")
  assert float(sums["mlm_correct"]) == 1.0  # the tie goes to index 1, not the label 3
  assert float(sums["mlm_weight"]) == 2.0
