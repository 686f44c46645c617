"""Small files in the official SQuAD / CoNLL-2003 / SWAG layouts, shared by the task tests."""

import csv
import json

# Awkward cases: unicode and accents, the answer at the very end of the passage, irregular
# whitespace inside an answer, a word split into many pieces, a passage longer than one window.
LONG = " ".join(f"filler{i} word" for i in range(60)) + " The treaty was signed in Zürich."
CURIE = "Marie Curie (1867–1934) won the Nobel Prize in Physics.  Café  au lait."
CAFE = CURIE.index("Café")
SQUAD_V1 = {"version": "1.1", "data": [{"title": "T", "paragraphs": [
    {"context": CURIE,
     "qas": [{"id": "q1", "question": "When was Curie born?",
              "answers": [{"text": "1867", "answer_start": 13}]},
             {"id": "q2", "question": "What drink?",
              "answers": [{"text": "Café  au lait.", "answer_start": CAFE},
                          {"text": "Café au lait", "answer_start": CAFE}]}]},
    {"context": LONG,
     "qas": [{"id": "q3", "question": "Where was the treaty signed?",
              "answers": [{"text": "Zürich", "answer_start": len(LONG) - 7}]}]},
    {"context": "Antidisestablishmentarianism is long.",
     "qas": [{"id": "q4", "question": "What is long?",
              "answers": [{"text": "Antidisestablishmentarianism", "answer_start": 0}]}]},
]}]}
SQUAD_V2 = {"version": "v2.0", "data": [{"title": "T", "paragraphs": [
    {"context": "Paris is the capital of France.",
     "qas": [{"id": "a1", "question": "Capital of France?", "is_impossible": False,
              "answers": [{"text": "Paris", "answer_start": 0}]},
             {"id": "a2", "question": "Capital of Mars?", "is_impossible": True,
              "answers": [], "plausible_answers": [{"text": "Paris", "answer_start": 0}]}]}]}]}


def write_json(tmp_path, name, data):
  path = tmp_path / name
  path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
  return str(tmp_path)


# The original English files' layout (IOB1): -DOCSTART-, blank lines, token POS chunk NER.
CONLL = """-DOCSTART- -X- -X- O

EU NNP I-NP I-ORG
rejects VBZ I-VP O
German JJ I-NP I-MISC
call NN I-NP O
. . O O

Peter NNP I-NP I-PER
Blackburn NNP I-NP I-PER
visited VBD I-VP O
Zürich NNP I-NP I-LOC
-DOCSTART- -X- -X- O
Antidisestablishmentarianism NN I-NP O
Smith NNP I-NP I-PER
Jones NNP I-NP B-PER
"""


def write_conll(tmp_path, train=CONLL, dev=CONLL):
  (tmp_path / "train.txt").write_text(train, encoding="utf-8")
  (tmp_path / "valid.txt").write_text(dev, encoding="utf-8")
  return str(tmp_path)


SWAG_HEADER = ["", "video-id", "fold-ind", "startphrase", "sent1", "sent2", "gold-source", "ending0",
          "ending1", "ending2", "ending3", "label"]
SWAG_ROWS = [["0", "lsmdc3001", "1", "Someone opens a door. He", "Someone opens a door.", "He",
         "gold", "walks in.", "eats the door.", "flies, \"quickly\".", "sings, a café song.", "0"],
        ["1", "anetv_1", "2", "A man skis. The man", "A man skis.", "The man", "gen",
         "falls.", "is a tree.", "skis down the slope.", "melts.", "2"]]


def write_swag(path, rows=SWAG_ROWS, header=SWAG_HEADER):
  with open(path, "w", encoding="utf-8", newline="") as f:
    writer = csv.writer(f)
    writer.writerow(header)
    writer.writerows(rows)


