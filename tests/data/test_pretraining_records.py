"""The record format (pretraining_records): the writer's bytes and the tf.data parser the trainer
uses, on records in the original format."""

import tensorflow as tf

from bert_keras.data import pretraining_records
from bert_keras.data.pretraining_instances import TrainingInstance, pad_instance, serialize_instance
from bert_keras.data.pretraining_records import feature_spec, parse_pretraining_example


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


def test_the_writer_writes_the_format_the_reader_parses():
  """serialize_instance (no TensorFlow) and pad_instance give exactly FEATURES, with their dtypes
  and lengths, as TensorFlow reads the bytes."""
  instance = TrainingInstance([101, 7, 102, 8, 102], [0, 0, 0, 1, 1], [1, 3], [2054, 9],
                              is_random_next=False)
  example = tf.train.Example.FromString(serialize_instance(instance, 8, 3)).features.feature
  lengths = pretraining_records.feature_lengths(8, 3)
  assert set(example) == set(pretraining_records.FEATURES) == set(pad_instance(instance, 8, 3))
  for name, (dtype, _) in pretraining_records.FEATURES.items():
    values = example[name].float_list if dtype == "float32" else example[name].int64_list
    assert len(values.value) == lengths[name], name
  assert list(pad_instance(instance, 8, 3)) == list(pretraining_records.FEATURES)
