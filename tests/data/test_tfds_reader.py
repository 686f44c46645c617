"""The tfds reader: example conversion, and a clear error where the dataset cannot be had."""

import collections

import pytest
from apache_beam.testing import test_pipeline

from bert_keras.data.tfds_reader import ReadTfdsDocuments, tfds_example_to_document
from bert_keras.errors import UserError


def test_example_to_document():
  drops = collections.Counter()
  drop = lambda r: drops.update([r])
  example = {"title": b"Anarchism", "text": "First paragraph. Two sentences.\nSecond paragraph.".encode()}
  assert tfds_example_to_document(example, "text", "wikipedia_en", drop) == [
      ("wikipedia_en:Anarchism", ["First paragraph.", "Two sentences.", "Second paragraph."])]
  no_id = tfds_example_to_document({"text": b"Some text here."}, "text", "s", drop)
  assert no_id == tfds_example_to_document({"text": b"Some text here."}, "text", "s", drop)  # stable id
  assert tfds_example_to_document({"text": b"  "}, "text", "s", drop) == []
  assert tfds_example_to_document({"body": b"x"}, "text", "s", drop) == []
  assert drops == {"empty_document": 1, "tfds_example_without_text_field": 1}


def test_unknown_dataset_is_a_user_error(tmp_path):
  with pytest.raises(UserError, match="no_such_dataset_xyz"):
    with test_pipeline.TestPipeline() as p:
      _ = p | ReadTfdsDocuments("no_such_dataset_xyz", data_dir=str(tmp_path))
