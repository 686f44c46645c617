"""The dense single-segment packing the serving graphs use gives exactly BertPacker's inputs."""

import numpy as np
import pytest
import tensorflow as tf

from bert_keras.export import text_ops
from bert_keras.text.bert_packer import BertPacker


def _ragged(lengths, rng):
  values = rng.integers(5, 1000, size=sum(lengths)).astype(np.int32)
  return tf.RaggedTensor.from_row_lengths(values, np.asarray(lengths, np.int64))


@pytest.mark.parametrize("seq_length", [3, 4, 16])
def test_pack_single_matches_bert_packer(seq_length):
  rng = np.random.default_rng(seq_length)
  packer = BertPacker(seq_length, cls_id=101, sep_id=102, pad_id=7)
  budget = seq_length - 2
  # Empty rows, rows that just fit, one over, and far over the budget.
  lengths = [0, 1, budget - 1, budget, budget + 1, 3 * budget + 5] + list(rng.integers(0, 40, 20))
  lengths = [max(int(n), 0) for n in lengths]
  for segment in (_ragged(lengths, rng), _ragged([], rng), _ragged([0, 0], rng),
                  tf.cast(_ragged(lengths[:5], rng), tf.int64)):
    expected = packer([segment])
    got = text_ops.pack_single(packer, segment)
    assert sorted(got) == sorted(expected)
    for name in expected:
      assert got[name].dtype == tf.int32, name
      np.testing.assert_array_equal(got[name].numpy(), expected[name].numpy(), err_msg=name)


def test_pack_single_in_a_graph_with_unknown_batch():
  packer = BertPacker(8, cls_id=2, sep_id=3, pad_id=0)
  fn = tf.function(lambda values, lengths: text_ops.pack_single(
      packer, tf.RaggedTensor.from_row_lengths(values, lengths)), input_signature=[
          tf.TensorSpec([None], tf.int32), tf.TensorSpec([None], tf.int64)], autograph=False)
  out = fn(tf.constant([11, 12, 13, 14, 15, 16, 17, 18, 21], tf.int32),
           tf.constant([8, 0, 1], tf.int64))
  np.testing.assert_array_equal(out["input_word_ids"].numpy(), [
      [2, 11, 12, 13, 14, 15, 16, 3], [2, 3, 0, 0, 0, 0, 0, 0], [2, 21, 3, 0, 0, 0, 0, 0]])
  np.testing.assert_array_equal(out["input_mask"].numpy().sum(1), [8, 2, 3])
  assert not out["input_type_ids"].numpy().any()
