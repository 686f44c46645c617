"""The distributed random-next join: routing, the bucket transform, determinism in a TestPipeline."""

import collections
import pickle
import random
import subprocess
import sys

import apache_beam as beam
import tensorflow as tf
from apache_beam.testing import test_pipeline
from apache_beam.testing.util import assert_that

from bert_keras import resources
from bert_keras.configs.pretraining_data import PretrainingDataConfig
from bert_keras.data.create_pretraining_examples import (HOME, REQUEST, CreatePretrainingExamples, instances_for_request,
                                                         num_buckets, route_document, special_ids_from_vocabulary)
from bert_keras.data.pretraining_instances import serialize_instance, stable_hash
from bert_keras.data.sorted_shards import uint64_key
from bert_keras.data.tokenize_documents import pack_tokenized_document, unpack_tokenized_document
from bert_keras.text.vocab import load_vocab


def _documents(n=40, seed=0):
  rng = random.Random(seed)
  return [pack_tokenized_document(f"doc{d}", [[1000 + 100 * d + rng.randint(0, 99) for _ in range(rng.randint(4, 20))]
                                              for _ in range(rng.randint(2, 12))]) for d in range(n)]


def test_routing_sends_one_home_and_one_request_per_pass():
  routed = list(route_document(_documents(1)[0], 5, 3, 7))
  assert [v[0] for _, v in routed] == [0, 1, 1, 1] and [v[1] for _, v in routed[1:]] == [0, 1, 2]
  assert all(0 <= bucket < 7 for bucket, _ in routed)
  assert num_buckets(10, 64) == 1 and num_buckets(1000, 64) == 15


def test_stable_hash_is_the_same_in_another_process():
  code = "from bert_keras.data.pretraining_instances import stable_hash; print(stable_hash(12345, 'doc', 3))"
  other = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
  assert int(other) == stable_hash(12345, "doc", 3)


def _run(docs, config, path, run_bytes=None):
  """Runs the transform in a TestPipeline, checks every record, saves the sorted rows to `path`;
  returns them and the lists the transform emitted."""

  def check_and_save(batches):
    rows = sorted((shard, row) for shard, batch in batches for row in batch)
    assert {shard for shard, _ in rows} == set(range(config.num_shards))
    labels = []
    for _, (_, record) in rows:
      f = tf.train.Example.FromString(record).features.feature
      assert len(f["input_ids"].int64_list.value) == config.max_seq_length
      labels.append(f["next_sentence_labels"].int64_list.value[0])
    assert len(rows) > 100 and 0.35 < sum(labels) / len(labels) < 0.7
    with open(path, "wb") as out:
      pickle.dump((rows, batches), out)

  kwargs = {"run_bytes": run_bytes} if run_bytes else {}
  with test_pipeline.TestPipeline(runner="FnApiRunner") as p:
    out = p | beam.Create(docs) | CreatePretrainingExamples(config, str(path) + ".work", **kwargs)
    assert_that(out | beam.combiners.ToList(), lambda lists: check_and_save(lists[0]))
  with open(path, "rb") as f:
    return pickle.load(f)


def _in_memory_join(docs, config):
  """The random-next bucket join with all routed documents in memory (as when they went through
  the runner): every bucket's requests in (doc_id, pass) order, random-next documents from its HOME
  documents sorted by doc_id. Rows (shard, (8-byte key, record)), sorted."""
  special, is_continuation = special_ids_from_vocabulary(load_vocab(config.vocab_file))
  grouped = collections.defaultdict(list)
  for packed in docs:
    for bucket, value in route_document(packed, config.seed, config.dupe_factor,
                                        num_buckets(len(docs), config.docs_per_bucket)):
      grouped[bucket].append(value)
  rows = []
  for values in grouped.values():
    homes = sorted((v[1] for v in values if v[0] == HOME), key=lambda packed: packed[0])
    bucket_documents = [(packed[0], unpack_tokenized_document(packed)) for packed in homes]
    for _, k, packed in sorted((v for v in values if v[0] == REQUEST), key=lambda v: (v[2][0], v[1])):
      for i, instance in enumerate(instances_for_request(
          packed[0], unpack_tokenized_document(packed), k, bucket_documents, config, special, is_continuation)):
        key = stable_hash(config.seed, packed[0], k, i)
        rows.append((key % config.num_shards,
                     (uint64_key(key), serialize_instance(instance, config.max_seq_length, config.max_predictions_per_seq))))
  return sorted(rows)


def test_documents_go_through_files_and_instances_leave_in_bounded_lists(tmp_path):
  """What a worker holds is bounded by run_bytes, whatever the corpus: small runs here, so documents
  are spilled to several files and merged per bucket partition; the instances are those of the
  in-memory join; only the spill files stay (for a retried bundle) until the caller publishes."""
  docs = _documents(60)
  config = PretrainingDataConfig(vocab_file=resources.uncased_vocab_path(), max_seq_length=48, dupe_factor=3,
                                 num_shards=4, docs_per_bucket=8)
  run_bytes = 4000
  rows, batches = _run(docs, config, tmp_path / "a.pkl", run_bytes=run_bytes)
  assert rows == _in_memory_join(docs, config)
  size = lambda batch: sum(len(record) + 8 for _, record in batch)
  largest = max(len(record) + 8 for _, (_, record) in rows)
  assert all(size(batch) < run_bytes + largest for _, batch in batches)
  assert len(batches) >= sum(len(r) + 8 for _, (_, r) in rows) // (run_bytes + largest)
  left = [f.relative_to(tmp_path / "a.pkl.work") for f in (tmp_path / "a.pkl.work").rglob("*")
          if f.is_file()]
  assert left and all(f.parts[0] == "documents" for f in left), left


def test_transform_output_is_deterministic_and_uses_several_buckets(tmp_path):
  docs = _documents()
  config = PretrainingDataConfig(vocab_file=resources.uncased_vocab_path(), max_seq_length=48, dupe_factor=3,
                                 num_shards=4, docs_per_bucket=8)
  assert num_buckets(len(docs), config.docs_per_bucket) == 5
  # Another input order (as from other workers) gives the same keyed records; another seed does not.
  first = _run(docs, config, tmp_path / "a.pkl")[0]
  assert _run(list(reversed(docs)), config, tmp_path / "b.pkl")[0] == first
  other_seed = PretrainingDataConfig(**{**config.__dict__, "seed": 1})
  assert _run(docs, other_seed, tmp_path / "c.pkl")[0] != first
