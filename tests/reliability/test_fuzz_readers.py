"""Property tests: every dataset reader, fed arbitrary bytes, unicode, empty, huge or undecodable
files, either parses them or raises UserError, never another exception. The Beam corpus readers
never raise at all: they drop (and count) bad lines and yield only well-formed documents.

Inputs mix pure noise (random bytes, random unicode) with near-valid files (the reader's own layout
with random cells), since noise alone rarely gets past the first check. Run the statistics with
  pytest tests/reliability/test_fuzz_readers.py --hypothesis-show-statistics

read_squad, read_swag, saved_model_predictor.read_jsonl, the config JSON readers and the checkpoint
config mappings are fuzzed in test_fuzz_json_readers.py; iter_wiki_pages (malformed XML) is still an
open bug (docs/RELIABILITY.md). The tokenizer and packer are fuzzed in tests/text.
"""

import io
import json
import os
import tempfile

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from tests.reliability import bad_inputs as B

FUZZ = B.fuzz_settings()

HUGE_LINE = b"word " * 400_000  # one 2 MB line
MANY_LINES = b"a\tb\n" * 100_000
UNDECODABLE = b"\x80\x81\xfe\xff\xc3\x28 \xed\xa0\x80 \xf4\x90\x80\x80\n"

cells = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=30)
unicode_text = st.text(max_size=3000)  # includes surrogates: encoded with surrogatepass below


def _encode(text: str) -> bytes:
  return text.encode("utf-8", "surrogatepass")  # lone surrogates give undecodable UTF-8 too


def _rows(separator: str, min_cells: int = 0, max_cells: int = 12):
  row = st.lists(cells, min_size=min_cells, max_size=max_cells).map(separator.join)
  return st.lists(row, max_size=20).map(lambda rows: _encode("\n".join(rows) + "\n"))


noise = st.one_of(st.binary(max_size=3000), unicode_text.map(_encode))


def _file_bytes(*near_valid):
  return st.one_of(noise, *near_valid)


def _task(name):
  from bert_keras.tasks.registry import get_task
  from bert_keras.configs.tasks import get_task_config
  return get_task(get_task_config(name))


# --- Task readers ---------------------------------------------------------------------------------

GLUE_TASKS = ["glue/cola", "glue/sst2", "glue/mrpc", "glue/stsb", "glue/mnli", "glue/qnli"]


@pytest.mark.parametrize("name", GLUE_TASKS)
@FUZZ
@given(data=_file_bytes(_rows("\t"), _rows("\t", 10, 11)))
@example(data=b"")
@example(data=HUGE_LINE)
@example(data=MANY_LINES)
@example(data=UNDECODABLE)
def test_glue_tsv(name, data):
  task = _task(name)
  split = "dev_matched" if name == "glue/mnli" else "train"
  file_name = f"{split}.tsv"
  examples = B.with_file(file_name, data,
                         lambda d, _: B.reads_or_user_error(lambda: task.read_examples(d, split)))
  for e in examples or []:
    assert isinstance(e.text_a, str)
    assert task.is_regression or e.label in task.labels


polarity_lines = st.lists(
    st.tuples(st.sampled_from(["__label__pos", "__label__neg", "__label__", "label", ""]),
              cells).map(" ".join), max_size=30).map(lambda ls: "\n".join(ls).encode("cp1252", "replace"))


@FUZZ
@given(data=_file_bytes(polarity_lines))
@example(data=b"")
@example(data=HUGE_LINE)
@example(data=UNDECODABLE)
def test_polarity(data):
  for split in ("train", "dev"):
    examples = B.with_file("p.cor", data, lambda _, p: B.reads_or_user_error(
        lambda: _task("polarity").read_examples(p, split)))
    for e in examples or []:
      assert e.label in ("neg", "pos") and e.text_a.strip()


numbers = st.one_of(st.floats(allow_nan=True, allow_infinity=True).map(str),
                    st.sampled_from(["0", "1", "0.5", "x", "", "1e400", "-0"]))
matrices = st.integers(0, 4).flatmap(
    lambda n: st.lists(st.lists(numbers, min_size=n, max_size=n + 1).map("\t".join),
                       min_size=n, max_size=n + 1).map(lambda rows: (n, "\n".join(rows).encode())))


@FUZZ
@given(docs=_file_bytes(_rows(" ")), matrix=matrices)
@example(docs=b"", matrix=(0, b""))
@example(docs=UNDECODABLE, matrix=(1, b"1"))
def test_lee_similarity(docs, matrix):
  from bert_keras.tasks import lee_similarity
  size, sims = matrix
  with tempfile.TemporaryDirectory() as d:
    with open(os.path.join(d, "lee.cor"), "wb") as f:
      f.write(docs)
    with open(os.path.join(d, "similarities0-1.txt"), "wb") as f:
      f.write(sims)
    documents = B.reads_or_user_error(lambda: lee_similarity.read_documents(
        os.path.join(d, "lee.cor")))
    ratings = B.reads_or_user_error(lambda: lee_similarity.read_similarities(
        os.path.join(d, "similarities0-1.txt"), size))
    for row in ratings or []:
      assert len(row) == size and all(0.0 <= v <= 1.0 for v in row)
    if documents is not None and ratings is not None and len(documents) == size:
      B.reads_or_user_error(lambda: _task("lee_similarity").read_examples(d, "train"))
    for document in documents or []:
      assert document.strip()


tags = st.sampled_from(["O", "B-PER", "I-PER", "B-", "I-LOC", "X", "b-per", "-DOCSTART-"])
conll_lines = st.lists(st.one_of(
    st.tuples(cells, cells, tags).map(" ".join), st.just(""), st.just("-DOCSTART- -X- -X- O"),
    cells), max_size=40).map(lambda ls: _encode("\n".join(ls)))


@pytest.mark.parametrize("scheme", ["iob1", "iob2"])
@FUZZ
@given(data=_file_bytes(conll_lines))
@example(data=b"")
@example(data=HUGE_LINE)
@example(data=UNDECODABLE)
def test_conll(scheme, data):
  from bert_keras.tasks import conll2003
  examples = B.with_file("train.txt", data, lambda _, p: B.reads_or_user_error(
      lambda: conll2003.read_conll(p, scheme)))
  for e in examples or []:
    assert len(e.words) == len(e.tags) > 0
    assert all(t == "O" or t[:2] in ("B-", "I-") for t in e.tags)


json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), cells),
    lambda inner: st.one_of(st.lists(inner, max_size=4),
                            st.dictionaries(cells, inner, max_size=4)), max_leaves=20)
jsonl_lines = st.lists(st.one_of(json_values.map(json.dumps), cells), max_size=10).map(
    lambda ls: _encode("\n".join(ls)))


# --- Beam corpus readers: bad lines are dropped and counted, never raised --------------------------

corpus_lines = st.lists(st.one_of(cells, st.just(""), unicode_text), max_size=30).map(
    lambda ls: _encode("\n".join(ls)))


def _check_documents(documents):
  for doc_id, sentences in documents:
    assert isinstance(doc_id, str) and doc_id
    assert sentences and all(isinstance(s, str) and s.strip() for s in sentences)


@FUZZ
@given(data=_file_bytes(corpus_lines))
@example(data=b"")
@example(data=HUGE_LINE * 2)
@example(data=UNDECODABLE * 3)
def test_bert_corpus_reader(data):
  from bert_keras.data.bert_corpus_reader import iter_bert_corpus_documents
  dropped = []
  documents = list(iter_bert_corpus_documents(io.BytesIO(data), "f.txt", dropped.append,
                                              max_line_bytes=1 << 20))
  _check_documents(documents)
  if data == UNDECODABLE * 3:
    assert dropped.count("undecodable_line") == 3


@pytest.mark.parametrize("json_text_key", [None, "text"])
@FUZZ
@given(data=_file_bytes(corpus_lines, jsonl_lines))
@example(data=b"")
@example(data=HUGE_LINE * 2)
@example(data=UNDECODABLE)
def test_line_document_reader(json_text_key, data):
  from bert_keras.data.line_document_reader import iter_line_documents
  dropped = []
  documents = list(iter_line_documents(io.BytesIO(data), "f.jsonl", dropped.append, json_text_key,
                                       max_line_bytes=1 << 20))
  _check_documents(documents)
  assert all(isinstance(reason, str) for reason in dropped)


@FUZZ
@given(text=unicode_text, key=st.one_of(st.none(), cells, st.binary(max_size=20)))
@example(text="", key=None)
def test_tfds_documents(text, key):
  from bert_keras.data.tfds_reader import _ToDocuments
  example_ = {"text": _encode(text)}
  if key is not None:
    example_["id"] = key
  to_documents = _ToDocuments("text", "wikipedia")
  to_documents.setup()
  _check_documents(list(to_documents.process(example_)))


@FUZZ
@given(wikitext=unicode_text)
@example(wikitext="{{" * 2000)
@example(wikitext="[[File:x|" * 500)
@example(wikitext="")
def test_wikitext_to_document(wikitext):
  """Arbitrary wikitext of a well-formed page: documents or a counted drop, never an exception."""
  from bert_keras.data.wikipedia_reader import wiki_page_to_document
  dropped = []
  documents = wiki_page_to_document(("7", "Title", wikitext), "dump.xml",
                                    lambda reason, where=None: dropped.append(reason))
  _check_documents(documents)
  assert documents or dropped == ["wiki_no_text_after_markup"]
