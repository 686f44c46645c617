"""Tokenized documents -> serialized pretraining tf.Examples keyed by output shard, without one worker
ever holding the corpus.

Design of the random-next sampling (BERT section 3.1, "50% of the time B is a random sentence from the
corpus"). The original draws a uniformly random other document from the whole corpus in memory.
Here:
  1. Every document gets a *home bucket*, stable_hash(seed, "home", doc_id) % B, so each bucket holds
     a uniformly random sample of the documents; B = max(1, num_documents // docs_per_bucket) comes
     from a global count, so buckets stay at ~docs_per_bucket documents however big the corpus is.
  2. Each pass k < dupe_factor over a document is a *request* sent to the bucket
     stable_hash(seed, "partner", doc_id, k) % B (uniform over buckets).
  3. One GroupByKey on the bucket brings together the bucket's documents and the requests sent to
     it. Each request runs the original `create_instances_from_document` on its own document, with an
     RNG seeded by stable_hash(seed, doc_id, k), drawing every random-next document from the bucket
     (the original's "up to 10 draws until it is another document").
So a random B comes from a uniformly chosen bucket and a uniformly chosen document in it: uniform
over the corpus up to bucket-size noise, like the original, while a worker holds one bucket
(~docs_per_bucket * (dupe_factor + 1) documents) at a time. Each instance then gets a key
stable_hash(seed, doc_id, k, index); shard = key % num_shards and rows are sorted by key inside a
shard, which is a deterministic global shuffle (the original shuffles all instances in memory).
A bucket emits one element per shard it fills, (shard, [(key, record), ...]), not one per instance:
Beam's per-element cost (coders, the shard GroupByKey) then stays out of the per-instance path.
"""

from __future__ import annotations

import random
from typing import Any, List

import apache_beam as beam

from bert_keras.data import beam_metrics
from bert_keras.data.pretraining_instances import (SpecialIds, create_instances_from_document,
                                                   pick_random_document, serialize_instance, stable_hash)
from bert_keras.data.tokenize_documents import unpack_tokenized_document

HOME, REQUEST = 0, 1


def num_buckets(num_documents: int, docs_per_bucket: int) -> int:
  return max(1, num_documents // docs_per_bucket)


def route_document(packed, seed: int, dupe_factor: int, buckets: int):
  """A packed document -> (bucket, (HOME, doc)) once and (bucket, (REQUEST, k, doc)) per pass k."""
  doc_id = packed[0]
  yield stable_hash(seed, "home", doc_id) % buckets, (HOME, packed)
  for k in range(dupe_factor):
    yield stable_hash(seed, "partner", doc_id, k) % buckets, (REQUEST, k, packed)


def special_ids_from_vocabulary(vocabulary: List[str]):
  """(SpecialIds, is_continuation per id) of a WordPiece vocabulary."""
  index = {t: i for i, t in enumerate(vocabulary)}
  for token in ("[CLS]", "[SEP]", "[MASK]"):
    if token not in index:
      from bert_keras.errors import UserError  # pylint: disable=g-import-not-at-top
      raise UserError(f"vocabulary has no {token} token, which pretraining examples need")
  special = SpecialIds(index["[CLS]"], index["[SEP]"], index["[MASK]"], len(vocabulary))
  return special, [t.startswith("##") for t in vocabulary]


def instances_for_request(doc_id: str, sentences, dupe_index: int, bucket_documents, config, special,
                          is_continuation):
  """The instances of pass `dupe_index` over one document; random-next documents from the bucket.

  `bucket_documents`: (doc_id, sentences) sorted by doc_id (the order is part of the determinism).
  """
  rng = random.Random(stable_hash(config.seed, doc_id, dupe_index))
  random_document = lambda r: pick_random_document(bucket_documents, doc_id, r)
  return create_instances_from_document(
      sentences, random_document, config.max_seq_length, config.short_seq_prob, config.masked_lm_prob,
      config.max_predictions_per_seq, special, rng,
      is_continuation if config.whole_word_mask else None)


class _CreateInstancesInBucket(beam.DoFn):
  """(bucket, [HOME docs and REQUESTs]) -> (shard, [(sort key, serialized tf.Example), ...])."""

  def __init__(self, config):
    self._config = config
    self._special = None
    self._is_continuation = None

  def setup(self):
    # load_vocab reads a local file without importing TensorFlow.
    from bert_keras.text.vocab import load_vocab  # pylint: disable=g-import-not-at-top

    self._special, self._is_continuation = special_ids_from_vocabulary(load_vocab(self._config.vocab_file))

  def process(self, element):
    _, values = element
    homes, requests = [], []
    for value in values:
      if value[0] == HOME:
        homes.append(value[1])
      else:
        requests.append(value)
    homes.sort(key=lambda packed: packed[0])
    bucket_documents = [(packed[0], unpack_tokenized_document(packed)) for packed in homes]
    if not bucket_documents:
      # Astronomically rare (an empty bucket), but never a crash: count and skip.
      beam_metrics.count_dropped("empty_random_next_bucket", len(requests))
      return
    config = self._config
    stats = dict.fromkeys(("instances", "instance_tokens", "masked_positions", "masked_as_mask",
                           "masked_as_random", "masked_as_kept", "random_next"), 0)
    requests.sort(key=lambda r: (r[2][0], r[1]))
    by_shard = {}
    for _, dupe_index, packed in requests:
      doc_id = packed[0]
      instances = instances_for_request(doc_id, unpack_tokenized_document(packed), dupe_index,
                                        bucket_documents, config, self._special, self._is_continuation)
      for index, instance in enumerate(instances):
        key = stable_hash(config.seed, doc_id, dupe_index, index)
        stats["instances"] += 1
        stats["instance_tokens"] += len(instance.input_ids)
        stats["masked_positions"] += len(instance.masked_lm_positions)
        stats["masked_as_mask"] += instance.num_replaced_by_mask
        stats["masked_as_random"] += instance.num_replaced_by_random
        stats["masked_as_kept"] += instance.num_kept
        stats["random_next"] += int(instance.is_random_next)
        by_shard.setdefault(key % config.num_shards, []).append((key, serialize_instance(
            instance, config.max_seq_length, config.max_predictions_per_seq)))
    yield from sorted(by_shard.items())
    for name, value in stats.items():
      beam_metrics.counter(name).inc(value)


class CreatePretrainingExamples(beam.PTransform):
  """(doc_id, ids, splits) tokenized documents -> (shard, [(sort key, serialized tf.Example), ...]).

  Several elements may have the same shard (one per bucket); WriteTFRecordShards merges them.
  """

  def __init__(self, config):
    super().__init__()
    self._config = config

  def expand(self, documents):
    config = self._config
    buckets = (documents
               | "CountDocuments" >> beam.combiners.Count.Globally()
               | "NumBuckets" >> beam.Map(num_buckets, config.docs_per_bucket))
    return (documents
            | "RouteToBuckets" >> beam.FlatMap(
                lambda packed, b: route_document(packed, config.seed, config.dupe_factor, b),
                beam.pvalue.AsSingleton(buckets))
            | "GroupBuckets" >> beam.GroupByKey()
            # Declared (what Beam infers): building the pipeline skips inferring it from bytecode.
            | "CreateInstances" >> beam.ParDo(_CreateInstancesInBucket(config)).with_output_types(Any))
