import keras
import numpy as np
import pytest

from bert_keras.configs.tasks import GPTTaskConfig
from bert_keras.gpt import losses
from bert_keras.models.gpt_decoder import GPTDecoder
from bert_keras.tasks.registry import get_task
from studies.bert_gpt_ablation.in_process import task_loss

TINY = dict(vocab_size=40, hidden_size=16, num_layers=1, num_heads=2, intermediate_size=32,
            dropout_rate=0.0, attention_dropout_rate=0.0, max_position_embeddings=16)


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
  # Grouped inputs (batch, k, seq) flatten to the same sum.
  total_grouped, _ = losses.lm_loss_sums(ids[None], mask[None], logits[None])
  np.testing.assert_allclose(float(total_grouped), float(total), rtol=1e-6)
  # The Keras loss of fine-tuning: the ids with -1 at padding, the mean per predicted token.
  padded = np.where(mask > 0, ids, -1)
  np.testing.assert_allclose(float(losses.NextTokenLoss()(padded, logits)), np.mean(terms),
                             rtol=1e-5)


def test_finetuning_trains_l2_plus_lambda_l1():
  """A gpt/<task>'s compiled loss is L3 = L2 + lm_coef * L1 (section 3.2), and fit lowers both."""
  rng = np.random.default_rng(1)
  task = get_task(GPTTaskConfig(task="gpt/polarity", max_seq_length=8, dropout_rate=0.0))
  task.label_names = ["neg", "pos"]
  model = task.build_model(GPTDecoder(**TINY))
  model.compile(optimizer=keras.optimizers.Adam(1e-2), **task.compile_kwargs())
  ids = rng.integers(5, 40, (8, 8)).astype("int32")
  mask = np.ones_like(ids)
  mask[:4, 6:] = 0
  x = {"input_word_ids": ids, "input_mask": mask}
  y = {"logits": np.array([0, 1] * 4, np.int32), "lm_logits": np.where(mask > 0, ids, -1)}

  def terms():
    outputs = model(x, training=False)
    logp = _log_softmax(np.asarray(outputs["logits"]))
    l2 = -np.mean(logp[np.arange(8), y["logits"]])
    total, count = losses.lm_loss_sums(ids, mask, outputs["lm_logits"])
    l1 = float(total / count)
    loss = float(model.compute_loss(x, y, outputs, training=False))
    return l2, l1, loss

  first = terms()
  assert first[2] == pytest.approx(first[0] + 0.5 * first[1], rel=1e-5)
  model.fit(x, y, epochs=15, batch_size=8, verbose=0)
  last = terms()
  assert last[0] < first[0] and last[1] < first[1]
  # lm_coef = 0, the "without auxiliary LM" ablation: no LM output, the task loss alone.
  plain = get_task(GPTTaskConfig(task="gpt/polarity", max_seq_length=8, lm_coef=0.0))
  assert "lm_logits" not in plain.build_model(GPTDecoder(**TINY)).output
  assert list(plain.compile_kwargs()["loss"]) == ["logits"]


def test_study_similarity_regression_is_squared_error():
  logits = np.array([[0.5], [2.0]], np.float32)
  labels = np.array([[1.0], [1.0]], np.float32)
  assert float(task_loss(labels, logits, "similarity")) == pytest.approx((0.25 + 1.0) / 2)
