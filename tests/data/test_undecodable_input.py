"""Corpus lines that are not UTF-8 are dropped, and the runs say so: learn_vocab logs a warning and
records the count and first file:line in learn_vocab_config.json, create_pretraining_data in its
summary, and a corpus left without words or instances names them in its error. Also the bound
max_predictions_per_seq <= max_seq_length of the pretraining data config."""

import json
import logging
import os

import pytest

from bert_keras import resources
from bert_keras.data import pretraining_data_pipeline, wordpiece_vocab_pipeline
from bert_keras.configs.pretraining_data import PretrainingDataConfig
from bert_keras.errors import UserError

IN_MEMORY = ["--direct_running_mode=in_memory", "--direct_num_workers=1"]


def _write(path, data: bytes) -> str:
  with open(path, "wb") as f:
    f.write(data)
  return str(path)


def _learn(input_file, output_dir, input_format="bert_text"):
  return wordpiece_vocab_pipeline.run([f"--input_files={input_file}", f"--input_format={input_format}",
                                       f"--output_dir={output_dir}", "--vocab_size=200"] + IN_MEMORY)


def test_learn_vocab_reports_dropped_lines_in_a_warning_and_its_config(tmp_path, caplog):
  corpus = _write(tmp_path / "c.txt", b"the film \xff\xfe was good.\nit was bad.\n\n")
  with caplog.at_level(logging.WARNING):
    vocab = _learn(corpus, tmp_path / "v")
  config = json.load(open(os.path.join(os.path.dirname(vocab), "learn_vocab_config.json")))
  assert config["dropped"] == {"undecodable_line": 1}
  assert config["first_dropped"] == {"undecodable_line": f"{corpus}:1"}
  assert config["vocab_tokens"] == len(open(vocab, encoding="utf-8").read().splitlines())
  assert f"1 line was not valid UTF-8 (first: {corpus}:1)" in caplog.text


def test_first_dropped_line_is_the_first_by_file_then_line(tmp_path):
  _write(tmp_path / "b.txt", b"bad \xff one\nSome words here.\n")
  _write(tmp_path / "a.txt", b"Good words here.\nbad \xfe two\nbad \xfe three\n")
  vocab = _learn(str(tmp_path / "*.txt"), tmp_path / "v", input_format="lines")
  config = json.load(open(os.path.join(os.path.dirname(vocab), "learn_vocab_config.json")))
  assert config["dropped"] == {"undecodable_line": 3}
  assert config["first_dropped"] == {"undecodable_line": f"{tmp_path / 'a.txt'}:2"}


def test_learn_vocab_on_a_corpus_of_only_undecodable_lines_says_so(tmp_path):
  corpus = _write(tmp_path / "latin1.txt", b"caf\xe9\n\n\xff\xfe\n")
  with pytest.raises(UserError, match=(r"^no words in the corpus .*latin1.txt: cannot learn a vocabulary; "
                                       rf"2 lines were not valid UTF-8 \(first: {corpus}:1\)$")):
    _learn(corpus, tmp_path / "v")
  assert not os.path.exists(tmp_path / "v" / "vocab.txt")


def test_create_pretraining_data_on_only_undecodable_lines_says_so(tmp_path):
  corpus = _write(tmp_path / "latin1.txt", b"caf\xe9 one.\ncaf\xe9 two.\n\n\xff\n")
  with pytest.raises(UserError, match=(r"^no pretraining instances from .*: 0 documents read.*; "
                                       rf"3 lines were not valid UTF-8 \(first: {corpus}:1\)$")):
    pretraining_data_pipeline.run([f"--input_files={corpus}", "--input_format=bert_text",
                                   f"--output_dir={tmp_path / 'out'}",
                                   f"--vocab_file={resources.uncased_vocab_path()}"] + IN_MEMORY)


def test_create_pretraining_data_summary_names_the_first_dropped_line(tmp_path):
  good = "".join(f"Sentence number {i} of the document is here.\n" for i in range(6))
  corpus = _write(tmp_path / "c.txt", (good + "\n" + "bad \xe9 line.\n").encode("latin-1") + good.encode())
  summary = pretraining_data_pipeline.run([f"--input_files={corpus}", "--input_format=bert_text",
                                           f"--output_dir={tmp_path / 'out'}", "--max_seq_length=32",
                                           "--dupe_factor=1", "--num_shards=1",
                                           f"--vocab_file={resources.uncased_vocab_path()}"] + IN_MEMORY)
  assert summary["instances"] > 0 and summary["dropped"]["undecodable_line"] == 1
  assert summary["first_dropped"] == {"undecodable_line": f"{corpus}:8"}


def test_max_predictions_per_seq_above_max_seq_length_is_refused():
  with pytest.raises(UserError, match=r"max_predictions_per_seq=40 must be in \[1, max_seq_length=16\]"):
    PretrainingDataConfig(max_seq_length=16, max_predictions_per_seq=40)
  assert PretrainingDataConfig(max_seq_length=16, max_predictions_per_seq=16).max_predictions_per_seq == 16
  assert PretrainingDataConfig(max_seq_length=16).max_predictions_per_seq <= 16


def test_the_flag_and_the_pretraining_examples_component_are_refused_before_reading(tmp_path):
  """Both build a PretrainingDataConfig before touching the corpus, so both get its check."""
  from bert_keras.orchestration.standard_artifacts import Corpus, Examples, Vocabulary
  from components.pretraining_examples.executor import PretrainingExamplesExecutor

  known, _ = pretraining_data_pipeline.parse_args([f"--output_dir={tmp_path / 'out'}", "--max_seq_length=16",
                                                   "--max_predictions_per_seq=40"])
  with pytest.raises(UserError, match=r"max_predictions_per_seq=40 must be in \[1, max_seq_length=16\]"):
    pretraining_data_pipeline.config_from_args(known)
  parameters = dict(max_seq_length=16, max_predictions_per_seq=40, masked_lm_prob=0.15, short_seq_prob=0.1,
                    dupe_factor=1, seed=1, num_shards=1)
  examples = Examples(str(tmp_path / "examples"))
  with pytest.raises(UserError, match=r"max_predictions_per_seq=40 must be in \[1, max_seq_length=16\]"):
    PretrainingExamplesExecutor().run({"corpus": Corpus(str(tmp_path / "corpus")),
                                       "vocabulary": Vocabulary(str(tmp_path / "vocabulary"))},
                                      {"examples": examples}, parameters)
  assert not os.path.exists(examples.uri)


def test_pretraining_examples_component_on_only_undecodable_lines_says_so(tmp_path):
  """The component's no-instance error (the script's) names the undecodable lines too."""
  import shutil  # pylint: disable=import-outside-toplevel

  from bert_keras.orchestration.base_executor import ExecutionContext  # pylint: disable=import-outside-toplevel
  from bert_keras.orchestration.standard_artifacts import Corpus, Examples, Vocabulary  # pylint: disable=import-outside-toplevel
  from components.pretraining_examples.executor import PretrainingExamplesExecutor  # pylint: disable=import-outside-toplevel

  os.makedirs(tmp_path / "corpus")
  os.makedirs(tmp_path / "vocabulary")
  first = _write(tmp_path / "corpus" / "corpus-0.txt", b"caf\xe9 one.\ncaf\xe9 two.\n\n\xff\n")
  shutil.copyfile(resources.uncased_vocab_path(), tmp_path / "vocabulary" / "vocab.txt")
  parameters = dict(max_seq_length=32, max_predictions_per_seq=5, masked_lm_prob=0.15,
                    short_seq_prob=0.1, dupe_factor=1, seed=1, num_shards=1)
  executor = PretrainingExamplesExecutor(ExecutionContext(beam_pipeline_args=tuple(IN_MEMORY)))
  with pytest.raises(UserError, match=(r"^no pretraining instances from .*; 3 lines were not "
                                       rf"valid UTF-8 \(first: {first}:1\)$")):
    executor.run({"corpus": Corpus(str(tmp_path / "corpus")),
                  "vocabulary": Vocabulary(str(tmp_path / "vocabulary"))},
                 {"examples": Examples(str(tmp_path / "examples"))}, parameters)
