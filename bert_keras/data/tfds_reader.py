"""Reads a TensorFlow Datasets text dataset (e.g. "wikipedia/20230601.en") as documents, over the
dataset's shards (tfds.beam.ReadFromTFDS)."""

from __future__ import annotations

from typing import Callable, List, Optional, Tuple

import apache_beam as beam

from bert_keras.data import beam_metrics
from bert_keras.data.corpus_text import split_sentences
from bert_keras.data.tfds_prepare import prepared_builder


def example_key(example) -> Optional[str]:
  """The example's "id" or else "title" field as text, or None when it has neither."""
  key = next((example[k] for k in ("id", "title") if k in example), None)
  if isinstance(key, bytes):
    key = key.decode("utf-8", errors="replace")
  return None if key is None else str(key)


def tfds_example_to_document(example, text_key: str, source: str, drop: Callable[..., None]
                             ) -> List[Tuple[str, List[str]]]:
  """A tfds example -> [("<source>:<id or title>", sentences)] or [] (`drop(reason, key)`)."""
  key = example_key(example)
  value = example.get(text_key)
  if value is None:
    drop("tfds_example_without_text_field", key)
    return []
  text = value.decode("utf-8", errors="strict") if isinstance(value, bytes) else str(value)
  sentences = [s for paragraph in text.split("\n") for s in split_sentences(paragraph)]
  if not sentences:
    drop("empty_document", key)
    return []
  if key is None:
    from bert_keras.data.pretraining_instances import stable_hash  # pylint: disable=g-import-not-at-top
    key = f"{stable_hash(text):016x}"  # Datasets without an id or title field: the text's hash.
  return [(f"{source}:{key}", sentences)]


class _ToDocuments(beam.DoFn):
  """tfds examples -> (doc_id, sentences); drops are counted, each reason's first one noted."""

  def __init__(self, text_key: str, source: str):
    super().__init__()
    self._text_key, self._source = text_key, source

  def setup(self):
    self._drop = beam_metrics.FirstDrops().dropper(self._source)

  def process(self, example):
    try:
      yield from tfds_example_to_document(example, self._text_key, self._source, self._drop)
    except UnicodeDecodeError:
      self._drop("undecodable_document", example_key(example))


class ReadTfdsDocuments(beam.PTransform):
  """PCollection of (doc_id, sentences) from the `text_key` feature of a tfds dataset split."""

  def __init__(self, name: str, split: str = "train", data_dir: Optional[str] = None, text_key: str = "text"):
    super().__init__()
    self._name = name
    self._split = split
    self._data_dir = data_dir
    self._text_key = text_key

  def expand(self, pbegin):
    import tensorflow_datasets as tfds  # pylint: disable=g-import-not-at-top

    builder = prepared_builder(self._name, self._data_dir)
    source = self._name.replace("/", "_")
    text_key = self._text_key
    return (pbegin
            | "ReadTfds" >> tfds.beam.ReadFromTFDS(builder, split=self._split)
            | "ToNumpy" >> beam.Map(lambda ex: tfds.as_numpy(ex))
            | "ToDocuments" >> beam.ParDo(_ToDocuments(text_key, source)))
