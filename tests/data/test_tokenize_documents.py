"""Tokenization of documents with the ids of the project's BertTokenizer (real uncased vocabulary)."""

import apache_beam as beam
import numpy as np
from apache_beam.testing import test_pipeline
from apache_beam.testing.util import assert_that, equal_to

from bert_keras import resources
from bert_keras.data.tokenize_documents import (TokenizeDocuments, filter_tokenized_document,
                                                pack_tokenized_document, unpack_tokenized_document)


def test_pack_unpack_and_filter():
  packed = pack_tokenized_document("d", [[5, 6], [7], [8, 9, 10]])
  assert packed[1].dtype == np.int32 and packed[2].tolist() == [0, 2, 3, 6]
  assert unpack_tokenized_document(packed) == [[5, 6], [7], [8, 9, 10]]
  drops = []
  drop = lambda reason, n=1: drops.append((reason, n))
  assert filter_tokenized_document("d", [[], [1]], 2, drop) is None
  assert filter_tokenized_document("e", [[]], 2, drop) is None
  assert unpack_tokenized_document(filter_tokenized_document("f", [[1], [], [2]], 2, drop)) == [[1], [2]]
  assert drops == [("empty_sentence_after_tokenization", 1), ("one_sentence_document", 1),
                   ("empty_sentence_after_tokenization", 1), ("empty_document", 1),
                   ("empty_sentence_after_tokenization", 1)]


def test_transform_tokenizes_like_the_original():
  docs = [("a", ["Hello world, this is BERT.", "Second sentence!"]), ("b", ["\u0000\ufffd", "Only one."]),
          ("c", ["x", "y", "z"])]
  with test_pipeline.TestPipeline(runner="FnApiRunner") as p:
    out = (p | beam.Create(docs) | beam.ParDo(TokenizeDocuments(resources.uncased_vocab_path()))
           | beam.Map(lambda packed: (packed[0], unpack_tokenized_document(packed))))
    # DATA.md golden ids (without [CLS]/[SEP]); "b" has one sentence left and is dropped.
    assert_that(out, equal_to([
        ("a", [[7592, 2088, 1010, 2023, 2003, 14324, 1012], [2117, 6251, 999]]),
        ("c", [[1060], [1061], [1062]])]))
