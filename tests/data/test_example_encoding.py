"""example_encoding writes the bytes TensorFlow writes: tf.train.Example (deterministic) and TFRecord."""

import random
import struct

import pytest
import tensorflow as tf

from bert_keras.data import example_encoding
from bert_keras.data.pretraining_instances import TrainingInstance, pad_instance, serialize_instance


def _reference_example(features):
  example = tf.train.Example()
  for name, (kind, values) in features.items():
    feature = example.features.feature[name]
    if kind == "float":
      feature.float_list.value.extend(values)
    else:
      feature.int64_list.value.extend(values)
  return example.SerializeToString(deterministic=True)


def _encode(features):
  """example_encoding's bytes of {name: ("int64" | "float", values)}."""
  ee = example_encoding
  return ee.encode_packed_example({
      name: (ee.FLOAT_LIST, struct.pack(f"<{len(values)}f", *values), len(values)) if kind == "float"
      else (ee.INT64_LIST, ee.pack_varints(values), len(values))
      for name, (kind, values) in features.items()})


def test_examples_byte_equal_to_protobuf():
  rng = random.Random(0)
  cases = [{"a": ("int64", [])}, {"a": ("float", [])}, {}, {"x": ("int64", [0, 1, 127, 128, 65535, 65536,
                                                                        2 ** 40, -1, -(2 ** 63), 2 ** 63 - 1])}]
  for _ in range(200):
    features = {}
    for _ in range(rng.randint(1, 8)):
      name = "".join(rng.choice("abcxyz_é") for _ in range(rng.randint(1, 12)))
      n = rng.choice([0, 1, 5, 128, 300])
      if rng.random() < 0.3:
        features[name] = ("float", [rng.uniform(-1e6, 1e6) if rng.random() < 0.5 else float(rng.randint(0, 1))
                                    for _ in range(n)])
      else:
        features[name] = ("int64", [rng.choice([rng.randint(0, 30521), rng.randint(-2 ** 63, 2 ** 63 - 1)])
                                    for _ in range(n)])
    cases.append(features)
  for features in cases:
    assert _encode(features) == _reference_example(features), features


def test_serialize_instance_parses_back():
  inst = TrainingInstance([101, 103, 7, 102, 8, 102], [0, 0, 0, 0, 1, 1], [1], [2054], True)
  padded = pad_instance(inst, 8, 3)
  parsed = tf.train.Example.FromString(serialize_instance(inst, 8, 3)).features.feature
  assert sorted(parsed) == sorted(padded)
  for name, values in padded.items():
    got = parsed[name].float_list.value if name == "masked_lm_weights" else parsed[name].int64_list.value
    assert list(got) == values


@pytest.mark.skipif(not example_encoding.have_fast_crc32c(), reason="google-crc32c is not installed")
def test_tfrecord_bytes_equal_to_tf_writer(tmp_path):
  rng = random.Random(1)
  records = [b"", b"x"] + [bytes(rng.getrandbits(8) for _ in range(rng.randint(0, 3000))) for _ in range(50)]
  ours, theirs = tmp_path / "ours.tfrecord", tmp_path / "theirs.tfrecord"
  with open(ours, "wb") as f:
    example_encoding.write_uncompressed_tfrecords(f, records)
  with tf.io.TFRecordWriter(str(theirs)) as writer:
    for record in records:
      writer.write(record)
  assert ours.read_bytes() == theirs.read_bytes()
  assert [r.numpy() for r in tf.data.TFRecordDataset(str(ours))] == records


@pytest.mark.parametrize("seq, pred", [(8, 3), (128, 20), (512, 80)])
def test_serialize_instance_equals_protobuf_of_padded_lists(seq, pred):
  rng = random.Random(seq)
  for _ in range(100):
    n = rng.randint(3, seq)
    m = rng.randint(0, min(pred, n))
    positions = sorted(rng.sample(range(n), m))
    inst = TrainingInstance([rng.randint(0, 30521) for _ in range(n)], [rng.randint(0, 1) for _ in range(n)],
                            positions, [rng.randint(0, 30521) for _ in range(m)], rng.random() < 0.5)
    features = {name: ("float" if name == "masked_lm_weights" else "int64", values)
                for name, values in pad_instance(inst, seq, pred).items()}
    assert serialize_instance(inst, seq, pred) == _reference_example(features)
  with pytest.raises(ValueError):
    serialize_instance(TrainingInstance([1] * (seq + 1), [0] * (seq + 1), [], [], False), seq, pred)


def test_runs_merge_in_key_order_with_bounded_fan_in(tmp_path):
  from bert_keras.data import sorted_shards
  rng = random.Random(2)
  rows = [(sorted_shards.uint64_key(rng.getrandbits(64)),
           bytes(rng.getrandbits(8) for _ in range(rng.randint(0, 40)))) for _ in range(400)]
  rows += [(rows[0][0], b"tie, other record"), (rows[0][0], b"")]  # equal keys: ordered by record
  paths = []
  for i in range(10):
    path = str(tmp_path / f"r{i}.run")
    sorted_shards.write_run(path, sorted(rows[i::10]))
    paths.append(path)
  assert list(sorted_shards.merge_runs(paths, str(tmp_path), "shard", max_runs_per_merge=3)) == sorted(rows)
  assert not list(tmp_path.iterdir())  # inputs and merge rounds are deleted


def test_every_small_id_is_protobufs_encoding():
  """Every id, mask and position below 65536 (the encoder's precomputed table), each alone and all
  in one feature: byte for byte protobuf's."""
  everything = {"x": ("int64", list(range(1 << 16)))}
  assert _encode(everything) == _reference_example(everything)
  for v in range(1 << 16):
    one = {"x": ("int64", [v])}
    assert _encode(one) == _reference_example(one), v
