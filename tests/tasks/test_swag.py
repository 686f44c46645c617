"""SWAG reader on a small file in the official CSV layout, and its 4-choice features."""

import csv

import pytest

from bert_keras import resources
from bert_keras.errors import UserError
from bert_keras.tasks.swag import SwagTask
from bert_keras.text.bert_tokenizer import BertTokenizer
from configs.tasks import get_task_config

HEADER = ["", "video-id", "fold-ind", "startphrase", "sent1", "sent2", "gold-source", "ending0",
          "ending1", "ending2", "ending3", "label"]
ROWS = [["0", "lsmdc3001", "1", "Someone opens a door. He", "Someone opens a door.", "He",
         "gold", "walks in.", "eats the door.", "flies, \"quickly\".", "sings, a café song.", "0"],
        ["1", "anetv_1", "2", "A man skis. The man", "A man skis.", "The man", "gen",
         "falls.", "is a tree.", "skis down the slope.", "melts.", "2"]]


def write(path, rows=ROWS, header=HEADER):
  with open(path, "w", encoding="utf-8", newline="") as f:
    writer = csv.writer(f)
    writer.writerow(header)
    writer.writerows(rows)


def test_reader_and_features(tmp_path):
  write(tmp_path / "train.csv")
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
  assert task.evaluate(examples, predictions) == {"accuracy": 0.5}


def test_reader_errors(tmp_path):
  write(tmp_path / "val.csv", rows=[ROWS[0][:-1] + ["7"]])
  task = SwagTask(get_task_config("swag"))
  with pytest.raises(UserError, match=r"val\.csv:2: label 7 is not 0-3"):
    task.read_examples(str(tmp_path), "dev")
  write(tmp_path / "val.csv", header=HEADER[:-3] + ["label"], rows=[])
  with pytest.raises(UserError, match=r"val\.csv:1: header lacks columns \['ending2', 'ending3'\]"):
    task.read_examples(str(tmp_path), "dev")
