"""CoNLL-2003 reader, IOB schemes, first-piece alignment and post-processing on crafted logits."""

import os

import numpy as np
import pytest

from bert_keras import resources
from bert_keras.errors import UserError
from bert_keras.tasks import conll2003
from bert_keras.tasks.conll2003 import Conll2003Task
from bert_keras.text.bert_tokenizer import BertTokenizer
from configs.tasks import get_task_config

from . import task_fixtures as fx

@pytest.fixture(scope="module")
def tokenizer():
  return BertTokenizer(vocab_path=resources.uncased_vocab_path())


def test_iob_conversions():
  iob1 = ["I-PER", "I-PER", "O", "I-LOC", "B-LOC", "I-ORG"]
  iob2 = ["B-PER", "I-PER", "O", "B-LOC", "B-LOC", "B-ORG"]
  assert conll2003.iob1_to_iob2(iob1) == iob2
  assert conll2003.iob2_to_iob1(iob2) == iob1


def test_reader_sentences_and_errors(tmp_path):
  data_dir = fx.write_conll(tmp_path)
  task = Conll2003Task(get_task_config("conll2003"))
  examples = task.read_examples(data_dir, "train")
  assert [len(e.words) for e in examples] == [5, 4, 3]
  assert examples[0].tags == ["B-ORG", "O", "B-MISC", "O", "O"]
  assert examples[2].tags == ["O", "B-PER", "B-PER"]
  assert examples[1].guid == "train.txt:9"
  fx.write_conll(tmp_path, train=fx.CONLL + "bad NN I-NP X-PER\n")
  with pytest.raises(UserError, match=r"train\.txt:17: tag 'X-PER'"):
    task.read_examples(data_dir, "train")
  fx.write_conll(tmp_path, dev=fx.CONLL + "\nMars NNP I-NP I-PLANET\n")
  with pytest.raises(UserError, match=r"\['B-PLANET'\] never occur in train"):
    task.prepare_labels(task.read_examples(data_dir, "train"),
                        {"dev": task.read_examples(data_dir, "dev")})


def test_first_piece_labels_and_windows(tmp_path, tokenizer):
  data_dir = fx.write_conll(tmp_path)
  task = Conll2003Task(get_task_config("conll2003", max_seq_length=8))
  examples = task.read_examples(data_dir, "train")
  task.prepare_labels(examples, {})
  features = task.make_features(examples, tokenizer, training=True)
  labels = features.labels["logits"]
  ids = features.inputs["input_word_ids"]
  # 6 pieces fit per window: the first sentence (EU rejects German call .) fits in one.
  for f, m in enumerate(features.meta):
    example = examples[m["example_index"]]
    for word_index, position in m["first_piece"].items():
      assert labels[f, position] == task.label_names.index(example.tags[word_index])
      assert ids[f, position] == tokenizer.encode([example.words[word_index]])[0][0]
    assert (labels[f] >= 0).sum() == len(m["first_piece"])
  # "Antidisestablishmentarianism" has many pieces: the third sentence needs several windows,
  # and every word still gets exactly one labelled position.
  windows = [m for m in features.meta if m["example_index"] == 2]
  assert len(windows) >= 2
  assert sorted(w for m in windows for w in m["first_piece"]) == [0, 1, 2]


def test_postprocess_and_metrics_on_crafted_logits(tmp_path, tokenizer):
  data_dir = fx.write_conll(tmp_path)
  task = Conll2003Task(get_task_config("conll2003", max_seq_length=16))
  examples = task.read_examples(data_dir, "dev")
  task.prepare_labels(examples, {})
  features = task.make_features(examples, tokenizer, training=False)
  k = len(task.label_names)
  logits = np.zeros(features.inputs["input_word_ids"].shape + (k,), np.float32)
  wanted = [list(e.tags) for e in examples]
  wanted[1][3] = "O"  # miss Zürich (LOC)
  wanted[0][3] = "B-PER"  # invent a PER on "call"
  for f, m in enumerate(features.meta):
    for word_index, position in m["first_piece"].items():
      logits[f, position, task.label_names.index(wanted[m["example_index"]][word_index])] = 4.0
    for position in range(1, m["length"]):
      if position not in m["first_piece"].values():
        # Continuation pieces and [SEP] get a contradicting label: it must be ignored.
        logits[f, position, task.label_names.index("B-LOC")] = 9.0
  predictions = task.postprocess(examples, features, {"logits": logits})
  assert [p["predicted"] for p in predictions] == wanted
  scores = task.evaluate(examples, predictions)
  # Gold entities: ORG MISC PER LOC PER PER = 6; predicted 6 with 5 right (1 missed, 1 invented).
  assert scores["precision"] == pytest.approx(5 / 6)
  assert scores["recall"] == pytest.approx(5 / 6)
  path = task.write_predictions(predictions, os.path.join(str(tmp_path), "pred"))
  lines = open(path, encoding="utf-8").read().splitlines()
  assert lines[0] == "EU I-ORG I-ORG"  # written back in the file's IOB1 scheme
  assert lines[-2] == "Jones B-PER B-PER"
