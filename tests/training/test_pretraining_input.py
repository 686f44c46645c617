"""The pretraining tf.data pipeline: shapes, resumable skipping, worker-count independence,
LTR unmasking and dynamic masking."""

import numpy as np
import pytest
import tensorflow as tf

from bert_keras.configs.training import TrainingConfig
from bert_keras.errors import UserError
from bert_keras.training import pretraining_input as pi
from tests.training.pretraining_records import write_records

SEQ, PRED = 32, 5


@pytest.fixture(scope="module")
def pattern(tmp_path_factory):
  return write_records(str(tmp_path_factory.mktemp("records")), num_files=3, per_file=40,
                       seq_length=SEQ, max_predictions=PRED)


def _config(**flat):
  """The TrainingConfig the pipeline reads (flat names: its flags)."""
  return TrainingConfig.from_flat(dict(dict(max_seq_length=SEQ, max_predictions_per_seq=PRED,
                                            train_batch_size=8, seed=7), **flat))


def _batches(pattern, n, input_context=None, skip_batches=0, **flat):
  ds = pi.make_dataset(_config(**flat), pattern, input_context=input_context,
                       skip_batches=skip_batches)
  return [{k: v.numpy() for k, v in b.items()} for b in ds.take(n)]


def test_shapes_split_into_micro_batches(pattern):
  (b,) = _batches(pattern, 1, gradient_accumulation_steps=4)
  assert b["input_ids"].shape == (4, 2, SEQ) and b["input_ids"].dtype == np.int32
  assert b["masked_lm_weights"].shape == (4, 2, PRED) and b["next_sentence_labels"].shape == (4, 2, 1)


def test_skip_resumes_at_the_same_batch(pattern):
  full = _batches(pattern, 5)
  resumed = _batches(pattern, 2, skip_batches=3)
  for a, b in zip(full[3:], resumed):
    np.testing.assert_array_equal(a["input_ids"], b["input_ids"])


def test_global_batch_is_independent_of_the_number_of_pipelines(pattern):
  one = _batches(pattern, 2)
  parts = [_batches(pattern, 2, input_context=tf.distribute.InputContext(2, i, 2)) for i in (0, 1)]
  for step in range(2):
    together = np.concatenate([p[step]["input_ids"][0] for p in parts])
    assert sorted(map(tuple, together)) == sorted(map(tuple, one[step]["input_ids"][0]))


def test_ltr_sees_the_original_tokens(pattern):
  (b,) = _batches(pattern, 1, objective="ltr")
  assert not np.any(b["input_ids"] == 103)  # no [MASK] left
  (m,) = _batches(pattern, 1)
  rows = m["masked_lm_weights"][0] > 0
  ids = m["input_ids"][0].copy()
  for r in range(ids.shape[0]):  # unmasking by hand gives the LTR input
    ids[r, m["masked_lm_positions"][0, r][rows[r]]] = m["masked_lm_ids"][0, r][rows[r]]
  np.testing.assert_array_equal(ids, b["input_ids"][0])


def test_dynamic_masking_follows_80_10_10_and_is_deterministic(pattern):
  kw = dict(dynamic_masking=True, vocab_size=128, train_batch_size=40)
  batches = _batches(pattern, 6, **kw)
  again = _batches(pattern, 6, **kw)
  np.testing.assert_array_equal(batches[5]["input_ids"], again[5]["input_ids"])
  masked = kept = total = 0
  for b in batches:
    w = b["masked_lm_weights"][0] > 0
    pos, labels, ids = b["masked_lm_positions"][0], b["masked_lm_ids"][0], b["input_ids"][0]
    current = np.take_along_axis(ids, pos, 1)[w]
    assert not np.any(np.isin(labels[w], [0, 101, 102]))  # never [PAD] [CLS] [SEP]
    masked += np.sum(current == 103)
    kept += np.sum(current == labels[w])
    total += w.sum()
  assert 0.7 < masked / total < 0.9 and 0.05 < kept / total < 0.2
  # A stored mask and a dynamic one differ (the masks are drawn again).
  (static,) = _batches(pattern, 1, train_batch_size=40)
  assert not np.array_equal(static["masked_lm_positions"], batches[0]["masked_lm_positions"])


def test_wrong_lengths_name_the_file(pattern):
  with pytest.raises(UserError, match=r"part-00000.tfrecord: record 1 has input_ids of length 32"):
    pi.make_dataset(_config(max_seq_length=64), pattern)
  with pytest.raises(UserError, match="matches no file"):
    pi.make_dataset(_config(), "/nonexistent/*.tfrecord")


def test_training_pipelines_run_without_the_autotuner(pattern, monkeypatch):
  """tf.data's autotuner thread held the end of training for 18 s in half of the runs
  (bert_keras/training/dataset_options.py): pretraining's and fine-tuning's pipelines switch it
  off; tf.data's default has it on."""
  from bert_keras.tasks.finetuning import make_dataset
  from bert_keras.tasks.task import Features
  ds = pi.make_dataset(_config(), pattern)
  assert ds.options().autotune.enabled is False
  assert tf.data.Dataset.range(3).prefetch(tf.data.AUTOTUNE).options().autotune.enabled is not False
  ids = np.ones((4, 16), np.int32)
  features = Features(inputs={"input_word_ids": ids, "input_mask": ids, "input_type_ids": 0 * ids},
                      labels=np.zeros(4, np.int32))
  for buckets in ((16,), (8, 16)):
    assert make_dataset(features, 2, 0, buckets).options().autotune.enabled is False
