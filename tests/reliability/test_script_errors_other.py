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
  B.user_error_line(B.run_script("create_pretraining_data", f"--input_files={missing}",
                                 "--input_format=bert_text", f"--output_dir={root}/examples",
                                 f"--vocab_file={B.write_vocab(root)}"),
                    missing, "no input file matches")


def test_learn_vocab_missing_input(root):
  missing = os.path.join(root, "none.txt")
  B.user_error_line(B.run_script("learn_vocab", f"--input_files={missing}",
                                 "--input_format=bert_text", f"--output_dir={root}/vocab"),
                    missing, "no input file matches")


def test_train_bpe_missing_input(root):
  missing = os.path.join(root, "none.txt")
  B.user_error_line(B.run_script("train_bpe", f"--output_dir={root}/bpe", "--corpora=",
                                 f"--input_files={missing}"), missing, "no such input file")


def test_run_pretraining_gpt_missing_bpe_model(root):
  missing = os.path.join(root, "none.model")
  B.user_error_line(B.run_script("run_pretraining", "--model=gpt_nano", f"--bpe_model={missing}",
                                 "--corpora=lee_background", f"--output_dir={root}/gpt"), missing,
                    "no such SentencePiece model file")


def test_run_pretraining_gpt_refuses_another_objective(root):
  B.user_error_line(B.run_script("run_pretraining", "--model=gpt_tiny", "--objective=mlm_nsp",
                                 f"--output_dir={root}/gpt_mlm"), "--objective=mlm_nsp",
                    "left-to-right LM")


def test_run_finetuning_gpt_task_from_a_directory_without_a_decoder(root):
  empty = os.path.join(root, "no_gpt")
  os.makedirs(empty, exist_ok=True)
  B.user_error_line(B.run_script("run_finetuning", "--task=gpt/polarity",
                                 f"--init_checkpoint={empty}", f"--output_dir={root}/gpt_ft"),
                    os.path.join(empty, "decoder.keras"), "run_pretraining.py --model=gpt_*")


def test_run_ablation_unknown_preset(root):
  B.user_error_line(B.run_script(B.ABLATION, "--preset=huge", f"--output_dir={root}/ab"),
                    "unknown recipe 'huge': no configs/studies/huge.json", "'small'")


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


def test_learn_vocab_vocab_size_without_room(root):
  corpus = B.write(os.path.join(root, "vocab_corpus.txt"), "the film was good.\nit was bad.\n")
  B.user_error_line(B.run_script("learn_vocab", "--vocab_size=-5", f"--input_files={corpus}",
                                 "--input_format=lines", f"--output_dir={root}/vocab_neg"),
                    "vocab_size=-5", "reserved tokens")


@pytest.mark.slow
def test_learn_vocab_empty_corpus_in_worker_processes(root):
  """The error is raised in a Beam worker process: it must still end the run as one `error:` line
  with status 2. (Beam itself logs the worker's traceback on stderr before that; the main process
  must not add its own RuntimeError traceback.)"""
  empty = B.write(os.path.join(root, "empty_corpus.txt"), "")
  result = B.run_script("learn_vocab", f"--input_files={empty}", "--input_format=lines",
                        "--vocab_size=200", f"--output_dir={root}/vocab_empty",
                        "--direct_running_mode=multi_processing", "--direct_num_workers=1")
  stderr = result.stderr.strip()
  assert result.returncode == 2 and "RuntimeError" not in stderr, stderr[-3000:]
  last = stderr.splitlines()[-1]
  assert last.startswith("error: no words in the corpus ") and empty in last, last
  assert not os.path.exists(os.path.join(root, "vocab_empty", "vocab.txt"))


def test_create_pretraining_data_vocab_without_unk(root):
  vocab = B.write(os.path.join(root, "no_unk", "vocab.txt"), "[CLS]\n[SEP]\n[MASK]\n")
  B.user_error_line(B.run_script("create_pretraining_data", f"--vocab_file={vocab}",
                                 f"--output_dir={root}/examples_no_unk"), vocab, "[UNK]")


def test_run_ablation_seeds_not_integers(root):
  B.user_error_line(B.run_script(B.ABLATION, "--seeds=a,b", f"--output_dir={root}/ab_seeds"),
                    "--seeds=a,b", "integers")
