"""The corpus, vocabulary, GPT and ablation scripts under bad input: exit status 2, one `error:` line
naming the file or value, no traceback. Also checks that every script in scripts/ has a case here or
in test_script_errors_bert.py."""

import os

import pytest

from tests.reliability import bad_inputs as B


@pytest.fixture(scope="module")
def root(tmp_path_factory):
  return str(tmp_path_factory.mktemp("bad_inputs"))


def test_create_pretraining_data_missing_input(root):
  missing = os.path.join(root, "no_corpus_*.txt")
  B.user_error_line(B.run_script("create_pretraining_data", f"--input_file={missing}",
                                 "--input_format=bert_text", f"--output_dir={root}/examples",
                                 f"--vocab_file={B.write_vocab(root)}"),
                    missing, "no input file matches")


def test_learn_vocab_missing_input(root):
  missing = os.path.join(root, "none.txt")
  B.user_error_line(B.run_script("learn_vocab", f"--input_file={missing}",
                                 "--input_format=bert_text", f"--output_dir={root}/vocab"),
                    missing, "no input file matches")


def test_train_bpe_missing_input(root):
  missing = os.path.join(root, "none.txt")
  B.user_error_line(B.run_script("train_bpe", f"--output={root}/bpe.model", "--corpora=",
                                 f"--input_files={missing}"), missing, "no such input file")


def test_run_gpt_pretraining_missing_bpe_model(root):
  missing = os.path.join(root, "none.model")
  B.user_error_line(B.run_script("run_gpt_pretraining", f"--bpe_model={missing}",
                                 f"--output_dir={root}/gpt"), missing,
                    "no such SentencePiece model file")


def test_run_gpt_finetuning_missing_pretrained_dir(root):
  missing = os.path.join(root, "no_gpt")
  B.user_error_line(B.run_script("run_gpt_finetuning", f"--pretrained_dir={missing}",
                                 f"--output_dir={root}/gpt_ft"), missing, "bpe.model")


def test_run_ablation_unknown_preset(root):
  B.user_error_line(B.run_script("run_ablation", "--preset=huge", f"--output_dir={root}/ab"),
                    "unknown study preset 'huge'", "'small'")


def test_every_script_has_a_bad_input_case():
  here = os.path.dirname(os.path.abspath(__file__))
  covered = set()
  for name in ("test_script_errors_bert.py", "test_script_errors_other.py"):
    with open(os.path.join(here, name), encoding="utf-8") as f:
      text = f.read()
    covered |= {s for s in os.listdir(B.SCRIPTS) if s.endswith(".py")
                and (f'"{s[:-3]}"' in text or f"_{s[:-3]}" in text)}
  scripts = {s for s in os.listdir(B.SCRIPTS) if s.endswith(".py")}
  assert scripts - covered == set(), f"scripts without a bad-input test: {sorted(scripts - covered)}"
