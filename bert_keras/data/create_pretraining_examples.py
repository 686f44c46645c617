"""Tokenized documents -> serialized pretraining tf.Examples keyed by output shard, without one
worker ever holding the corpus: random-next documents come from hash buckets, and documents and
instances cross stages as files, only their paths through the runner (docs/design.md, "Pretraining
data without holding the corpus").
"""

from __future__ import annotations

import itertools
import os
import random
import struct
from typing import Any, List

import apache_beam as beam
import numpy as np

from bert_keras.data import beam_metrics, sorted_shards
from bert_keras.data.pretraining_instances import (SpecialIds, create_instances_from_document,
                                                   pick_random_document, serialize_instance, stable_hash)
from bert_keras.data.sorted_shards import uint64_key
from bert_keras.data.tokenize_documents import unpack_tokenized_document

HOME, REQUEST = 0, 1
# Partitions of the buckets: the parallelism of the instance step (its GroupByKey holds one run path
# per partition and routed list of run_bytes).
MAX_PARTITIONS = 64


def num_buckets(num_documents: int, docs_per_bucket: int) -> int:
  return max(1, num_documents // docs_per_bucket)


def bucket_layout(num_documents: int, docs_per_bucket: int):
  """(buckets, partitions); bucket b is in partition b % partitions."""
  buckets = num_buckets(num_documents, docs_per_bucket)
  return buckets, min(buckets, MAX_PARTITIONS)


# A document in a file: kind (HOME, REQUEST), pass k, then the doc_id's UTF-8 length and the number
# of splits, then doc_id, splits (int64) and ids (int32), little-endian.
_DOCUMENT_HEADER = struct.Struct("<BIII")


def encode_document(packed, kind: int = HOME, dupe_index: int = 0) -> bytes:
  """A packed tokenized document (doc_id, ids, splits) as bytes, marked home or pass `dupe_index`."""
  doc_id, ids, splits = packed
  name = doc_id.encode("utf-8")
  return (_DOCUMENT_HEADER.pack(kind, dupe_index, len(name), len(splits)) + name
          + np.asarray(splits, "<i8").tobytes() + np.asarray(ids, "<i4").tobytes())


def decode_document(record: bytes):
  """encode_document's bytes -> (kind, dupe_index, (doc_id, ids, splits))."""
  kind, dupe_index, name_length, num_splits = _DOCUMENT_HEADER.unpack_from(record)
  start = _DOCUMENT_HEADER.size
  doc_id = record[start:start + name_length].decode("utf-8")
  start += name_length
  splits = np.frombuffer(record, "<i8", num_splits, start)
  ids = np.frombuffer(record, "<i4", offset=start + 8 * num_splits)
  return kind, dupe_index, (doc_id, ids, splits)


def _remark(record: bytes, kind: int, dupe_index: int) -> bytes:
  _, _, name_length, num_splits = _DOCUMENT_HEADER.unpack_from(record)
  return _DOCUMENT_HEADER.pack(kind, dupe_index, name_length, num_splits) + record[_DOCUMENT_HEADER.size:]


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
  """The instances of pass `dupe_index` over one document, random-next documents drawn from
  `bucket_documents`: (doc_id, sentences) sorted by doc_id (the order is part of the determinism)."""
  rng = random.Random(stable_hash(config.seed, doc_id, dupe_index))
  random_document = lambda r: pick_random_document(bucket_documents, doc_id, r)
  return create_instances_from_document(
      sentences, random_document, config.max_seq_length, config.short_seq_prob, config.masked_lm_prob,
      config.max_predictions_per_seq, special, rng,
      is_continuation if config.whole_word_mask else None)


class _RouteSpilledDocuments(beam.DoFn):
  """(0, spill path) -> (partition, [(bucket, document record), ...]) lists of about `run_bytes`:
  each document once to its home bucket and once per pass to a partner bucket (route_document)."""

  def __init__(self, config, run_bytes: int):
    self._config = config
    self._run_bytes = run_bytes

  def process(self, spilled, layout):
    _, path = spilled
    buckets, partitions = layout
    config = self._config
    lists, size = {}, 0
    for _, record in sorted_shards.read_run(path):
      doc_id = decode_document(record)[2][0]  # a spilled record is marked HOME
      for bucket, value in route_document((doc_id, record), config.seed, config.dupe_factor, buckets):
        routed = record if value[0] == HOME else _remark(record, REQUEST, value[1])
        lists.setdefault(bucket % partitions, []).append((uint64_key(bucket), routed))
        size += len(routed)
      if size >= self._run_bytes:
        yield from lists.items()
        lists, size = {}, 0
    yield from lists.items()
    # The spill file stays until the run publishes (the caller removes work_dir): a retried bundle
    # of this step (Dataflow retries failed bundles) reads it again.


class _CreateInstancesInPartition(beam.DoFn):
  """(partition, [run paths]) -> (shard, [(sort key, serialized tf.Example), ...]) lists of about
  `run_bytes`: the partition's runs merged, bucket after bucket (see instances_for_bucket)."""

  def __init__(self, config, work_dir: str, run_bytes: int):
    self._config = config
    self._work_dir = work_dir
    self._run_bytes = run_bytes
    self._special = None
    self._is_continuation = None

  def setup(self):
    # load_vocab reads a local file without importing TensorFlow.
    from bert_keras.text.vocab import load_vocab  # pylint: disable=g-import-not-at-top

    self._special, self._is_continuation = special_ids_from_vocabulary(load_vocab(self._config.vocab_file))

  def process(self, element):
    partition, runs = element
    rows = sorted_shards.merge_runs(sorted(runs), self._work_dir, f"partition-{partition:05d}")
    by_shard, size = {}, 0
    for _, group in itertools.groupby(rows, key=lambda row: row[0]):
      for shard, key, record in instances_for_bucket([decode_document(r) for _, r in group], self._config,
                                                     self._special, self._is_continuation):
        by_shard.setdefault(shard, []).append((uint64_key(key), record))
        size += len(record) + 8
        if size >= self._run_bytes:
          yield from sorted(by_shard.items())
          by_shard, size = {}, 0
    yield from sorted(by_shard.items())


def instances_for_bucket(values, config, special, is_continuation):
  """One bucket's documents, (kind, dupe_index, packed) in any order -> (shard, key, serialized
  tf.Example) of the instances of its requests, each drawing random-next documents from the bucket's
  HOME documents; counts the statistics."""
  homes, requests = [], []
  for kind, dupe_index, packed in values:
    if kind == HOME:
      homes.append(packed)
    else:
      requests.append((dupe_index, packed))
  homes.sort(key=lambda packed: packed[0])
  bucket_documents = [(packed[0], unpack_tokenized_document(packed)) for packed in homes]
  if not bucket_documents:
    # Astronomically rare (an empty bucket), but never a crash: count and skip.
    beam_metrics.count_dropped("empty_random_next_bucket", len(requests))
    return
  stats = dict.fromkeys(("instances", "instance_tokens", "masked_positions", "masked_as_mask",
                         "masked_as_random", "masked_as_kept", "random_next"), 0)
  requests.sort(key=lambda r: (r[1][0], r[0]))
  for dupe_index, packed in requests:
    doc_id = packed[0]
    instances = instances_for_request(doc_id, unpack_tokenized_document(packed), dupe_index,
                                      bucket_documents, config, special, is_continuation)
    for index, instance in enumerate(instances):
      key = stable_hash(config.seed, doc_id, dupe_index, index)
      stats["instances"] += 1
      stats["instance_tokens"] += len(instance.input_ids)
      stats["masked_positions"] += len(instance.masked_lm_positions)
      stats["masked_as_mask"] += instance.num_replaced_by_mask
      stats["masked_as_random"] += instance.num_replaced_by_random
      stats["masked_as_kept"] += instance.num_kept
      stats["random_next"] += int(instance.is_random_next)
      yield key % config.num_shards, key, serialize_instance(
          instance, config.max_seq_length, config.max_predictions_per_seq)
  for name, value in stats.items():
    beam_metrics.counter(name).inc(value)


class CreatePretrainingExamples(beam.PTransform):
  """(doc_id, ids, splits) tokenized documents -> (shard, [(sort key, serialized tf.Example), ...])
  lists of about `run_bytes`, several per shard. Documents go through files under `work_dir`,
  which the caller removes when the run publishes."""

  def __init__(self, config, work_dir: str, run_bytes: int = sorted_shards.RUN_BYTES):
    super().__init__()
    self._config = config
    self._work_dir = work_dir
    self._run_bytes = run_bytes

  def expand(self, documents):
    config = self._config
    buckets_dir = os.path.join(self._work_dir, "buckets")
    spilled = (documents
               | "EncodeDocuments" >> beam.Map(lambda packed: (0, (b"", encode_document(packed))))
               | "SpillDocuments" >> sorted_shards.WriteRuns(os.path.join(self._work_dir, "documents"),
                                                             self._run_bytes))
    layout = (documents
              | "CountDocuments" >> beam.combiners.Count.Globally()
              | "BucketLayout" >> beam.Map(bucket_layout, config.docs_per_bucket))
    return (spilled
            | "RouteToBuckets" >> beam.ParDo(_RouteSpilledDocuments(config, self._run_bytes),
                                             beam.pvalue.AsSingleton(layout)).with_output_types(Any)
            | "GroupBuckets" >> sorted_shards.SortedRuns(buckets_dir)
            | "CreateInstances" >> beam.ParDo(
                _CreateInstancesInPartition(config, buckets_dir, self._run_bytes)).with_output_types(Any))
