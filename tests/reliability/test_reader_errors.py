"""Bad input through the library readers: every case raises UserError naming the file, line or value
and what was expected (the scripts turn that into one line and exit status 2, see
test_script_errors_*.py). One test per (reader, bad input); the vocabulary reader's cases live in
tests/text/test_vocab.py and are not repeated here."""

import json
import os
import shutil

import pytest

from bert_keras.tasks import conll2003, lee_similarity, squad, swag
from bert_keras.tasks.registry import get_task
from bert_keras.configs.tasks import get_task_config
from tests.reliability import bad_inputs as B


def _task(name, **overrides):
  return get_task(get_task_config(name, **overrides))


# --- GLUE TSV --------------------------------------------------------------------------------------

GLUE_CASES = {
    "missing file": (None, "train.tsv: no such file"),
    "empty file": ("", "train.tsv: no examples"),
    "header only": (B.GLUE_HEADER_MRPC + "\n", "train.tsv: no examples"),
    "binary file": (b"\x89PNG\r\n\x1a\n\x00\xff\xfe", "train.tsv:1: not valid utf-8"),
    "short row": (B.mrpc_rows(["1"]) + "0\tonly\ttwo\n", "train.tsv:3: 3 tab-separated columns",
                  "expected 5 as in the header"),
    "unknown label": (B.mrpc_rows(["1", "yes"]), "train.tsv:3: label 'yes' is not one of ['0', '1']"),
    "extra column": (B.mrpc_rows(["1"]) + "0\t1\t2\ta\tstray\ttab\n",
                     "train.tsv:3: 6 tab-separated columns; expected 5 as in the header"),
    "comma separated": ("Quality,#1 ID,#2 ID,#1 String,#2 String\n1,1,2,a,b\n",
                        "train.tsv:2: 1 tab-separated columns"),
}


@pytest.mark.parametrize("case", sorted(GLUE_CASES))
def test_glue_tsv(tmp_path, case):
  content, *needles = GLUE_CASES[case]
  if content is not None:
    B.write(str(tmp_path / "train.tsv"), content)
  B.raises(lambda: _task("glue/mrpc").read_examples(str(tmp_path), "train"), *needles)


def test_glue_regression_label_not_a_number(tmp_path):
  header = "index genre filename year old_index source1 source2 sentence1 sentence2 score"
  row = "\t".join(["0", "g", "f", "y", "0", "s", "s", "a b", "c d", "high"])
  B.write(str(tmp_path / "dev.tsv"), header.replace(" ", "\t") + "\n" + row + "\n")
  B.raises(lambda: _task("glue/stsb").read_examples(str(tmp_path), "dev"),
          "dev.tsv:2: label 'high' is not a number")


def test_glue_labels_differ_between_train_and_dev(tmp_path):
  task = _task("glue/sst2")
  for split, labels in (("train", "00"), ("dev", "01")):
    B.write(str(tmp_path / f"{split}.tsv"),
            "sentence\tlabel\n" + "".join(f"a film\t{label}\n" for label in labels))
  train = task.read_examples(str(tmp_path), "train")
  dev = task.read_examples(str(tmp_path), "dev")
  B.raises(lambda: task.prepare_labels(train, {"dev": dev}), "labels differ between train ['0']",
          "dev ['0', '1']", "['1'] never occur in train")


# --- polarity (fastText lines, cp1252) -------------------------------------------------------------

POLARITY_CASES = {
    "missing file": (None, "no such file"),
    "empty file": ("", "no train examples"),
    "no label prefix": ("a fine film\n", ":1: expected '__label__<label> <text>'"),
    "label without text": ("__label__pos\n", ":1: expected '__label__<label> <text>'"),
    "unknown label": ("__label__pos good\n__label__meh so so\n",
                      ":2: label 'meh' is not one of ['neg', 'pos']"),
}


@pytest.mark.parametrize("case", sorted(POLARITY_CASES))
def test_polarity(tmp_path, case):
  content, *needles = POLARITY_CASES[case]
  path = str(tmp_path / "polarity.cor")
  if content is not None:
    B.write(path, content)
  B.raises(lambda: _task("polarity").read_examples(path, "train"), path, *needles)


# --- Lee similarity -------------------------------------------------------------------------------

def test_lee_missing_documents(tmp_path):
  B.raises(lambda: _task("lee_similarity").read_examples(str(tmp_path), "train"),
          "lee.cor: no such file")


@pytest.mark.parametrize("content, needle", [
    ("0.5\t0.5\n0.5\n", ":2: 1 ratings; expected 2"),
    ("1\tx\n0.5\t1\n", ":1: ratings must be numbers"),
    ("1\t1.5\n1\t1\n", ":1: rating 1.5 is outside [0, 1]"),
    ("1\tnan\n1\t1\n", ":1: rating nan is outside [0, 1]"),
    ("1\t1\n", "1 rows; expected 2"),
])
def test_lee_similarities(tmp_path, content, needle):
  path = B.write(str(tmp_path / "similarities0-1.txt"), content)
  B.raises(lambda: lee_similarity.read_similarities(path, 2), path, needle)


def test_lee_empty_document_line(tmp_path):
  path = B.write(str(tmp_path / "lee.cor"), "first document\n\nthird\n")
  B.raises(lambda: lee_similarity.read_documents(path), f"{path}:2: empty document line")


# --- SQuAD JSON -----------------------------------------------------------------------------------

def _squad(tmp_path, data, training=True, version_2=False):
  path = B.write(str(tmp_path / "train-v1.1.json"),
                 data if isinstance(data, str) else json.dumps(data))
  return lambda: squad.read_squad(path, training=training, version_2=version_2)


def _squad_doc(qa, context="the film was good"):
  return {"data": [{"title": "t", "paragraphs": [{"context": context, "qas": [qa]}]}]}


SQUAD_CASES = {
    "empty file": ("", "train-v1.1.json:1: not valid JSON"),
    "bad json line 3": ('{\n "data": [\n  {,}\n ]\n}', "train-v1.1.json:3: not valid JSON"),
    "not the layout": ([1, 2], "expected a JSON object with a 'data' list"),
    "no paragraphs' context": ({"data": [{"paragraphs": [{"qas": []}]}]},
                               "data[0].paragraphs[0]: needs a 'context' string and a 'qas' list"),
    "question without id": (_squad_doc({"question": "q", "answers": []}),
                            "data[0].paragraphs[0].qas[0]: missing 'id'"),
    "v1.1 without answer": (_squad_doc({"id": "q7", "question": "q", "answers": []}),
                            "(id q7): SQuAD v1.1 questions need an answer"),
    "answer_start outside": (_squad_doc({"id": "q8", "question": "q", "answers": [
        {"text": "good", "answer_start": 99}]}), "(id q8): answer_start=99 is outside the 17-character"),
    "answer_start not int": (_squad_doc({"id": "q9", "question": "q", "answers": [
        {"text": "good", "answer_start": "13"}]}), "answer_start='13'"),
    "answer without text": (_squad_doc({"id": "q10", "question": "q", "answers": [
        {"answer_start": 0}]}), "(id q10): answers need 'text' and 'answer_start'"),
    "no questions": ({"data": []}, "train-v1.1.json: no questions"),
}


@pytest.mark.parametrize("case", sorted(SQUAD_CASES))
def test_squad_json(tmp_path, case):
  data, *needles = SQUAD_CASES[case]
  B.raises(_squad(tmp_path, data), str(tmp_path / "train-v1.1.json"), *needles)


def test_squad_missing_file(tmp_path):
  B.raises(lambda: _task("squad_v1").read_examples(str(tmp_path), "train"),
          "train-v1.1.json: no such file")


# --- SWAG CSV -------------------------------------------------------------------------------------

SWAG_CASES = {
    "missing file": (None, "train.csv: no such file"),
    "empty file": ("", "train.csv: empty file"),
    "header lacks columns": ("a,b,c\n1,2,3\n", "train.csv:1: header lacks columns", "'sent1'"),
    "short row": (B.swag_rows(2) + "9,v,0,x,y\n", "train.csv:4: 5 columns; the header has 12"),
    "long row": (B.swag_rows(2) + "9,v,0,x,y,s,g,a,b,c,d,0,extra\n",
                 "train.csv:4: 13 columns; the header has 12"),
    "label not a number": (B.swag_rows(1).replace(",0\n", ",zero\n"),
                           "train.csv:2: label 'zero' is not 0-3"),
    "label out of range": (B.swag_rows(1).replace(",0\n", ",7\n"), "train.csv:2: label 7 is not 0-3"),
    "missing label": (B.swag_rows(1).replace(",0\n", ",\n"), "train.csv:2: missing label"),
    "header only": (B.SWAG_HEADER + "\n", "train.csv: no examples"),
}


@pytest.mark.parametrize("case", sorted(SWAG_CASES))
def test_swag_csv(tmp_path, case):
  content, *needles = SWAG_CASES[case]
  if content is not None:
    B.write(str(tmp_path / "train.csv"), content)
  B.raises(lambda: _task("swag").read_examples(str(tmp_path), "train"), *needles)


def test_swag_row_line_numbers_count_quoted_newlines(tmp_path):
  """A quoted cell spanning two lines: the error names the physical line where the row ends."""
  rows = B.swag_rows(1) + '1,v,0,"two\nlines",s,s,g,a,b,c,d,9\n'
  path = B.write(str(tmp_path / "val.csv"), rows)
  B.raises(lambda: swag.read_swag(path, require_label=True), f"{path}:4: label 9 is not 0-3")


# --- CoNLL-2003 -----------------------------------------------------------------------------------

CONLL_CASES = {
    "empty file": ("", "train.txt: no sentences"),
    "only docstart": ("-DOCSTART- -X- -X- O\n\n", "train.txt: no sentences"),
    "bad tag": (B.conll_rows(["O", "PER"]), "train.txt:4: tag 'PER' is not O, B-<type> or I-<type>"),
    "one column": ("-DOCSTART- -X- -X- O\n\nword\n", "train.txt:3: expected 'token POS chunk NER'"),
    "line lost its NER column": (B.conll_rows(["O", "I-PER"]) + "Commission NNP I-NP\n",
                                 "train.txt:6: 3 fields; this file's lines have 4 (line 3)"),
    "chunk tags read as NER": ("EU NNP I-NP\n", "train.txt:1: tag 'I-NP' has entity type 'NP'"),
    "IOB2 file under iob1": (B.conll_rows(["O", "B-PER", "I-PER"]),
                             "train.txt:4: 'B-PER' begins an entity: the file is IOB2, but "
                             "--tagging_scheme=iob1; pass --tagging_scheme=iob2"),
    "bad utf-8": (b"EU NNP B-NP B-ORG\nrejects \xff VBZ I-VP O\n", "train.txt:2: not valid utf-8"),
}


@pytest.mark.parametrize("case", sorted(CONLL_CASES))
def test_conll(tmp_path, case):
  content, *needles = CONLL_CASES[case]
  B.write(str(tmp_path / "train.txt"), content)
  B.raises(lambda: _task("conll2003").read_examples(str(tmp_path), "train"), *needles)


def test_conll_missing_file(tmp_path):
  B.raises(lambda: _task("conll2003").read_examples(str(tmp_path), "dev"),
          "none of ['valid.txt', 'dev.txt', 'eng.testa'] exists")


def test_conll_labels_differ_between_train_and_dev(tmp_path):
  train = conll2003.read_conll(B.write(str(tmp_path / "train.txt"), B.conll_rows(["O", "B-PER"])),
                               "iob2")
  dev = conll2003.read_conll(B.write(str(tmp_path / "valid.txt"), B.conll_rows(["O", "B-LOC"])),
                             "iob2")
  B.raises(lambda: _task("conll2003").prepare_labels(train, {"dev": dev}),
          "labels differ between train and dev: ['B-LOC'] never occur in train")


# --- Pretraining TFRecords ------------------------------------------------------------------------

def test_pretraining_input_pattern_matches_nothing(tmp_path):
  from bert_keras.training.pretraining_input import list_files
  pattern = str(tmp_path / "train-*.tfrecord")
  B.raises(lambda: list_files(pattern), f"input pattern {pattern!r} matches no file")


def test_pretraining_input_empty_tfrecord(tmp_path):
  from bert_keras.training.pretraining_input import check_record_shapes
  path = B.write(str(tmp_path / "empty.tfrecord"), b"")
  B.raises(lambda: check_record_shapes([path], 64, 10), f"{path}: no records")


def test_pretraining_input_wrong_lengths(tmp_path):
  import tensorflow as tf
  from bert_keras.training.pretraining_input import check_record_shapes
  path = str(tmp_path / "short.tfrecord")
  feature = lambda n: tf.train.Feature(int64_list=tf.train.Int64List(value=[1] * n))
  example = tf.train.Example(features=tf.train.Features(feature={
      "input_ids": feature(32), "masked_lm_positions": feature(5)}))
  with tf.io.TFRecordWriter(path) as writer:
    writer.write(example.SerializeToString())
  B.raises(lambda: check_record_shapes([path], 64, 10),
          f"{path}: record 1 has input_ids of length 32, but the config says 64")


def test_pretraining_input_records_of_another_format(tmp_path):
  import tensorflow as tf
  from bert_keras.training.pretraining_input import check_record_shapes
  path = str(tmp_path / "other.tfrecord")
  example = tf.train.Example(features=tf.train.Features(feature={
      "image": tf.train.Feature(bytes_list=tf.train.BytesList(value=[b"png"]))}))
  with tf.io.TFRecordWriter(path) as writer:
    writer.write(example.SerializeToString())
  B.raises(lambda: check_record_shapes([path], 64, 10),
          f"{path}: record 1 has no feature 'input_ids'")


# --- Configs --------------------------------------------------------------------------------------

def test_training_config_json_errors(tmp_path):
  from bert_keras.configs.training import TrainingConfig
  missing = str(tmp_path / "nope.json")
  B.raises(lambda: TrainingConfig.from_file(missing), missing, "no such TrainingConfig JSON file")
  bad = B.write(str(tmp_path / "bad.json"), "{\n  'model_preset': 1\n}")
  B.raises(lambda: TrainingConfig.from_file(bad), f"{bad}:2: not valid JSON")
  unknown = B.write(str(tmp_path / "unknown.json"), json.dumps({"num_trian_steps": 5}))
  B.raises(lambda: TrainingConfig.from_file(unknown), unknown,
          "num_trian_steps: unknown key in TrainingConfig")
  wrong = B.write(str(tmp_path / "wrong.json"), json.dumps({"optimizer": {"num_train_steps": "5"}}))
  B.raises(lambda: TrainingConfig.from_file(wrong), wrong,
           "optimizer.num_train_steps='5' must be an integer")
  array = B.write(str(tmp_path / "array.json"), "[1, 2]")
  B.raises(lambda: TrainingConfig.from_file(array), array,
          "expected an object at the top level of the JSON, got an array")


def test_model_config_json_errors(tmp_path):
  from bert_keras.configs.model import ModelConfig
  missing = str(tmp_path / "nope.json")
  B.raises(lambda: ModelConfig.from_file(missing), missing)
  odd = B.write_model_config(str(tmp_path / "odd.json"), hidden_size=15, num_heads=2)
  B.raises(lambda: ModelConfig.from_file(odd), "hidden_size=15 is not divisible by num_heads=2")


def test_task_config_unknown_key():
  from bert_keras.configs.tasks import TaskConfig
  B.raises(lambda: TaskConfig.from_dict({"task": "polarity", "learning_rte": 1e-4}),
          "learning_rte: unknown key in TaskConfig")


def test_component_parameters_unknown_and_wrong_type():
  from components.pusher.spec import PusherSpec
  B.raises(lambda: PusherSpec.resolve_parameters({"serving_dir": "s", "bogus": 1}),
          "unknown parameters ['bogus']")
  B.raises(lambda: PusherSpec.resolve_parameters({"serving_dir": 5}),
          "parameter serving_dir=5 must be of type str")


def test_predict_jsonl_errors(tmp_path):
  from bert_keras.export.saved_model_predictor import read_jsonl
  bad = B.write(str(tmp_path / "in.jsonl"), '{"text_a": "ok"}\n\n{not json}\n')
  B.raises(lambda: read_jsonl(bad), f"{bad}:3: not valid JSON")
  array = B.write(str(tmp_path / "array.jsonl"), '["text"]\n')
  B.raises(lambda: read_jsonl(array), f"{array}:1: expected an object", "got an array")


# --- Checkpoints ----------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def google_checkpoint(tmp_path_factory):
  """A tiny Google-layout checkpoint (written by TF1's Saver), without the `checkpoint` state file
  so that copies of the directory read their own files."""
  from tests.interop.interop_fixtures import (TINY_GOOGLE_CONFIG, random_google_weights,
                                              write_tf1_checkpoint)
  directory = str(tmp_path_factory.mktemp("ckpt") / "google")
  write_tf1_checkpoint(random_google_weights(TINY_GOOGLE_CONFIG), directory, TINY_GOOGLE_CONFIG)
  os.remove(os.path.join(directory, "checkpoint"))
  return directory


def _copy(google_checkpoint, tmp_path):
  directory = str(tmp_path / "copy")
  shutil.copytree(google_checkpoint, directory)
  return directory


def _data_file(directory):
  return os.path.join(directory, next(f for f in os.listdir(directory) if ".data-" in f))


def _truncate(path, keep):
  with open(path, "rb") as f:
    data = f.read()
  B.write(path, data[:keep(len(data))])


def test_checkpoint_missing(tmp_path):
  from bert_keras import interop
  B.raises(lambda: interop.load_encoder(str(tmp_path / "nope")), "nope: no such checkpoint")
  B.raises(lambda: interop.load_encoder(str(tmp_path)), "no checkpoint found")


def test_checkpoint_truncated_data(google_checkpoint, tmp_path):
  from bert_keras import interop
  directory = _copy(google_checkpoint, tmp_path)
  _truncate(_data_file(directory), lambda n: n // 2)
  B.raises(lambda: interop.load_encoder(directory), ".data-00000-of-00001: cannot read variable",
          "truncated or corrupt")


def test_checkpoint_truncated_index(google_checkpoint, tmp_path):
  from bert_keras import interop
  directory = _copy(google_checkpoint, tmp_path)
  _truncate(os.path.join(directory, "bert_model.ckpt.index"), lambda n: 20)
  B.raises(lambda: interop.load_encoder(directory), "bert_model.ckpt.index: cannot read the checkpoint")


def test_checkpoint_vocab_mismatch(google_checkpoint, tmp_path):
  from bert_keras import interop
  directory = _copy(google_checkpoint, tmp_path)
  B.write_vocab(directory)
  B.raises(lambda: interop.load_encoder(directory), "vocab.txt: 20 vocabulary entries",
          "bert_config.json says vocab_size=57")


@pytest.mark.parametrize("change, needle", [
    ({"hidden_size": 34}, "hidden_size=34 is not divisible by num_heads=4"),
    ({"hidden_act": "lambda x: x"}, "hidden_act='lambda x: x' is not supported"),
    ({"num_hidden_layers": None}, "missing key(s) ['num_hidden_layers']"),
])
def test_checkpoint_config_errors(google_checkpoint, tmp_path, change, needle):
  from bert_keras import interop
  directory = _copy(google_checkpoint, tmp_path)
  path = os.path.join(directory, "bert_config.json")
  with open(path, encoding="utf-8") as f:
    values = json.load(f)
  values.update(change)
  B.write(path, json.dumps({k: v for k, v in values.items() if v is not None}))
  B.raises(lambda: interop.load_encoder(directory), "bert_config.json", needle)


def test_checkpoint_shape_mismatch(google_checkpoint, tmp_path):
  """A config that disagrees with the tensors (intermediate_size) names the variable and both shapes."""
  from bert_keras import interop
  directory = _copy(google_checkpoint, tmp_path)
  path = os.path.join(directory, "bert_config.json")
  with open(path, encoding="utf-8") as f:
    values = json.load(f)
  B.write(path, json.dumps(dict(values, intermediate_size=64)))
  message = B.raises(lambda: interop.load_encoder(directory), "intermediate")
  assert "48" in message and "64" in message, message
