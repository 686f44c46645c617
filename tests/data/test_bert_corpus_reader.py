"""The Google BERT corpus format reader: exact layout, bad input, glob of files in a TestPipeline."""

import collections
import io

import apache_beam as beam
import pytest
from apache_beam.testing import test_pipeline
from apache_beam.testing.util import assert_that, equal_to

from bert_keras.data.bert_corpus_reader import ReadBertCorpus, iter_bert_corpus_documents
from bert_keras.errors import UserError

# The layout of google-research/bert sample_text.txt: one sentence a line, blank line between docs.
SAMPLE = (b"This text is included to make sure Unicode is handled properly: \xe5\x8a\x9b\n"
          b"Text should be one-sentence-per-line, with empty lines between documents.\n"
          b"\n"
          b"The rain had only ceased with the gray streaks of morning.\n"
          b"The village looked deserted.\n"
          b"\n\n"
          b"Last document, no final newline.")


def test_documents_and_ids_in_the_exact_format():
  drops = collections.Counter()
  docs = list(iter_bert_corpus_documents(io.BytesIO(SAMPLE), "sample.txt", drops.update))
  assert [d[0] for d in docs] == ["sample.txt:1", "sample.txt:4", "sample.txt:8"]
  assert docs[0][1][0].endswith("\u529b")
  assert docs[1][1] == ["The rain had only ceased with the gray streaks of morning.",
                        "The village looked deserted."]
  assert docs[2][1] == ["Last document, no final newline."]
  assert not drops


def test_bad_lines_are_counted_and_skipped():
  data = b"good one.\n\xff\xfe broken\n" + b"y" * 5000 + b"\ngood two.\n\n\n\n"
  drops = []
  docs = list(iter_bert_corpus_documents(io.BytesIO(data), "bad.txt", drops.append, max_line_bytes=1000))
  assert docs == [("bad.txt:1", ["good one.", "good two."])]
  assert sorted(drops) == ["line_too_long", "undecodable_line"]


def test_ptransform_reads_a_glob_of_files(tmp_path):
  (tmp_path / "a.txt").write_bytes(SAMPLE)
  (tmp_path / "b.txt").write_bytes(b"Only one.\nTwo sentences.\n")
  with test_pipeline.TestPipeline(runner="FnApiRunner") as p:
    ids = (p | ReadBertCorpus(str(tmp_path / "*.txt")) | beam.Map(lambda d: (d[0], len(d[1]))))
    assert_that(ids, equal_to([("a.txt:1", 2), ("a.txt:4", 2), ("a.txt:8", 1), ("b.txt:1", 2)]))


def test_no_matching_file_is_a_user_error(tmp_path):
  with pytest.raises(UserError, match="no input file matches"):
    with test_pipeline.TestPipeline(runner="FnApiRunner") as p:
      _ = p | ReadBertCorpus(str(tmp_path / "missing-*.txt"))
