"""SWAG reader on a small file in the official CSV layout, its 4-choice features and its
submission file."""

import csv
import os

import pytest

from bert_keras import resources
from bert_keras.errors import UserError
from bert_keras.tasks.swag import SwagTask
from bert_keras.text.bert_tokenizer import BertTokenizer
from bert_keras.configs.tasks import get_task_config

from . import task_fixtures as fx

def test_reader_and_features(tmp_path):
  fx.write_swag(tmp_path / "train.csv")
  task = SwagTask(get_task_config("swag", max_seq_length=24))
  examples = task.read_examples(str(tmp_path), "train")
  assert [e.label for e in examples] == [0, 2]
  assert examples[0].endings[2] == 'flies, "quickly".'
  tokenizer = BertTokenizer(vocab_path=resources.uncased_vocab_path())
  features = task.make_features(examples, tokenizer, training=True)
  ids = features.inputs["input_word_ids"]
  assert ids.shape == (2, 4, 24)
  context = tokenizer.encode(["A man skis."])[0]
  ending = tokenizer.encode(["The man skis down the slope."])[0]
  assert list(ids[1, 2, :len(context) + len(ending) + 3]) == (
      [tokenizer.cls_id] + context + [tokenizer.sep_id] + ending + [tokenizer.sep_id])
  assert features.labels["logits"].tolist() == [0, 2]
  predictions = task.postprocess(examples, features, {"logits": [[0, 1, 0, 0], [0, 0, 3, 1]]})
  assert task.evaluate(examples, predictions) == {"accuracy": 50.0}


def test_reader_errors(tmp_path):
  fx.write_swag(tmp_path / "val.csv", rows=[fx.SWAG_ROWS[0][:-1] + ["7"]])
  task = SwagTask(get_task_config("swag"))
  with pytest.raises(UserError, match=r"val\.csv:2: label 7 is not 0-3"):
    task.read_examples(str(tmp_path), "dev")
  fx.write_swag(tmp_path / "val.csv", header=fx.SWAG_HEADER[:-3] + ["label"], rows=[])
  with pytest.raises(UserError, match=r"val\.csv:1: header lacks columns \['ending2', 'ending3'\]"):
    task.read_examples(str(tmp_path), "dev")


def test_a_row_with_an_extra_cell_is_refused(tmp_path):
  """Too many columns is an error like too few, naming the line and the header's count."""
  fx.write_swag(tmp_path / "val.csv", rows=[fx.SWAG_ROWS[0], fx.SWAG_ROWS[1] + ["extra"]])
  task = SwagTask(get_task_config("swag"))
  with pytest.raises(UserError, match=r"val\.csv:3: 13 columns; the header has 12"):
    task.read_examples(str(tmp_path), "dev")


def test_predictions_and_submission_name_rows_by_the_datasets_ids(tmp_path):
  """Before: predictions were named by file line numbers ("test.csv:2") and predict-only runs wrote
  no submission file. Now the guid is the official row index, predictions carry video-id and
  fold-ind, and the test split gets submission.csv with the test file's id columns."""
  header = fx.SWAG_HEADER[:-1]  # the official test.csv: no label column
  rows = [[row[0] + "7"] + row[1:-1] for row in fx.SWAG_ROWS]
  fx.write_swag(tmp_path / "test.csv", rows=rows, header=header)
  task = SwagTask(get_task_config("swag"))
  examples = task.read_examples(str(tmp_path), "test")
  predictions = task.postprocess(examples, None, {"logits": [[0, 1, 0, 0], [0, 0, 0, 3]]})
  assert [(p["guid"], p["video-id"], p["fold-ind"], p["prediction"]) for p in predictions] == [
      ("07", "lsmdc3001", "1", 1), ("17", "anetv_1", "2", 3)]
  (path,) = task.write_submission(examples, predictions, "test", str(tmp_path))
  assert os.path.basename(path) == "submission.csv"
  with open(path, encoding="utf-8", newline="") as f:
    assert list(csv.reader(f)) == [["", "video-id", "fold-ind", "label"],
                                   ["07", "lsmdc3001", "1", "1"], ["17", "anetv_1", "2", "3"]]
  assert task.write_submission(examples, predictions, "dev", str(tmp_path)) == []
  fx.write_swag(tmp_path / "test.csv", rows=[r[:2] + r[3:] for r in rows],
                header=header[:2] + header[3:])
  with pytest.raises(UserError, match=r"test\.csv:1: header lacks columns \['fold-ind'\]"):
    task.read_examples(str(tmp_path), "test")
