"""One document per line: plain text and JSON Lines."""

import collections
import io
import json

import apache_beam as beam
from apache_beam.testing import test_pipeline
from apache_beam.testing.util import assert_that, equal_to

from bert_keras import resources
from bert_keras.data.line_document_reader import ReadLineDocuments, iter_line_documents


def test_plain_text_lines():
  data = b"First sentence. Second one here.\n\nOnly one\n\xff\n"
  drops = collections.Counter()
  docs = list(iter_line_documents(io.BytesIO(data), "t.txt", lambda r: drops.update([r])))
  assert docs == [("t.txt:1", ["First sentence.", "Second one here."]), ("t.txt:3", ["Only one"])]
  assert drops == {"empty_document": 1, "undecodable_line": 1}


def test_jsonl_with_id_and_bad_lines():
  lines = [json.dumps({"id": "q7", "text": "A cat sat. It purred."}), "{not json", json.dumps({"title": "x"}),
           json.dumps({"text": "No id here. Fine."}), ""]
  drops = collections.Counter()
  docs = list(iter_line_documents(io.BytesIO("\n".join(lines).encode()), "d.jsonl",
                                  lambda r: drops.update([r]), json_text_key="text"))
  assert docs == [("d.jsonl:q7", ["A cat sat.", "It purred."]), ("d.jsonl:4", ["No id here.", "Fine."])]
  assert drops == {"invalid_json_line": 1, "json_line_without_text_field": 1}


def test_ptransform_on_the_real_lee_corpus():
  with test_pipeline.TestPipeline(runner="FnApiRunner") as p:
    docs = p | ReadLineDocuments(resources.lee_background_path())
    counts = (docs | beam.Map(lambda d: min(len(d[1]), 2)) | beam.combiners.Count.PerElement())
    # 300 real news documents, each several sentences long.
    assert_that(counts, equal_to([(2, 300)]))


def test_input_files_are_a_comma_list_of_paths_and_globs(tmp_path):
  """--input_files of the Beam scripts: 'a.txt,more/*.txt' reads every file it names."""
  (tmp_path / "more").mkdir()
  for path, text in (("a.txt", "Alpha one.\n"), ("more/b.txt", "Beta two.\n"),
                     ("more/c.txt", "Gamma three.\n")):
    (tmp_path / path).write_text(text)
  with test_pipeline.TestPipeline() as p:
    docs = p | ReadLineDocuments(f"{tmp_path / 'a.txt'}, {tmp_path / 'more' / '*.txt'}")
    assert_that(docs | beam.Map(lambda d: d[1][0]),
                equal_to(["Alpha one.", "Beta two.", "Gamma three."]))
