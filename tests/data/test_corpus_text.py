"""Bounded line reading, UTF-8 decoding and the rule-based sentence splitter."""

import io

from bert_keras.data.corpus_text import iter_bounded_lines, iter_text_lines, split_sentences


def test_bounded_lines_skip_a_line_of_megabytes_without_losing_the_next():
  data = b"first\r\n" + b"x" * (3 << 20) + b"\nthird\nlast"
  lines = list(iter_bounded_lines(io.BytesIO(data), max_line_bytes=1 << 20))
  assert lines == [(1, b"first"), (2, None), (3, b"third"), (4, b"last")]


def test_line_exactly_at_the_limit_is_kept():
  lines = list(iter_bounded_lines(io.BytesIO(b"abcd\nabcde\n"), max_line_bytes=4))
  assert lines == [(1, b"abcd"), (2, None)]


def test_text_lines_drop_long_and_undecodable_lines_and_say_where():
  """The one line loop of both corpus readers (bert_corpus_reader, line_document_reader)."""
  dropped, undecodable = [], []
  data = b"one\n" + b"x" * 9 + b"\ncaf\xe9\n\ntwo"
  lines = list(iter_text_lines(io.BytesIO(data), dropped.append, max_line_bytes=8,
                               on_undecodable=undecodable.append))
  assert lines == [(1, "one"), (4, ""), (5, "two")]
  assert dropped == ["line_too_long", "undecodable_line"] and undecodable == [3]


def test_split_sentences():
  text = ("Dr. Smith went to Washington, D.C. in 1999. He met J. R. R. Tolkien's heirs!  "
          "Was it \"fun\"? \"Yes.\" It cost 3.5 million dollars, e.g. a lot. The end")
  assert split_sentences(text) == [
      "Dr. Smith went to Washington, D.C. in 1999.",
      "He met J. R. R. Tolkien's heirs!",
      "Was it \"fun\"?",
      "\"Yes.\"",
      "It cost 3.5 million dollars, e.g. a lot.",
      "The end",
  ]
  assert split_sentences("   ") == []
  assert split_sentences("no end punctuation here") == ["no end punctuation here"]
