import numpy as np
import pytest
import tensorflow as tf

from bert_keras.gpt import losses


def _log_softmax(x):
  x = x - x.max(-1, keepdims=True)
  return x - np.log(np.exp(x).sum(-1, keepdims=True))


def test_lm_loss_is_next_token_nll_over_real_tokens():
  rng = np.random.default_rng(0)
  logits = rng.normal(size=(2, 5, 7)).astype("float32")
  ids = np.array([[1, 2, 3, 4, 5], [6, 5, 4, 0, 0]], np.int32)
  mask = np.array([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0]], np.int32)
  logp = _log_softmax(logits)
  terms = [-logp[b, i, ids[b, i + 1]] for b in range(2) for i in range(4) if mask[b, i + 1]]
  total, count = losses.lm_loss_sums(ids, mask, logits)
  assert float(count) == 6
  np.testing.assert_allclose(float(total), sum(terms), rtol=1e-5)
  np.testing.assert_allclose(float(losses.lm_loss(ids, mask, logits)), np.mean(terms), rtol=1e-5)
  # Grouped inputs (batch, k, seq) flatten to the same sum.
  total_grouped, _ = losses.lm_loss_sums(ids[None], mask[None], logits[None])
  np.testing.assert_allclose(float(total_grouped), float(total), rtol=1e-6)


def test_l3_is_l2_plus_lambda_l1():
  rng = np.random.default_rng(1)
  features = {"input_word_ids": rng.integers(0, 7, (3, 4)).astype("int32"),
              "input_mask": np.ones((3, 4), "int32")}
  outputs = {"logits": rng.normal(size=(3, 2)).astype("float32"),
             "lm_logits": rng.normal(size=(3, 4, 7)).astype("float32")}
  labels = np.array([0, 1, 1], np.int32)
  total, task, lm = losses.finetuning_loss(features, labels, outputs, "classification", 0.5)
  expected_task = -np.mean(_log_softmax(outputs["logits"])[np.arange(3), labels])
  np.testing.assert_allclose(float(task), expected_task, rtol=1e-5)
  np.testing.assert_allclose(float(total), float(task) + 0.5 * float(lm), rtol=1e-6)
  # lambda = 0: the "without auxiliary LM" ablation needs no lm_logits at all.
  no_lm = {"logits": outputs["logits"]}
  total0, task0, _ = losses.finetuning_loss(features, labels, no_lm, "classification", 0.0)
  assert float(total0) == pytest.approx(float(task0))


def test_similarity_regression_is_squared_error():
  logits = np.array([[0.5], [2.0]], np.float32)
  labels = np.array([[1.0], [1.0]], np.float32)
  assert float(losses.task_loss(labels, logits, "similarity")) == pytest.approx((0.25 + 1.0) / 2)
