"""The tf.data parser the trainer uses, on records in the original format."""

import tensorflow as tf

from bert_keras.data.pretraining_dataset import feature_spec, parse_pretraining_example
from bert_keras.data.pretraining_instances import TrainingInstance, serialize_instance


def test_parse_single_and_batched():
  records = [serialize_instance(TrainingInstance([101, 103, 7, 102, 8, 102], [0, 0, 0, 0, 1, 1], [1], [2054],
                                                 is_random_next=r), 8, 3) for r in (True, False)]
  one = parse_pretraining_example(tf.constant(records[0]), 8, 3)
  assert one["input_ids"].dtype == tf.int32 and one["input_ids"].shape == (8,)
  assert one["masked_lm_weights"].dtype == tf.float32
  assert one["next_sentence_labels"].numpy().tolist() == [1]
  batch = next(iter(tf.data.Dataset.from_tensor_slices(records).batch(2).map(
      lambda s: parse_pretraining_example(s, 8, 3))))
  assert batch["input_mask"].numpy().tolist() == [[1] * 6 + [0, 0]] * 2
  assert batch["masked_lm_ids"].numpy().tolist() == [[2054, 0, 0]] * 2
  assert batch["next_sentence_labels"].numpy().ravel().tolist() == [1, 0]
  assert set(feature_spec(8, 3)) == set(one)
