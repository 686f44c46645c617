"""One rule for a UTF-8 byte-order mark (U+FEFF, written by Windows editors at the start of a
file): every reader of a user's text accepts it and drops it. Before, CoNLL read `\\ufeff-DOCSTART-`
as a word (one sentence too many), SQuAD JSON and predict's JSON lines refused the file, and a
GLUE test.tsv header carried it into its first cell."""

import json

import pytest

from bert_keras.errors import UserError
from bert_keras.tasks.registry import get_task
from bert_keras.tasks.readers import read_lines
from bert_keras.configs.tasks import get_task_config

from . import task_fixtures as fx

BOM = "\ufeff"


def _write(path, text, bom):
  path.write_text((BOM if bom else "") + text, encoding="utf-8")
  return path


def _read(task_name, data_dir, split, **config):
  return get_task(get_task_config(task_name, **config)).read_examples(str(data_dir), split)


def test_conll_with_a_bom_reads_as_without(tmp_path):
  with_bom = tmp_path / "bom"
  with_bom.mkdir()
  _write(with_bom / "train.txt", fx.CONLL, bom=True)
  _write(tmp_path / "train.txt", fx.CONLL, bom=False)
  plain = _read("conll2003", tmp_path, "train", tagging_scheme="iob1")
  read = _read("conll2003", with_bom, "train", tagging_scheme="iob1")
  assert [e.words for e in read] == [e.words for e in plain]
  assert len(read) == 3  # not a fourth sentence made of "\ufeff-DOCSTART-"


def test_squad_json_with_a_bom_reads_as_without(tmp_path):
  _write(tmp_path / "dev-v1.1.json", json.dumps(fx.SQUAD_V1), bom=True)
  examples = _read("squad_v1", tmp_path, "dev")
  assert [e.qas_id for e in examples] == ["q1", "q2", "q3", "q4"]


def test_swag_csv_with_a_bom_reads_as_without(tmp_path):
  fx.write_swag(tmp_path / "val.csv")
  path = tmp_path / "val.csv"
  path.write_text(BOM + path.read_text(encoding="utf-8"), encoding="utf-8")
  examples = _read("swag", tmp_path, "dev")
  assert [(e.guid, e.label) for e in examples] == [("0", 0), ("1", 2)]  # the unnamed id column


def test_glue_test_file_with_a_bom_reads_as_without(tmp_path):
  _write(tmp_path / "test.tsv", "index\tsentence1\tsentence2\n3\tA.\tB.\n", bom=True)
  examples = _read("glue/rte", tmp_path, "test")
  assert [(e.guid, e.text_a, e.text_b) for e in examples] == [("3", "A.", "B.")]


def test_a_bom_is_dropped_only_at_the_start(tmp_path):
  path = _write(tmp_path / "a.txt", f"one\n{BOM}two\n", bom=True)
  assert list(read_lines(str(path))) == [(1, "one"), (2, f"{BOM}two")]
  bad = tmp_path / "bad.txt"
  bad.write_bytes(BOM.encode() + b"ok\n\xff\n")
  with pytest.raises(UserError, match=r"bad\.txt:2: not valid utf-8"):
    list(read_lines(str(bad)))


def test_predict_json_lines_with_a_bom_read_as_without(tmp_path):
  from bert_keras.export.saved_model_predictor import read_jsonl  # pylint: disable=import-outside-toplevel
  path = _write(tmp_path / "in.jsonl", '{"text_a": "a film"}\n\n{"text_a": "b"}\n', bom=True)
  assert read_jsonl(str(path)) == [(1, {"text_a": "a film"}), (3, {"text_a": "b"})]
