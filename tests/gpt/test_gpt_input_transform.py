import numpy as np
import pytest
import tensorflow as tf

from bert_keras.gpt.gpt_input_transform import GPTInputTransform

START, DELIM, EXTRACT, PAD = 2, 3, 4, 0


def _transform(seq_length=8):
  return GPTInputTransform(seq_length, START, DELIM, EXTRACT, PAD)


def test_classification_layout():
  out = _transform().classification(tf.ragged.constant([[10, 11], [12, 13, 14, 15, 16, 17, 18, 19]]))
  np.testing.assert_array_equal(out["input_word_ids"], [[2, 10, 11, 4, 0, 0, 0, 0],
                                                        [2, 12, 13, 14, 15, 16, 17, 4]])
  np.testing.assert_array_equal(out["input_mask"], [[1, 1, 1, 1, 0, 0, 0, 0], [1] * 8])


def test_entailment_trims_text_never_specials():
  premise = tf.ragged.constant([[10, 11, 12, 13, 14, 15, 16, 17]])
  hypothesis = tf.ragged.constant([[20, 21]])
  ids = _transform().entailment(premise, hypothesis)["input_word_ids"].numpy()[0]
  assert ids[0] == START and ids[-1] == EXTRACT and list(ids).count(DELIM) == 1
  assert list(ids[-3:-1]) == [20, 21]  # the short hypothesis is kept whole
  assert list(ids[1:4]) == [10, 11, 12]  # the long premise lost its tail


def test_similarity_has_both_orders():
  a, b = tf.ragged.constant([[10]]), tf.ragged.constant([[20, 21]])
  ids = _transform().similarity(a, b)["input_word_ids"].numpy()
  assert ids.shape == (1, 2, 8)
  np.testing.assert_array_equal(ids[0, 0, :6], [2, 10, 3, 20, 21, 4])
  np.testing.assert_array_equal(ids[0, 1, :6], [2, 20, 21, 3, 10, 4])


def test_multiple_choice_one_sequence_per_answer():
  context = tf.ragged.constant([[10, 11], [12]])
  answers = [tf.ragged.constant([[30], [31]]), tf.ragged.constant([[40, 41], [42]])]
  out = _transform().multiple_choice(context, answers)
  assert out["input_word_ids"].shape == (2, 2, 8)
  np.testing.assert_array_equal(out["input_word_ids"][0, 1, :6], [2, 10, 11, 3, 40, 41])
  np.testing.assert_array_equal(out["input_word_ids"][1, 0, :4], [2, 12, 3, 31])


def test_validation():
  with pytest.raises(ValueError, match="seq_length=4"):
    GPTInputTransform(4, START, DELIM, EXTRACT)
  with pytest.raises(ValueError, match="got 3 segments"):
    _transform()([tf.ragged.constant([[1]])] * 3)
  assert GPTInputTransform.from_config(_transform().get_config()).seq_length == 8
