"""Batches of similar length for fine-tuning and evaluation, on the real polarity sentences:
every example comes out exactly once, each batch cut to one of the fixed bucket lengths with
nothing real cut off; predictions in length order equal model.predict on fixed padding."""

import collections

import keras
import numpy as np
import pytest
import tensorflow as tf

from bert_keras import resources
from bert_keras.models.bert_encoder import BertEncoder
from bert_keras.tasks import length_batches
from bert_keras.tasks.heads.bert_classifier import BertClassifier
from bert_keras.tasks.heads.bert_token_classifier import BertTokenClassifier
from bert_keras.tasks.polarity import PolarityTask
from bert_keras.text.bert_tokenizer import BertTokenizer
from bert_keras.configs.model import get_model_config
from bert_keras.configs.tasks import get_task_config

BUCKETS = (16, 32, 64)


@pytest.fixture(scope="module")
def tokenizer():
  return BertTokenizer(vocab_path=resources.uncased_vocab_path())


@pytest.fixture(scope="module")
def features(tokenizer):
  task = PolarityTask(get_task_config("polarity", max_seq_length=64))
  examples = task.read_examples("", "train")
  return task.make_features(examples, tokenizer, training=True)


def _rows(batch):
  """The examples of a batch, each as its id tuple without padding."""
  return [tuple(int(t) for t, m in zip(ids, mask) if m)
          for ids, mask in zip(batch["input_word_ids"].numpy(), batch["input_mask"].numpy())]


def test_grouped_batches_yield_every_example_once_at_a_bucket_length(features):
  lengths = length_batches.example_lengths(features.inputs)
  assert lengths.min() < 16 and 32 < lengths.max() <= 64  # real sentences span the buckets
  # A per-position label (as tagging has) is cut with the inputs.
  labels = {"logits": features.labels["logits"], "tags": features.inputs["input_word_ids"]}
  ds = tf.data.Dataset.from_tensor_slices((features.inputs, labels))
  seen, widths = collections.Counter(), collections.Counter()
  for x, y in length_batches.grouped_batches(ds, 8, BUCKETS):
    width = x["input_word_ids"].shape[1]
    assert width in BUCKETS
    real = x["input_mask"].numpy().sum(1)
    assert real.max() <= width  # nothing real cut
    assert width == 16 or real.max() > BUCKETS[BUCKETS.index(width) - 1]  # the smallest fit
    np.testing.assert_array_equal(y["tags"], x["input_word_ids"])
    seen.update(zip(_rows(x), y["logits"].numpy().tolist()))
    widths[width] += 1
  expected = collections.Counter(zip(_rows({k: tf.constant(v) for k, v in
                                            features.inputs.items()}),
                                     features.labels["logits"].tolist()))
  assert seen == expected
  assert len(widths) == 3


def test_train_batches_are_full_shuffled_and_from_the_boundary_set(features):
  ds = length_batches.train_batches(features.inputs, features.labels, 8, seed=0, buckets=BUCKETS)
  batches = list(ds.take(60))
  assert all(x["input_word_ids"].shape[0] == 8 for x, _ in batches)
  widths = [x["input_word_ids"].shape[1] for x, _ in batches]
  assert set(widths) == set(BUCKETS)
  assert widths != sorted(widths)  # buckets interleave
  fixed = length_batches.train_batches(features.inputs, features.labels, 8, seed=0,
                                       buckets=(64,))
  assert {x["input_word_ids"].shape[1] for x, _ in fixed.take(5)} == {64}


def test_predict_by_length_equals_fixed_padding(features, tokenizer):
  keras.utils.set_random_seed(0)
  encoder = BertEncoder.from_model_config(get_model_config(
      "bert_tiny", vocab_size=tokenizer.vocab_size, num_layers=1))
  inputs = {name: value[:40] for name, value in features.inputs.items()}
  for model in (BertClassifier(encoder, 2, dropout_rate=0.0),
                BertTokenClassifier(encoder, 3, dropout_rate=0.0)):
    fixed = model.predict(inputs, batch_size=16, verbose=0)["logits"]
    bucketed = length_batches.predict(model, inputs, 16, BUCKETS)["logits"]
    assert bucketed.shape == fixed.shape
    if fixed.ndim == 3:  # per position: equal on the real tokens
      real = inputs["input_mask"] > 0
      np.testing.assert_allclose(bucketed[real], fixed[real], atol=2e-5)
      assert (bucketed[~real] < -1e8).any()  # padding past a batch's bucket never ran
      assert not (bucketed[real] < -1e8).any()
    else:
      np.testing.assert_allclose(bucketed, fixed, atol=2e-5)
