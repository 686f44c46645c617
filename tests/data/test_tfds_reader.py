"""The tfds reader: example conversion, and a clear error where the dataset cannot be had."""

import collections

import apache_beam as beam
import pytest
from apache_beam.testing import test_pipeline
from apache_beam.testing.util import assert_that, equal_to

from bert_keras.data import beam_metrics, tfds_reader
from bert_keras.data.tfds_reader import ReadTfdsDocuments, tfds_example_to_document
from bert_keras.errors import UserError


def test_example_to_document():
  drops = collections.Counter()
  drop = lambda r, where=None: drops.update([r])
  example = {"title": b"Anarchism", "text": "First paragraph. Two sentences.\nSecond paragraph.".encode()}
  assert tfds_example_to_document(example, "text", "wikipedia_en", drop) == [
      ("wikipedia_en:Anarchism", ["First paragraph.", "Two sentences.", "Second paragraph."])]
  no_id = tfds_example_to_document({"text": b"Some text here."}, "text", "s", drop)
  assert no_id == tfds_example_to_document({"text": b"Some text here."}, "text", "s", drop)  # stable id
  assert tfds_example_to_document({"text": b"  "}, "text", "s", drop) == []
  assert tfds_example_to_document({"body": b"x"}, "text", "s", drop) == []
  assert drops == {"empty_document": 1, "tfds_example_without_text_field": 1}


def test_first_drops_are_noted_with_the_example_key():
  """In a pipeline, every reason's first dropped example is noted as "<source>:<id or title>"."""
  examples = [{"id": b"1", "text": b"Kept. Two sentences."}, {"id": b"2", "text": b" "},
              {"title": b"No text", "body": b"x"}, {"id": b"4", "text": b"\xff bad utf-8"},
              {"id": b"5", "text": b"\n"}]
  p = test_pipeline.TestPipeline(runner="FnApiRunner")
  docs = p | beam.Create(examples) | beam.ParDo(tfds_reader._ToDocuments("text", "ds"))
  assert_that(docs, equal_to([("ds:1", ["Kept.", "Two sentences."])]))
  result = p.run()
  result.wait_until_finish()
  counters = beam_metrics.query_counters(result)
  assert counters["dropped.empty_document"] == 2
  assert counters["dropped.undecodable_document"] == 1
  first = beam_metrics.query_first_drops(result)
  assert first["tfds_example_without_text_field"] == "ds:No text"
  assert first["undecodable_document"] == "ds:4"
  assert first["empty_document"] in ("ds:2", "ds:5")  # workers may see them in either order


def test_unknown_dataset_is_a_user_error(tmp_path):
  with pytest.raises(UserError, match="no_such_dataset_xyz"):
    with test_pipeline.TestPipeline(runner="FnApiRunner") as p:
      _ = p | ReadTfdsDocuments("no_such_dataset_xyz", data_dir=str(tmp_path))
