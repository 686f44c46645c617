"""CoNLL-2003 reader, IOB schemes, first-piece alignment and post-processing on crafted logits."""

import json
import os

import numpy as np
import pytest

from bert_keras import resources
from bert_keras.errors import UserError
from bert_keras.tasks import conll2003
from bert_keras.tasks.conll2003 import Conll2003Task
from bert_keras.text.bert_tokenizer import BertTokenizer
from bert_keras.configs.tasks import get_task_config

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
  fx.write_conll(tmp_path, train=fx.CONLL.replace("Zürich NNP I-NP I-LOC", "Zürich NNP I-NP O"))
  with pytest.raises(UserError, match=r"\['B-LOC'\] never occur in train"):
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
  assert scores["precision"] == pytest.approx(500 / 6)  # 0-100, as conlleval prints them
  assert scores["recall"] == pytest.approx(500 / 6)
  path = task.write_predictions(predictions, os.path.join(str(tmp_path), "pred"))
  assert path == os.path.join(str(tmp_path), "pred.json")
  lines = open(path[:-len(".json")] + ".conlleval.txt", encoding="utf-8").read().splitlines()
  assert lines[0] == "EU I-ORG I-ORG"  # written back in the file's IOB1 scheme
  assert lines[-2] == "Jones B-PER B-PER"
  # The JSON in the same scheme: its gold column is the file's NER column, its predictions the
  # conlleval file's third column (before: IOB2 in the JSON, IOB1 in the conlleval file).
  written = json.load(open(path, encoding="utf-8"))
  file_tags = [line.split()[-1] for line in fx.CONLL.splitlines()
               if line.strip() and not line.startswith("-DOCSTART-")]
  assert [t for p in written for t in p["gold"]] == file_tags
  assert [t for p in written for t in p["predicted"]] == [
      line.split()[2] for line in lines if line]


# --- Wrong data is refused, not learned ---------------------------------------------------------

def _conll_file(tmp_path, text, name="train.txt"):
  path = tmp_path / name
  path.write_text(text, encoding="utf-8")
  return str(path)


def test_a_line_that_lost_its_ner_column_is_refused(tmp_path):
  """`Commission NNP I-NP` in a 4-column file would teach the model an entity type "NP"."""
  path = _conll_file(tmp_path, "EU NNP I-NP I-ORG\nCommission NNP I-NP\nsaid VBD I-VP O\n")
  with pytest.raises(UserError, match=r"train\.txt:2: 3 fields; this file's lines have 4 "
                                      r"\(line 1\)"):
    conll2003.read_conll(path, "iob1")


def test_a_file_without_its_ner_column_is_refused(tmp_path):
  """Every line lost the NER column: the chunk tags are no CoNLL-2003 entity types."""
  path = _conll_file(tmp_path, "EU NNP I-NP\nrejects VBZ I-VP\n")
  with pytest.raises(UserError, match=r"train\.txt:1: tag 'I-NP' has entity type 'NP'; "
                                      r"CoNLL-2003's are \['LOC', 'MISC', 'ORG', 'PER'\]"):
    conll2003.read_conll(path, "iob1")


@pytest.mark.parametrize("tag", ["S-PER", "E-LOC", "B-", "I-per"])
def test_tags_outside_the_scheme_are_refused(tmp_path, tag):
  path = _conll_file(tmp_path, f"EU NNP I-NP O\nPeter NNP I-NP {tag}\n")
  with pytest.raises(UserError, match=r"train\.txt:2: tag "):
    conll2003.read_conll(path, "iob1")


IOB2 = "Peter NNP I-NP B-PER\nBlackburn NNP I-NP I-PER\nvisited VBD I-VP O\nZurich NNP I-NP B-LOC\n"


def test_iob2_data_under_the_iob1_default_is_refused(tmp_path):
  """Before: read under iob1 and its gold column rewritten without a word."""
  path = _conll_file(tmp_path, IOB2)
  with pytest.raises(UserError, match=r"train\.txt:1: 'B-PER' begins an entity: the file is IOB2, "
                                      r"but --tagging_scheme=iob1.*--tagging_scheme=iob2"):
    conll2003.read_conll(path, "iob1")
  assert [e.tags for e in conll2003.read_conll(path, "iob2")] == [
      ["B-PER", "I-PER", "O", "B-LOC"]]


def test_iob1_data_under_iob2_is_refused(tmp_path):
  path = _conll_file(tmp_path, "visited VBD I-VP O\nZurich NNP I-NP I-LOC\n")
  with pytest.raises(UserError, match=r"train\.txt:2: 'I-LOC' begins an entity: the file is IOB1, "
                                      r"but --tagging_scheme=iob2.*--tagging_scheme=iob1"):
    conll2003.read_conll(path, "iob2")


def test_the_scheme_read_is_reported(tmp_path):
  data_dir = fx.write_conll(tmp_path)
  task = Conll2003Task(get_task_config("conll2003"))
  task.read_examples(data_dir, "train")
  assert task.data_notes["tagging_scheme"] == "iob1"
  assert task.task_info()["input_tagging_scheme"] == "iob1"
