"""BertPacker: [CLS] A [SEP] B [SEP] layout, masks, padding, and the original pair truncation."""

import random

import numpy as np
import pytest
import tensorflow as tf
import tensorflow_text as tf_text

from bert_keras.errors import UserError
from bert_keras.text.bert_packer import BertPacker

CLS, SEP, PAD = 101, 102, 0


def tf_text_pack(packer, segments):
  """The reference packing: tf_text's trimmer, combine_segments and padding (1 or 2 segments).

  segments: int32 ragged (batch, (tokens)) each. Returns dict of int32 (batch, seq_length).
  """
  # [CLS] + one [SEP] per segment leave seq_length - 1 - len(segments) tokens to share.
  budget = packer.seq_length - 1 - len(segments)
  trimmed = tf_text.RoundRobinTrimmer(max_seq_length=budget).trim(segments)
  word_ids, type_ids = tf_text.combine_segments(
      trimmed, start_of_sequence_id=packer.cls_id, end_of_segment_id=packer.sep_id)
  word_ids, mask = tf_text.pad_model_inputs(word_ids, packer.seq_length, pad_value=packer.pad_id)
  type_ids, _ = tf_text.pad_model_inputs(type_ids, packer.seq_length, pad_value=0)
  outputs = {"input_word_ids": word_ids, "input_mask": mask, "input_type_ids": type_ids}
  return {k: tf.cast(v, tf.int32) for k, v in outputs.items()}


def original_pack(a, b, seq_length):
  """The original run_classifier.py: _truncate_seq_pair (pop from the longer, B on ties) + layout."""
  a, b = list(a), list(b) if b is not None else None
  if b is None:
    a = a[:seq_length - 2]
    ids, types = [CLS] + a + [SEP], [0] * (len(a) + 2)
  else:
    while len(a) + len(b) > seq_length - 3:
      (a if len(a) > len(b) else b).pop()
    ids = [CLS] + a + [SEP] + b + [SEP]
    types = [0] * (len(a) + 2) + [1] * (len(b) + 1)
  mask = [1] * len(ids)
  pad = seq_length - len(ids)
  return ids + [PAD] * pad, mask + [0] * pad, types + [0] * pad


def test_matches_original_truncation_on_random_lengths():
  rng = random.Random(0)
  seq_length = 16
  packer = BertPacker(seq_length, CLS, SEP, PAD)
  lengths = [(rng.randint(0, 30), rng.randint(0, 30)) for _ in range(300)]
  lengths += [(0, 0), (13, 0), (0, 13), (7, 6), (6, 7), (7, 7), (30, 30), (1, 40), (40, 1)]
  a = [[rng.randint(1000, 2000) for _ in range(n)] for n, _ in lengths]
  b = [[rng.randint(3000, 4000) for _ in range(m)] for _, m in lengths]
  for pair in (True, False):
    segments = [tf.ragged.constant(a, dtype=tf.int32, ragged_rank=1, inner_shape=())]
    if pair:
      segments.append(tf.ragged.constant(b, dtype=tf.int32, ragged_rank=1, inner_shape=()))
    got = packer(segments)
    for i in range(len(lengths)):
      ids, mask, types = original_pack(a[i], b[i] if pair else None, seq_length)
      assert got["input_word_ids"][i].numpy().tolist() == ids, (lengths[i], pair)
      assert got["input_mask"][i].numpy().tolist() == mask
      assert got["input_type_ids"][i].numpy().tolist() == types


def test_batch_of_one_empty_and_very_long():
  packer = BertPacker(8, CLS, SEP, PAD)
  out = packer([tf.ragged.constant([[]], dtype=tf.int32), tf.ragged.constant([[]], dtype=tf.int32)])
  assert out["input_word_ids"].numpy().tolist() == [[CLS, SEP, SEP, 0, 0, 0, 0, 0]]
  assert out["input_type_ids"].numpy().tolist() == [[0, 0, 1, 0, 0, 0, 0, 0]]
  long = tf.ragged.constant([list(range(1, 100_001))], dtype=tf.int64)
  out = packer([long])
  assert out["input_word_ids"].numpy().tolist() == [[CLS, 1, 2, 3, 4, 5, 6, SEP]]
  assert out["input_mask"].dtype == tf.int32 and out["input_mask"].numpy().sum() == 8


def test_unbatched_segments_in_tf_data():
  packer = BertPacker(6, CLS, SEP, PAD)
  examples = [[5, 6], [7], [8, 9, 10, 11]]
  ds = tf.data.Dataset.from_tensor_slices(tf.ragged.constant(examples))
  ds = ds.map(lambda tokens: packer([tokens, tokens]))
  got = [x["input_word_ids"].tolist() for x in ds.as_numpy_iterator()]
  assert got == [original_pack(e, e, 6)[0] for e in examples]
  assert got[0] == [CLS, 5, 6, SEP, 5, SEP]  # a tie drops from B first


def test_in_tf_function_with_unknown_batch():
  packer = BertPacker(5, CLS, SEP, PAD)
  spec = tf.RaggedTensorSpec([None, None], tf.int32)
  fn = tf.function(lambda a: packer([a]), input_signature=[spec])
  out = fn(tf.ragged.constant([[1, 2, 3, 4, 5], [9]], dtype=tf.int32))
  np.testing.assert_array_equal(out["input_word_ids"], [[CLS, 1, 2, 3, SEP], [CLS, 9, SEP, 0, 0]])


def test_config_round_trip_and_errors():
  packer = BertPacker(32, CLS, SEP, pad_id=7)
  restored = BertPacker.from_config(packer.get_config())
  assert (restored.seq_length, restored.cls_id, restored.sep_id, restored.pad_id) == (32, CLS, SEP, 7)
  with pytest.raises(UserError, match="seq_length=2"):
    BertPacker(2, CLS, SEP)
  with pytest.raises(ValueError, match="1 or 2 segments"):
    packer([tf.ragged.constant([[1]])] * 3)


def _ragged(lengths, rng):
  values = rng.integers(5, 1000, size=sum(lengths)).astype(np.int32)
  return tf.RaggedTensor.from_row_lengths(values, np.asarray(lengths, np.int64))


@pytest.mark.parametrize("seq_length", [3, 4, 16])
def test_single_segment_fast_path_matches_the_ragged_packing(seq_length):
  # One segment takes the dense path; it must equal tf_text's trimmer +
  # combine_segments + padding (`tf_text_pack`) and the original layout.
  rng = np.random.default_rng(seq_length)
  packer = BertPacker(seq_length, cls_id=CLS, sep_id=SEP, pad_id=7)
  budget = seq_length - 2
  # Empty rows, rows that just fit, one over, and far over the budget.
  lengths = [0, 1, budget - 1, budget, budget + 1, 3 * budget + 5] + list(rng.integers(0, 40, 20))
  lengths = [max(int(n), 0) for n in lengths]
  for segment in (_ragged(lengths, rng), _ragged([], rng), _ragged([0, 0], rng),
                  tf.cast(_ragged(lengths[:5], rng), tf.int64)):
    got = packer([segment])
    expected = tf_text_pack(packer, [tf.cast(segment, tf.int32)])
    assert sorted(got) == sorted(expected)
    for name in expected:
      assert got[name].dtype == tf.int32, name
      np.testing.assert_array_equal(got[name].numpy(), expected[name].numpy(), err_msg=name)
    for row, tokens in enumerate(segment.to_list()):
      ids = [CLS] + tokens[:budget] + [SEP]
      assert got["input_word_ids"][row].numpy().tolist() == ids + [7] * (seq_length - len(ids))


def test_single_segment_in_a_graph_with_unknown_batch():
  packer = BertPacker(8, cls_id=2, sep_id=3, pad_id=0)
  fn = tf.function(lambda values, lengths: packer(
      [tf.RaggedTensor.from_row_lengths(values, lengths)]), input_signature=[
          tf.TensorSpec([None], tf.int32), tf.TensorSpec([None], tf.int64)], autograph=False)
  out = fn(tf.constant([11, 12, 13, 14, 15, 16, 17, 18, 21], tf.int32),
           tf.constant([8, 0, 1], tf.int64))
  np.testing.assert_array_equal(out["input_word_ids"].numpy(), [
      [2, 11, 12, 13, 14, 15, 16, 3], [2, 3, 0, 0, 0, 0, 0, 0], [2, 21, 3, 0, 0, 0, 0, 0]])
  np.testing.assert_array_equal(out["input_mask"].numpy().sum(1), [8, 2, 3])
  assert not out["input_type_ids"].numpy().any()


@pytest.mark.parametrize("seq_length", [3, 4, 5, 16])
def test_dense_pair_packing_matches_original_and_ragged_packing(seq_length):
  # pack_pair (dense, what packer([a, b]) runs) against the original layout and the tf-text
  # trimmer path, with has_b choosing per row between the pair and A alone (an optional text_b).
  rng = random.Random(seq_length)
  lengths = [(rng.randint(0, 20), rng.randint(0, 20)) for _ in range(200)]
  lengths += [(0, 0), (seq_length, 0), (0, seq_length), (1, 40), (40, 1), (40, 40)]
  a = [[rng.randint(1000, 2000) for _ in range(n)] for n, _ in lengths]
  b = [[rng.randint(3000, 4000) for _ in range(m)] for _, m in lengths]
  has_b = [rng.random() < 0.7 for _ in lengths]
  ragged = lambda x: tf.ragged.constant(x, dtype=tf.int32, ragged_rank=1, inner_shape=())
  packer = BertPacker(seq_length, CLS, SEP, PAD)
  pair = packer.pack_pair(ragged(a), ragged(b))
  reference = tf_text_pack(packer, [ragged(a), ragged(b)])
  optional = tf.function(packer.pack_pair)(ragged(a), ragged(b), tf.constant(has_b))
  for name in pair:
    np.testing.assert_array_equal(pair[name], reference[name])
  for i in range(len(lengths)):
    ids, mask, types = original_pack(a[i], b[i] if has_b[i] else None, seq_length)
    assert optional["input_word_ids"][i].numpy().tolist() == ids, (lengths[i], has_b[i])
    assert optional["input_mask"][i].numpy().tolist() == mask
    assert optional["input_type_ids"][i].numpy().tolist() == types
